import ArgumentParsing

/// The `file …` verbs, the same on phonectl and watchctl: `transferFile` to the other daemon, its
/// outstanding transfers, cancel, and the files this daemon received (see `FileCommand.spec`).
package enum FileCommand: Codable, Sendable, Equatable {
    /// Queue the file at `path` (absolute: the daemon opens it) with `metadata` (a JSON object).
    case send(path: String, metadata: String)
    /// `outstandingFileTransfers`, with progress.
    case list
    case cancel(sequence: UInt64)
    /// The files received lately and where the daemon put them.
    case received

    /// The wire names of the cases, spelt out so an unknown one is answered with the list
    /// (`AdminCommand.verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case send, list, cancel, received
    }

    static var verbs: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// The `file` group.
    package static let spec = CommandSpec(
        name: "file", abstract: "Files to the other daemon (transferFile): send, list, cancel, received.",
        subcommands: [
            CommandSpec(
                name: "send",
                abstract: "Queue a file: copied into the durable file outbox, sent in chunks, resumed after restarts.",
                arguments: [ArgumentSpec("path", help: "The file, as an absolute path (the daemon reads it).")],
                options: [
                    OptionSpec(
                        "metadata", help: "A JSON object of strings, numbers and booleans (default {}).",
                        valueName: "json")
                ]),
            CommandSpec(
                name: "list", abstract: "Outstanding file transfers with their progress.", flags: [FlagSpec.json]),
            CommandSpec(
                name: "cancel", abstract: "Cancel an outstanding file transfer.",
                arguments: [ArgumentSpec("sequence", help: "The transfer's sequence number.")]),
            CommandSpec(
                name: "received", abstract: "Files received lately (the newest 32) and where they were put.",
                flags: [FlagSpec.json]),
        ])

    init(_ command: ParsedCommand) throws(UsageError) {
        switch command.path {
        case ["file", "send"]:
            self = .send(path: try command.string("path"), metadata: command.optionalString("metadata") ?? "{}")
        case ["file", "list"]: self = .list
        case ["file", "cancel"]:
            let text = try command.string("sequence")
            guard let sequence = UInt64(text) else { throw UsageError("sequence must be a number, got \(text)") }
            self = .cancel(sequence: sequence)
        case ["file", "received"]: self = .received
        default: throw UsageError.unknownCommand(command.path)
        }
        try validate()
    }

    package func validate() throws(UsageError) {
        if case .send(let path, _) = self, !path.hasPrefix("/") {
            throw UsageError("give the file as an absolute path (the daemon opens it): \(path)")
        }
    }
}

extension AdminReply {
    /// `file send`, `export`: the file's sequence in the file outbox and its size.
    package struct FileQueued: Codable, Equatable, Sendable {
        package var sequence: UInt64
        package var bytes: UInt64
        package init(sequence: UInt64, bytes: UInt64) {
            self.sequence = sequence
            self.bytes = bytes
        }
    }

    /// `file cancel`: the cancelled transfer's sequence.
    package struct FileCancelled: Codable, Equatable, Sendable {
        package var cancelled: UInt64
        package init(cancelled: UInt64) { self.cancelled = cancelled }
    }

    /// One outstanding file transfer: `acknowledged` of `bytes` are at the receiver (`progress`).
    package struct FileProgress: Codable, Equatable, Sendable {
        package var sequence: UInt64
        package var bytes: UInt64
        package var acknowledged: UInt64
        package var progress: Double
        package var metadata: String
        package init(sequence: UInt64, bytes: UInt64, acknowledged: UInt64, metadata: String) {
            self.sequence = sequence
            self.bytes = bytes
            self.acknowledged = acknowledged
            progress = bytes == 0 ? 0 : Double(acknowledged) / Double(bytes)
            self.metadata = metadata
        }
    }

    /// One received file: its transfer key, size, metadata, and where the app put it (nil: dropped).
    package struct FileReceived: Codable, Equatable, Sendable {
        package var transfer: String
        package var bytes: UInt64
        package var metadata: String
        @ExplicitNull package var storedAs: String?
        package var receivedAt: String
        package init(transfer: String, bytes: UInt64, metadata: String, storedAs: String?, receivedAt: String) {
            self.transfer = transfer
            self.bytes = bytes
            self.metadata = metadata
            self.storedAs = storedAs
            self.receivedAt = receivedAt
        }
    }
}
