import ArgumentParsing
import WorkoutModel

/// What an admin verb produced: output for the person (text, and JSON for `--json`), or a refusal
/// to report (phonectl/watchctl exit 1).
package enum AdminOutcome {
    case output(text: String, json: String)
    case refused(String)

    /// A plain acknowledgement.
    package static let done = AdminOutcome.output(text: "ok", json: "{\"ok\":true}")

    /// The wire response for this outcome.
    package var response: AdminResponse {
        switch self {
        case .output(let text, let json): return .ok(text: text, json: json)
        case .refused(let message): return .refused(message)
        }
    }

    /// Serves one admin request: runs `execute` on the command the CLI parsed, turns any error it
    /// throws into a refusal carrying the error's description (the CLI exits 1 with it), and logs
    /// refusals.
    package static func serve(
        _ request: AdminRequest, logger: Logger, _ execute: (ParsedCommand) throws -> AdminOutcome
    ) -> AdminResponse {
        let outcome: AdminOutcome
        do {
            outcome = try execute(request.parsedCommand)
        } catch {
            outcome = .refused("\(error)")
        }
        if case .refused(let message) = outcome {
            logger.notice(
                "refused admin request", ["command": request.command.joined(separator: " "), "reason": message],
                component: "admin")
        }
        return outcome.response
    }

    /// Text lines, or `empty` when there are none.
    package static func lines(_ lines: [String], empty: String) -> String {
        lines.isEmpty ? empty : lines.joined(separator: "\n")
    }

    /// Compact JSON with sorted keys, as every `--json` prints.
    package static func json(_ value: some Encodable) -> String {
        String(decoding: DocumentCoder.encodeCompact(value), as: UTF8.self)
    }
}

extension ParsedCommand {
    /// The named value as a document ID; a usage error naming it otherwise.
    package func documentID(_ name: String) throws(UsageError) -> DocumentID {
        let text = try string(name)
        guard let id = DocumentID(text) else { throw UsageError("\(name) must be a UUID, got \(text.debugDescription)") }
        return id
    }

    /// The 1-based EXERCISE value as a log index of `run`.
    package func exerciseIndex(in run: WorkoutDocument, name: String = "exercise") throws(UsageError) -> Int {
        let exercise = try integer(name)
        guard (1...run.logs.count).contains(exercise) else {
            throw UsageError("run \(run.id) has \(run.logs.count) exercises; no exercise \(exercise)")
        }
        return exercise - 1
    }

    /// The 1-based EXERCISE and SET values as indexes into `run`.
    package func setPosition(in run: WorkoutDocument) throws(UsageError) -> (logIndex: Int, setIndex: Int) {
        let logIndex = try exerciseIndex(in: run)
        let set = try integer("set")
        guard (1...run.logs[logIndex].sets.count).contains(set) else {
            throw UsageError("exercise \(logIndex + 1) has \(run.logs[logIndex].sets.count) sets; no set \(set)")
        }
        return (logIndex, set - 1)
    }
}
