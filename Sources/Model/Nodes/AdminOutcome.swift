import AdminCommands
import WorkoutModel

/// One admin request on its connection, numbered by the shell.
package struct AdminRequestID: Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package var description: String { "admin#\(rawValue)" }
}

/// Why a node refuses an admin command, in the sentence the CLI prints (`AdminOutcome.serve`
/// makes it the refusal). The node's own error: the command line's `UsageError` belongs to the
/// CLIs' parsing, not to a decision about the node's state.
package struct AdminRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension WorkoutDocument {
    /// `logIndex(exercise:)`, refused as an `AdminRefusal` with the same sentence.
    func refusingLogIndex(exercise: Int) throws(AdminRefusal) -> Int {
        do { return try logIndex(exercise: exercise) } catch { throw AdminRefusal("\(error)") }
    }

    /// `setPosition(exercise:set:)`, refused as an `AdminRefusal` with the same sentence.
    func refusingSetPosition(exercise: Int, set: Int) throws(AdminRefusal) -> (logIndex: Int, setIndex: Int) {
        do { return try setPosition(exercise: exercise, set: set) } catch { throw AdminRefusal("\(error)") }
    }
}

/// What an admin verb produced: output for the person (text, and JSON for `--json`), or a refusal
/// to report (phonectl/watchctl exit 1).
package enum AdminOutcome: Equatable, Sendable {
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

    /// Runs `execute` on one admin command, turning any error it throws into a refusal carrying the
    /// error's description (the CLI exits 1 with it). `NeedsReads` is passed on: the node asks its
    /// shell for the documents and serves the command again.
    package static func serve<Command: AdminCommand>(
        _ command: Command, _ execute: (Command) throws -> AdminOutcome
    ) throws(NeedsReads) -> AdminOutcome {
        do {
            return try execute(command)
        } catch let needs as NeedsReads {
            throw needs
        } catch {
            return .refused("\(error)")
        }
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
