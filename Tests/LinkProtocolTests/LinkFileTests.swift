import LinkProtocol
import Testing

/// transferFile in the link engine: chunked under the frame limit, windowed, resumed from what the
/// receiver holds, digest-checked, delivered to the inbox and finished once the app processed it.
@Suite("Link engine: file transfers")
struct LinkFileTests {
    static let watchFiles = InstanceID(bytes: [UInt8](repeating: 0xF1, count: 16))!
    static let phoneFiles = InstanceID(bytes: [UInt8](repeating: 0xF2, count: 16))!

    static func pair(
        phonePartials: [TransferKey: UInt64] = [:], phoneInbox: Set<TransferKey> = [],
        phoneMarks: [InstanceID: QueueMark] = [:], watchFiles: [OutboundFile] = [],
        configure: (inout LinkConfiguration) -> Void = { _ in }
    ) -> LinkPair {
        LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, transferMarks: phoneMarks, outboxQueue: LinkPair.phoneQueue,
                fileQueue: Self.phoneFiles, inboundPartials: phonePartials, inboxFiles: phoneInbox),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue, fileQueue: Self.watchFiles,
                pendingFiles: watchFiles),
            configure: configure)
    }

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    static let key = TransferKey(queue: watchFiles, sequence: 1)

    private func chunks(_ pair: LinkPair, _ side: LinkPair.Side) -> [LinkFrame] {
        pair.framesSent[side]!.filter { $0.kind == .fileChunk }
    }

    @Test(
        "a file goes in chunks, is verified and put in the inbox; processed, the sender finishes it and the mark holds")
    func roundTrip() {
        var pair = Self.pair()
        pair.start()
        let file = Self.bytes(300_000)
        pair.queueFile(.watch, sequence: 1, file, metadata: "{\"kind\":\"test\"}")
        #expect(chunks(pair, .watch).count == 5, "64 KiB chunks")
        #expect(pair.inbox[.phone]?[Self.key] == file)
        #expect(
            pair.notifications(.phone).contains(
                .fileReceived(ReceivedFile(key: Self.key, size: 300_000, metadata: "{\"kind\":\"test\"}"))))
        #expect(pair.phone.hasContentPending)
        #expect(pair.watch.outstandingFiles.map(\.acknowledged) == [300_000])
        pair.handle(.phone, .fileProcessed(Self.key))
        #expect(pair.inbox[.phone]?[Self.key] == nil, "what the app leaves in the inbox is deleted")
        #expect(pair.marked(.phone, Self.key))
        #expect(pair.notifications(.watch).contains(.fileFinished(sequence: 1, nil)))
        #expect(pair.watch.outstandingFiles.isEmpty && pair.filesOut[.watch]?[1] == nil)
        #expect(!pair.phone.hasContentPending)
    }

    @Test("at most four chunks run ahead of the receiver's acknowledgement")
    func window() {
        var pair = Self.pair()
        pair.start()
        pair.dropAllFramesOfKind = .fileChunk
        pair.queueFile(.watch, sequence: 1, Self.bytes(1_000_000))
        #expect(chunks(pair, .watch).count == 4)
        #expect(pair.watch.outstandingFiles.first?.acknowledged == 0)
    }

    @Test("a receiver restarted with part of the file resumes from there: only the rest crosses the wire")
    func resumesFromPartial() {
        let file = Self.bytes(500_000)
        let queued = OutboundFile(sequence: 1, size: 500_000, digest: LinkPair.digest(file), metadata: "{}")
        var pair = Self.pair(phonePartials: [Self.key: 327_680], watchFiles: [queued])
        pair.partials[.phone] = [Self.key: Array(file.prefix(327_680))]
        pair.filesOut[.watch] = [1: file]
        pair.start()
        let sent = chunks(pair, .watch).reduce(0) { total, frame in
            guard case .fileChunk(_, _, let data) = frame else { return total }
            return total + data.count
        }
        #expect(sent == 500_000 - 327_680)
        #expect(pair.inbox[.phone]?[Self.key] == file)
    }

    @Test("a file over the receiver's inbox quota is refused with insufficientSpace, before any byte is sent")
    func quota() {
        var pair = Self.pair { $0.maximumInboxBytes = 100_000 }
        pair.start()
        pair.queueFile(.watch, sequence: 1, Self.bytes(100_001))
        #expect(chunks(pair, .watch).isEmpty)
        #expect(
            pair.notifications(.watch).contains {
                if case .fileFinished(1, .insufficientSpace) = $0 { true } else { false }
            })
        #expect(pair.partials[.phone]!.isEmpty && pair.inbox[.phone]!.isEmpty)
    }

    @Test("bytes that do not match the offered digest are dropped and reported deliveryFailed")
    func digestMismatch() {
        var pair = Self.pair()
        pair.start()
        pair.filesOut[.watch] = [1: Self.bytes(1000)]
        pair.handle(
            .watch,
            .filePersisted(
                OutboundFile(sequence: 1, size: 1000, digest: [UInt8](repeating: 0, count: 32), metadata: "{}")))
        #expect(pair.inbox[.phone]!.isEmpty && pair.partials[.phone]!.isEmpty)
        #expect(!pair.notifications(.phone).contains { if case .fileReceived = $0 { true } else { false } })
        #expect(
            pair.notifications(.watch).contains {
                if case .fileFinished(1, .deliveryFailed) = $0 { true } else { false }
            })
    }

    @Test(
        "cancel mid-transfer: the receiver drops the partial, nothing reaches its inbox, the sender reports transferCancelled"
    )
    func cancelMidTransfer() {
        var pair = Self.pair()
        pair.start()
        pair.dropAllFramesOfKind = .fileChunk
        pair.queueFile(.watch, sequence: 1, Self.bytes(1_000_000))
        #expect(pair.partials[.phone]?[Self.key] != nil, "the phone accepted the offer and holds a partial")
        pair.handle(.watch, .fileCancelRequested(sequence: 1))
        #expect(pair.partials[.phone]!.isEmpty && pair.inbox[.phone]!.isEmpty)
        #expect(pair.notifications(.watch).contains(.fileFinished(sequence: 1, .transferCancelled)))
        #expect(pair.watch.outstandingFiles.isEmpty)
    }

    @Test("a sender that restarts before hearing the outcome gets didFinish on its next link, with no byte resent")
    func finishedOnNextStart() {
        let queued = OutboundFile(sequence: 1, size: 10, digest: LinkPair.digest(Self.bytes(10)), metadata: "{}")
        var mark = QueueMark()
        mark.apply(sequence: 1, digest: QueueMark.digest(ofFile: queued.digest), window: 1)
        var pair = Self.pair(phoneMarks: [Self.watchFiles: mark], watchFiles: [queued])
        pair.filesOut[.watch] = [1: Self.bytes(10)]
        pair.start()
        #expect(chunks(pair, .watch).isEmpty)
        #expect(pair.notifications(.watch).contains(.fileFinished(sequence: 1, nil)))
        #expect(!pair.notifications(.phone).contains { if case .fileReceived = $0 { true } else { false } })
    }

    @Test("a file the app had in its inbox when the receiver restarted is handed to it again, without a resend")
    func inboxSurvivesRestart() {
        let file = Self.bytes(2000)
        let queued = OutboundFile(sequence: 1, size: 2000, digest: LinkPair.digest(file), metadata: "{}")
        var pair = Self.pair(phoneInbox: [Self.key], watchFiles: [queued])
        pair.inbox[.phone] = [Self.key: file]
        pair.filesOut[.watch] = [1: file]
        pair.start()
        #expect(chunks(pair, .watch).isEmpty)
        #expect(
            pair.notifications(.phone).contains(.fileReceived(ReceivedFile(key: Self.key, size: 2000, metadata: "{}"))))
        pair.handle(.phone, .fileProcessed(Self.key))
        #expect(pair.notifications(.watch).contains(.fileFinished(sequence: 1, nil)))
    }

    @Test("files go one at a time in order, both ways; a message is not held back by a streaming file")
    func orderAndPriority() {
        var pair = Self.pair()
        pair.start()
        pair.dropAllFramesOfKind = .fileResume
        pair.queueFile(.watch, sequence: 1, Self.bytes(1_000_000))
        pair.queueFile(.watch, sequence: 2, Self.bytes(10))
        #expect(pair.framesSent[.watch]!.filter { $0.kind == .fileOffer }.count == 1, "the second waits for the first")
        pair.forget()
        pair.handle(.watch, .messageSent(id: 1, payload: [1], wantsReply: false, now: pair.now))
        #expect(
            pair.framesSent[.watch] == [.message(id: 1, wantsReply: false, payload: [1])], "no chunk goes before it")
        pair.dropAllFramesOfKind = nil
        // The phone sends the watch a file too: the queues are independent.
        pair.queueFile(.phone, sequence: 1, Self.bytes(70_000))
        #expect(pair.inbox[.watch]?[TransferKey(queue: Self.phoneFiles, sequence: 1)] == Self.bytes(70_000))
    }
}
