import AdminCommands
import LinkProtocol
import WorkoutModel

/// The app side of `transferFile`, the same in both nodes: the `file` verbs, their answers from the
/// link, the files received (where each went), and the sender's `didFinish`. Where a received file
/// goes is the node's decision (`PhoneNode` keeps a run's samples next to it); the rest is here.
package struct FileTransfers: Sendable {
    /// How many received files `file received` lists.
    package static let keptCount = 32

    package private(set) var received: [AdminReply.FileReceived] = []
    package private(set) var finished = 0

    package init() {}

    /// Serves a `file` verb: `send` and `cancel` go to the link and are answered with its result;
    /// `list` needs the link's outstanding files (`NeedsReads`).
    func serve(_ command: FileCommand, request: AdminRequestID, reads: Reads) throws(NeedsReads) -> [NodeAction] {
        switch command {
        case .send(let path, let metadata):
            if let refusal = FileMetadata.refusal(metadata) {
                return Self.refuse(request, "file send", "payloadUnsupportedTypes: \(refusal)")
            }
            return [.link(.transferFile(.file(path: path), metadata: metadata, request))]
        case .cancel(let sequence):
            return [.link(.cancelFile(sequence: sequence, request))]
        case .list:
            guard let files = reads.outstandingFiles else { throw NeedsReads(outstandingFiles: true) }
            let listed = files.map {
                AdminReply.FileProgress(
                    sequence: $0.sequence, bytes: $0.size, acknowledged: $0.acknowledged, metadata: $0.metadata)
            }
            let text = listed.map { file in
                "\(file.sequence)  \(file.acknowledged)/\(file.bytes) bytes (\(Int((file.progress * 100).rounded(.down)))%)  \(file.metadata)"
            }
            let outcome = AdminOutcome.output(
                text: AdminOutcome.lines(text, empty: "no outstanding file transfers"), json: AdminOutcome.json(listed))
            return [.reply(request, outcome.response)]
        case .received:
            let text = received.map { file in
                "\(file.receivedAt)  \(file.transfer)  \(file.bytes) bytes  \(file.storedAs ?? "(dropped)")  \(file.metadata)"
            }
            let outcome = AdminOutcome.output(
                text: AdminOutcome.lines(text, empty: "no files received"), json: AdminOutcome.json(received))
            return [.reply(request, outcome.response)]
        }
    }

    /// The link took the file (or refused it): request N's reply.
    func queued(_ request: AdminRequestID, _ result: Result<OutboundFile, ReadFailure>) -> [NodeAction] {
        switch result {
        case .success(let file):
            let reply = AdminReply.FileQueued(sequence: file.sequence, bytes: file.size)
            let outcome = AdminOutcome.output(
                text: "queued file \(file.sequence) (\(file.size) bytes)", json: AdminOutcome.json(reply))
            return [
                .log(
                    LogLine(
                        .info, "file", "file queued", [("sequence", "\(file.sequence)"), ("bytes", "\(file.size)")])),
                .reply(request, outcome.response),
            ]
        case .failure(let failure):
            return Self.refuse(request, "file send", failure.description)
        }
    }

    /// `file cancel` ended.
    func cancelEnded(_ request: AdminRequestID, sequence: UInt64, _ failure: ReadFailure?) -> [NodeAction] {
        if let failure { return Self.refuse(request, "file cancel \(sequence)", failure.description) }
        let outcome = AdminOutcome.output(
            text: "cancelled file \(sequence)", json: AdminOutcome.json(AdminReply.FileCancelled(cancelled: sequence)))
        return [.reply(request, outcome.response)]
    }

    /// A received file and where the node put it (nil: left in the inbox, so deleted): recorded,
    /// then reported processed to the link.
    mutating func received(_ file: ReceivedFile, storedAs: String?, now: Timestamp) -> [NodeAction] {
        received.append(
            AdminReply.FileReceived(
                transfer: "\(file.key)", bytes: file.size, metadata: file.metadata, storedAs: storedAs,
                receivedAt: now.iso8601))
        if received.count > Self.keptCount { received.removeFirst(received.count - Self.keptCount) }
        return [
            .log(
                LogLine(
                    .info, "file", "file received",
                    [("transfer", "\(file.key)"), ("bytes", "\(file.size)"), ("storedAs", storedAs ?? "-")])),
            .link(.fileProcessed(file.key)),
        ]
    }

    /// `didFinish` of a file this side sent.
    mutating func finished(sequence: UInt64, _ error: LinkError?) -> [NodeAction] {
        finished += 1
        let outcome = error.map { "\($0)" } ?? "delivered"
        let level: LogLine.Level = error == nil ? .info : .notice
        return [
            .log(LogLine(level, "file", "file transfer finished", [("sequence", "\(sequence)"), ("outcome", outcome)]))
        ]
    }

    /// The name a received file is kept under in `<state>/received-files`.
    static func keptName(_ key: TransferKey) -> String { "\(key.queue)-\(key.sequence)" }

    private static func refuse(_ request: AdminRequestID, _ command: String, _ reason: String) -> [NodeAction] {
        [
            .log(LogLine(.notice, "admin", "refused admin request", [("command", command), ("reason", reason)])),
            .reply(request, AdminOutcome.refused(reason).response),
        ]
    }
}
