import AdminCommands
import LinkRuntime
import Trace
import WorkoutModel

/// What an admin verb produced: output for the person (text, and JSON for `--json`), or a refusal
/// to report (phonectl/watchctl exit 1).
package enum AdminOutcome {
    case output(text: String, json: String)
    case refused(String)

    /// A plain acknowledgement.
    package static let done = AdminOutcome.output(text: "ok", json: json(AdminReply.Acknowledged()))

    /// The wire response for this outcome.
    package var response: AdminResponse {
        switch self {
        case .output(let text, let json): return .ok(text: text, json: json)
        case .refused(let message): return .refused(message)
        }
    }

    /// Serves one admin command: runs `execute` on it, turns any error it throws into a refusal
    /// carrying the error's description (the CLI exits 1 with it), and logs refusals.
    package static func serve<Command: AdminCommand>(
        _ command: Command, logger: Logger, _ execute: (Command) throws -> AdminOutcome
    ) -> AdminResponse {
        let outcome: AdminOutcome
        do {
            outcome = try execute(command)
        } catch {
            outcome = .refused("\(error)")
        }
        if case .refused(let message) = outcome {
            logger.notice(
                "refused admin request", ["command": "\(command)", "reason": message],
                component: "admin")
        }
        return outcome.response
    }

    /// `trace`: the journal's events the query selects, in the form the CLI prints.
    package static func trace(_ query: TraceQuery, stateDirectory: String) -> AdminOutcome {
        let journal = EventJournal.read(stateDirectory: stateDirectory)
        let events = query.filter(now: EventJournal.wallMicros()).apply(journal)
        if query.json { return .output(text: "", json: events.map { $0.jsonLine() }.joined(separator: "\n")) }
        return .output(text: lines(events.map(\.humanLine), empty: "no events"), json: "")
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
