import ArgumentParsing
import FoundationEssentials
import WorkoutModel

/// A command a CLI sends to its daemon: one `Codable` enum per daemon (`PhoneCommand`,
/// `WatchCommand`). The CLI builds it from its grammar's parse; the daemon decodes the same enum and
/// switches over it exhaustively, so a verb the daemon does not handle does not compile.
package protocol AdminCommand: Codable, Sendable, Equatable {
    /// The command `parsed` selects. Throws when a value does not convert (not a UUID, not
    /// NAME:SETSxREPS@WEIGHT…): the CLI reports it without asking the daemon.
    init(_ parsed: ParsedCommand) throws(UsageError)

    /// Checks what the type alone cannot (`--limit` at least 1, a payload's size, a bound that
    /// parses): the CLI's parse ends with it, and `AdminWire.decode` runs it on every request, so a
    /// request written by hand is held to what the CLI would have sent.
    func validate() throws(UsageError)

    /// The `trace` verb both CLIs have (the enum case), which `trace --follow` sends again each round.
    static func trace(_ query: TraceQuery) -> Self

    /// The daemon that serves these commands (`phoned`, `watchd`): every response names it, so a CLI
    /// pointed at the other daemon's socket says so instead of printing that daemon's answer.
    static var daemon: String { get }

    /// The command `bytes` spell when the hand reader takes them (`AdminRequestReader`); nil sends
    /// `AdminWire.decode` to `JSONDecoder`.
    static func readByHand(_ bytes: UnsafeBufferPointer<UInt8>) -> Self?

    /// The verbs each enum of a request takes, by the path to it (`""` for the request's own verb,
    /// `"set._0"` for a set verb): the answer to a request with an unknown or missing verb lists them.
    static var verbs: [String: [String]] { get }
}

extension AdminCommand {
    package static func readByHand(_ bytes: UnsafeBufferPointer<UInt8>) -> Self? { nil }

    package static var verbs: [String: [String]] { [:] }
}

/// Why request bytes are not a command (the daemon answers with an `error` response).
package struct AdminRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, without Swift type names where possible.
    package let description: String
}

/// The admin wire format (docs/PROTOCOL.md "Admin socket"): one JSON-encoded command per
/// connection, answered by one JSON `AdminResponse`.
package enum AdminWire {
    /// The request bytes of `command`.
    package static func encode(_ command: some AdminCommand) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Commands hold strings, numbers, booleans and IDs only: encoding cannot fail.
        return (try? encoder.encode(command)).map(Array.init) ?? []
    }

    /// The one decoder of admin requests (what a fuzz target drives): bytes → command, or why not.
    package static func decode<Command: AdminCommand>(
        _ bytes: [UInt8], as type: Command.Type = Command.self
    ) -> Result<Command, AdminRequestError> {
        let command: Command
        if let read = bytes.withUnsafeBufferPointer(Command.readByHand) {
            command = read
        } else {
            do {
                command = try JSONDecoder().decode(Command.self, from: Data(bytes))
            } catch {
                let problem = AdminRequestShape.problem(error, in: bytes, verbs: Command.verbs) ?? describe(error)
                return .failure(AdminRequestError(description: "malformed admin request: \(problem)"))
            }
            // `JSONDecoder` passes over a member it does not know: a misspelt optional field would
            // otherwise read as "not given".
            if let problem = AdminRequestShape.unknownMember(of: command, in: bytes, verbs: Command.verbs) {
                return .failure(AdminRequestError(description: "malformed admin request: \(problem)"))
            }
        }
        do throws(UsageError) {
            try command.validate()
        } catch {
            return .failure(AdminRequestError(description: "invalid admin request: \(error.message)"))
        }
        return .success(command)
    }

    /// What `hand` reads from `bytes`, else what `JSONDecoder` decodes (or its exact error): the
    /// requests and replies a loop sends are read by hand, anything else the reader leaves.
    package static func read<Value: Decodable>(
        _ bytes: [UInt8], byHand hand: (UnsafeBufferPointer<UInt8>) -> Value?
    ) throws -> Value {
        if let value = bytes.withUnsafeBufferPointer(hand) { return value }
        return try JSONDecoder().decode(Value.self, from: Data(bytes))
    }

    /// A decoding error's explanation without Swift type names where possible.
    package static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing field \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "field \"\(field)\": \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}

extension ParsedCommand {
    /// The named value as a document ID; a usage error naming it otherwise.
    package func documentID(_ name: String) throws(UsageError) -> DocumentID {
        let text = try string(name)
        guard let id = DocumentID(text) else {
            throw UsageError("\(name) must be a UUID, got \(text.debugDescription)")
        }
        return id
    }

    /// The named value as a document ID, or nil when it was not given.
    package func optionalDocumentID(_ name: String) throws(UsageError) -> DocumentID? {
        optionalString(name) == nil ? nil : try documentID(name)
    }
}
