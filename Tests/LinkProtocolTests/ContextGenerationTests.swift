import LinkProtocol
import Testing

/// A context slot is sent before its write lands, within a bound a restarted phone numbers past
/// (`ContextGenerations`, docs/PROTOCOL.md).
@Suite("Link engine: context generations ahead of the slot on disk")
struct ContextGenerationTests {
    private func connection(_ pair: LinkPair) -> ConnectionID { ConnectionID(pair.open.sorted().first!) }

    private func context(_ generation: UInt64, _ payload: [UInt8]) -> LinkFrame {
        .context(generation: generation, sender: LinkPair.phoneInstance, payload: payload)
    }

    @Test("the first slot is written before it is sent; the next ones are sent first")
    func sentBeforeWritten() {
        var pair = LinkPair()
        pair.start()
        pair.forget()
        var phone = pair.phone
        let first = phone.handle(.contextUpdated(payload: [1], now: pair.now))
        #expect(
            first.first
                == .persistContextSlot(
                    ContextSlot(generation: 1, payload: [1], acknowledgedGeneration: 0), flushed: true))
        let second = phone.handle(.contextUpdated(payload: [2], now: pair.now))
        let slot = ContextSlot(generation: 2, payload: [2], acknowledgedGeneration: 0)
        #expect(
            second == [
                .notify(.contextQueued(generation: 2)), .send(connection(pair), context(2, [2])),
                .persistContextSlot(slot, flushed: false),
            ])
    }

    @Test("a restarted phone sends the slot it found as it was, and numbers its next one past any lost write")
    func restarted() {
        // The slot on disk is generation 5; the phone may have sent up to 5 + ahead before it died.
        let found = ContextSlot(generation: 5, payload: [5], acknowledgedGeneration: 4)
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, contextSlot: found, outboxQueue: LinkPair.phoneQueue))
        pair.start()
        let resent = pair.framesSent[.phone]!.filter { if case .context = $0 { true } else { false } }
        #expect(resent == [context(5, [5])])
        pair.forget()
        // The same payload is a new generation: the watch may hold a newer slot the phone lost.
        var phone = pair.phone
        let next = 5 + ContextGenerations.ahead + 1
        let actions = phone.handle(.contextUpdated(payload: [5], now: pair.now))
        #expect(
            actions == [
                .persistContextSlot(
                    ContextSlot(generation: next, payload: [5], acknowledgedGeneration: 5), flushed: true),
                .notify(.contextQueued(generation: next)), .send(connection(pair), context(next, [5])),
            ])
    }

    /// A phone whose state went back to a clean stop with slot `phoneSlot` (payload [phoneSlot]), and
    /// a watch that has since applied generation `watchHolds` (payload [watchHolds]) of it.
    static func wentBackPair(phoneSlot: UInt64, watchHolds: UInt64) -> LinkPair {
        LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance,
                contextSlot: ContextSlot(
                    generation: phoneSlot, payload: [UInt8(phoneSlot)], acknowledgedGeneration: phoneSlot),
                outboxQueue: LinkPair.phoneQueue, contextSlotCurrent: true),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance,
                receivedContext: ReceivedContext(
                    sender: LinkPair.phoneInstance, generation: watchHolds, payload: [UInt8(watchHolds)]),
                outboxQueue: LinkPair.watchQueue))
    }

    @Test(
        "a phone state restored from an older backup: the watch's acknowledgement names what it holds, and the slot goes again past it"
    )
    func wentBack() {
        // The backup's slot is generation 3 (a clean stop: the last one that phone made); since
        // then the watch applied generation 9 of the same phone.
        var pair = Self.wentBackPair(phoneSlot: 3, watchHolds: 9)
        pair.start()
        pair.handle(.phone, .contextUpdated(payload: [4], now: pair.now))
        #expect(pair.recorded[.phone]!.contains(.log(.phoneWentBack(watchHolds: 9, newest: 4))))
        #expect(
            pair.notifications(.watch).contains(
                .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 10, payload: [4]))))
        pair.handle(.phone, .contextUpdated(payload: [5], now: pair.now))
        #expect(
            pair.notifications(.watch).last
                == .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 11, payload: [5])))
    }

    @Test(
        "a phone that learns it went back while the watch is unpaired sends its slot, renumbered, once it pairs again")
    func wentBackWhileUnpaired() throws {
        var pair = Self.wentBackPair(phoneSlot: 3, watchHolds: 9)
        pair.start()
        // The watch's acknowledgement naming generation 9 arrives after it reported itself unpaired.
        pair.dropAllFramesOfKind = .contextAck
        pair.handle(.phone, .contextUpdated(payload: [4], now: pair.now))
        pair.dropAllFramesOfKind = nil
        let unpaired = WatchState(isPaired: false, isWatchAppInstalled: true, isComplicationEnabled: true)
        pair.handle(.watch, .localWatchStateChanged(unpaired))
        let connection = ConnectionID(try #require(pair.open.sorted().first))
        pair.handle(
            .phone,
            .bytesReceived(
                connection,
                pair.wire([.contextAck(generation: 9, sender: LinkPair.phoneInstance)], from: .watch, on: connection),
                now: pair.now))
        #expect(pair.recorded[.phone]!.contains(.log(.phoneWentBack(watchHolds: 9, newest: 4))))
        pair.handle(.watch, .localWatchStateChanged(.installed))
        #expect(
            pair.notifications(.watch).contains(
                .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 10, payload: [4]))))
    }

    @Test("a restored phone whose generation meets the watch's with other contents: the watch takes it as the newest")
    func wentBackToTheSameGeneration() {
        var pair = Self.wentBackPair(phoneSlot: 8, watchHolds: 9)
        pair.start()
        pair.handle(.phone, .contextUpdated(payload: [9], now: pair.now))
        #expect(
            !pair.notifications(.watch).contains { if case .contextReceived = $0 { true } else { false } },
            "the same contents: only acknowledged")
        pair.handle(.phone, .contextUpdated(payload: [10], now: pair.now))
        #expect(pair.recorded[.watch]!.contains(.log(.contextGenerationReused(9))) == false)
        #expect(
            pair.notifications(.watch).last
                == .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 10, payload: [10])))
        // Generation 9 again with other contents (the phone went back to just before it).
        var other = Self.wentBackPair(phoneSlot: 8, watchHolds: 9)
        other.start()
        other.handle(.phone, .contextUpdated(payload: [7], now: other.now))
        #expect(other.recorded[.watch]!.contains(.log(.contextGenerationReused(9))))
        #expect(
            other.notifications(.watch).last
                == .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 9, payload: [7])))
    }

    @Test("a phone restarted after every write was lost sends nothing the watch holds under a generation it has")
    func lostWrites() {
        // Life one: slot 1 lands before its send; slots 2 and 3 are sent, and their writes are lost.
        var first = ContextGenerations(restored: nil)
        #expect(first.next() == (1, true))
        #expect(first.next() == (2, false))
        #expect(first.next() == (3, false))
        // Life two finds slot 1.
        var second = ContextGenerations(restored: ContextSlot(generation: 1, payload: [], acknowledgedGeneration: 1))
        #expect(second.restoredUnconfirmed)
        let (generation, persistFirst) = second.next()
        #expect(generation > 3 && persistFirst && !second.restoredUnconfirmed)
    }

    @Test("at most `ahead` slots go out past the last one written before its send")
    func bounded() {
        var generations = ContextGenerations(restored: nil)
        #expect(generations.next().persistFirst)
        var sentFirst: UInt64 = 0
        for _ in 0..<ContextGenerations.ahead where !generations.next().persistFirst { sentFirst += 1 }
        #expect(sentFirst == ContextGenerations.ahead)
        let (generation, persistFirst) = generations.next()
        #expect(generation == ContextGenerations.ahead + 2 && persistFirst)
        #expect(generations.durable == generation)
    }

    @Test("after a clean stop the slot found is the last one made: numbering goes on from it, unforced")
    func afterCleanStop() {
        let found = ContextSlot(generation: 7, payload: [7], acknowledgedGeneration: 7)
        var generations = ContextGenerations(restored: found, current: true)
        #expect(!generations.restoredUnconfirmed)
        #expect(generations.next() == (8, false))
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, contextSlot: found, outboxQueue: LinkPair.phoneQueue,
                contextSlotCurrent: true))
        pair.start()
        pair.forget()
        // An update equal to the slot is not sent again, as before the stop.
        pair.handle(.phone, .contextUpdated(payload: [7], now: pair.now))
        #expect(pair.recorded[.phone]! == [.notify(.contextQueued(generation: 7))])
    }
}
