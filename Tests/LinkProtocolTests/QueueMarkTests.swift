import LinkProtocol
import Testing

/// A sender restored from an older backup numbers its next transfers again from where the backup
/// stood: the receiver's mark tells those from duplicates by their digests.
@Suite("Queue marks and a sender that went back")
struct QueueMarkTests {
    static func applied(_ payloads: [(UInt64, [UInt8])]) -> QueueMark {
        var mark = QueueMark()
        for (sequence, payload) in payloads {
            mark.apply(sequence: sequence, digest: QueueMark.digest(ofPayload: payload), window: 128)
        }
        return mark
    }

    @Test("a duplicate is a sequence applied with the same digest; a new digest, or one below the kept digests, is new")
    func verdicts() {
        var mark = QueueMark()
        for sequence in UInt64(1)...300 { mark.apply(sequence: sequence, digest: sequence, window: 128) }
        #expect(mark.highest == 300 && mark.recent.count == QueueMark.keptAtLeast)
        #expect(mark.isDuplicate(sequence: 300, digest: 300) && mark.isDuplicate(sequence: 45, digest: 45))
        #expect(!mark.isDuplicate(sequence: 300, digest: 1), "same sequence, other contents")
        #expect(!mark.isDuplicate(sequence: 44, digest: 44), "below every kept digest: only a sender that went back")
        #expect(!mark.isDuplicate(sequence: 301, digest: 301))
        mark.apply(sequence: 100, digest: 7, window: 128)
        #expect(mark.isDuplicate(sequence: 100, digest: 7) && !mark.isDuplicate(sequence: 100, digest: 100))
        #expect(mark.highest == 300 && mark.recent.last == QueueMark.Applied(sequence: 100, digest: 7))
        var wide = QueueMark()
        for sequence in UInt64(1)...600 { wide.apply(sequence: sequence, digest: 0, window: 512) }
        #expect(wide.recent.count == 512, "a larger transfer window keeps more")
        #expect(QueueMark(highest: 9).isDuplicate(sequence: 9, digest: 1), "a mark from before digests")
        #expect(mark.holds(sequence: 100) && !mark.holds(sequence: 44) && QueueMark(highest: 9).holds(sequence: 3))
    }

    @Test("a watch restored from an older backup: its resent transfer is a duplicate, its next one is delivered, once")
    func restoredSender() {
        // The watch's backup held transfer 2 unacknowledged; since then 2 and 3 were applied.
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance,
                transferMarks: [LinkPair.watchQueue: Self.applied([(1, [1]), (2, [2]), (3, [3])])],
                outboxQueue: LinkPair.phoneQueue),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue, pendingTransfers: [(2, [2])]))
        pair.start()
        pair.advance(by: .seconds(1))
        #expect(pair.watch.outstandingTransfers.isEmpty, "2 was a true duplicate: acknowledged")
        #expect(!pair.notifications(.phone).contains { if case .userInfoReceived = $0 { true } else { false } })

        // Its next transfer is numbered 3 again, with contents the phone never saw.
        let key = TransferKey(queue: LinkPair.watchQueue, sequence: 3)
        pair.dropAllFramesOfKind = .userInfoAck
        pair.handle(.watch, .transferPersisted(sequence: 3, payload: [9]))
        #expect(pair.notifications(.phone).contains(.userInfoReceived(key, payload: [9])))
        #expect(pair.recorded[.phone]!.contains(.log(.senderWentBack(key, highest: 3))))
        pair.handle(.phone, .transfersProcessed([key]))
        #expect(pair.marked(.phone, key))

        // Processed again (handed to the app twice across a lost link): its digest stays.
        pair.handle(.phone, .transfersProcessed([key]))
        #expect(
            pair.phone.transferMark(of: LinkPair.watchQueue)?.isDuplicate(
                sequence: 3, digest: QueueMark.digest(ofPayload: [9])) == true)
        #expect(
            pair.phone.transferMark(of: LinkPair.watchQueue)?.isDuplicate(
                sequence: 3, digest: QueueMark.digest(ofPayload: [3])) == false)

        // Its acknowledgement lost, it comes again after a reconnect: acknowledged, not delivered.
        pair.dropAllFramesOfKind = nil
        pair.cutConnection()
        pair.forget()
        pair.advance(by: .seconds(2))
        #expect(pair.watch.outstandingTransfers.isEmpty)
        #expect(!pair.notifications(.phone).contains { if case .userInfoReceived = $0 { true } else { false } })
        pair.handle(.watch, .transferPersisted(sequence: 4, payload: [10]))
        #expect(
            pair.notifications(.phone).contains(
                .userInfoReceived(TransferKey(queue: LinkPair.watchQueue, sequence: 4), payload: [10])))
    }

    @Test("a sender gone back further than the kept digests: its transfer is delivered")
    func farBack() {
        var mark = QueueMark()
        for sequence in UInt64(1)...500 { mark.apply(sequence: sequence, digest: sequence, window: 128) }
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, transferMarks: [LinkPair.watchQueue: mark],
                outboxQueue: LinkPair.phoneQueue),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue, pendingTransfers: [(3, [3])]))
        pair.start()
        pair.advance(by: .seconds(1))
        #expect(
            pair.notifications(.phone).contains(
                .userInfoReceived(TransferKey(queue: LinkPair.watchQueue, sequence: 3), payload: [3])))
    }

    @Test("a file sender that went back: a different file at an applied sequence is received, not answered delivered")
    func restoredFileSender() {
        let files = InstanceID(bytes: [UInt8](repeating: 0x12, count: 16))!
        var mark = QueueMark()
        mark.apply(sequence: 1, digest: QueueMark.digest(ofFile: LinkPair.digest([1, 2, 3])), window: 1)
        let key = TransferKey(queue: files, sequence: 1)
        let other: [UInt8] = [4, 5, 6, 7]
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, transferMarks: [files: mark], outboxQueue: LinkPair.phoneQueue),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue, fileQueue: files))
        pair.start()
        pair.queueFile(.watch, sequence: 1, other)
        #expect(pair.inbox[.phone]?[key] == other)
        #expect(pair.recorded[.phone]!.contains(.log(.senderWentBack(key, highest: 1))))
        pair.handle(.phone, .fileProcessed(key))
        #expect(pair.notifications(.watch).contains(.fileFinished(sequence: 1, nil)))
    }
}
