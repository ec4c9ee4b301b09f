import LinkProtocol
import Testing

@Suite("Link engine: the four channels")
struct LinkChannelTests {
    private func linkedPair() -> LinkPair {
        var pair = LinkPair()
        pair.start()
        pair.forget()
        return pair
    }

    private func connection(_ pair: LinkPair) -> ConnectionID { ConnectionID(pair.open.sorted().first!) }

    // MARK: Context

    @Test("a context update while linked persists the slot, then sends it (complete action list)")
    func contextWhileLinked() {
        var pair = linkedPair()
        var phone = pair.phone
        let actions = phone.handle(.contextUpdated(payload: [1, 2, 3], now: pair.now))
        let slot = ContextSlot(generation: 1, payload: [1, 2, 3], acknowledgedGeneration: 0)
        #expect(
            actions == [
                .persistContextSlot(slot, flushed: true), .notify(.contextQueued(generation: 1)),
                .send(connection(pair), .context(generation: 1, sender: LinkPair.phoneInstance, payload: [1, 2, 3])),
            ])
        pair.handle(.phone, .contextUpdated(payload: [1, 2, 3], now: pair.now))
        let received = ReceivedContext(sender: LinkPair.phoneInstance, generation: 1, payload: [1, 2, 3])
        #expect(
            pair.recorded[.watch]! == [
                .persistReceivedContext(received), .notify(.contextReceived(received)),
                .send(connection(pair), .contextAck(generation: 1, sender: LinkPair.phoneInstance)),
            ])
        #expect(pair.phone.currentContextSlot?.acknowledgedGeneration == 1)
    }

    @Test("an acknowledgement writes nothing by itself: the next slot written carries it")
    func acknowledgementRidesWithNextSlot() {
        var pair = linkedPair()
        func slotsWritten(_ pair: LinkPair) -> [ContextSlot] {
            pair.recorded[.phone]!.compactMap { if case .persistContextSlot(let slot, _) = $0 { slot } else { nil } }
        }
        pair.recorded[.phone] = []
        pair.handle(.phone, .contextUpdated(payload: [1], now: pair.now))
        #expect(pair.phone.currentContextSlot?.acknowledgedGeneration == 1)
        #expect(slotsWritten(pair) == [ContextSlot(generation: 1, payload: [1], acknowledgedGeneration: 0)])
        pair.recorded[.phone] = []
        pair.handle(.phone, .contextUpdated(payload: [2], now: pair.now))
        #expect(slotsWritten(pair) == [ContextSlot(generation: 2, payload: [2], acknowledgedGeneration: 1)])
    }

    @Test("three updates while the watch is away yield exactly one delivery, of the third")
    func latestWins() {
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(knownPeer: LinkPair.watchInstance, outboxQueue: LinkPair.phoneQueue))
        pair.watchCanDial = false
        pair.start()
        for value in 1...3 { pair.handle(.phone, .contextUpdated(payload: [UInt8(value)], now: pair.now)) }
        #expect(pair.phone.currentContextSlot?.generation == 3)
        pair.watchCanDial = true
        pair.advance(by: .seconds(2))
        let deliveries = pair.notifications(.watch).filter { if case .contextReceived = $0 { true } else { false } }
        #expect(
            deliveries == [
                .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 3, payload: [3]))
            ])
    }

    @Test("an update equal to the slot is not sent again, and an acknowledged slot is not resent on reconnect")
    func noRedundantSends() {
        var pair = linkedPair()
        pair.handle(.phone, .contextUpdated(payload: [9], now: pair.now))
        pair.forget()
        pair.handle(.phone, .contextUpdated(payload: [9], now: pair.now))
        // Only the app hears of it: the same generation, nothing written or sent.
        #expect(pair.recorded[.phone]! == [.notify(.contextQueued(generation: 1))])
        pair.cutConnection()
        pair.advance(by: .seconds(2))
        #expect(pair.phone.isLinked)
        #expect(!pair.framesSent[.phone]!.contains { $0.kind == .context })
    }

    @Test("the watch ignores an old generation from the same phone but accepts any from a new phone instance")
    func generationsAndReset() {
        let old = ReceivedContext(sender: LinkPair.phoneInstance, generation: 5, payload: [5])
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance,
                contextSlot: ContextSlot(generation: 4, payload: [4], acknowledgedGeneration: 0),
                outboxQueue: LinkPair.phoneQueue),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, receivedContext: old, outboxQueue: LinkPair.watchQueue))
        pair.start()
        #expect(pair.watch.lastReceivedContext == old)
        #expect(!pair.notifications(.watch).contains { if case .contextReceived = $0 { true } else { false } })
        #expect(
            pair.phone.currentContextSlot?.acknowledgedGeneration == 4, "an ignored generation is still acknowledged")

        let resetPhone = InstanceID(bytes: [UInt8](repeating: 0x99, count: 16))!
        var reset = LinkPair(
            phoneRestored: RestoredLinkState(
                contextSlot: ContextSlot(generation: 1, payload: [1], acknowledgedGeneration: 0),
                outboxQueue: LinkPair.phoneQueue),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, receivedContext: old, outboxQueue: LinkPair.watchQueue),
            phoneInstance: resetPhone)
        reset.start()
        #expect(reset.watch.lastReceivedContext == ReceivedContext(sender: resetPhone, generation: 1, payload: [1]))
    }

    // MARK: Messages

    @Test("a message gets exactly one outcome: reply, delivered, or deliveryFailed for no handler")
    func messageOutcomes() {
        var pair = linkedPair()
        pair.handle(.watch, .messageSent(id: 1, payload: [1], wantsReply: true, now: pair.now))
        #expect(pair.notifications(.phone) == [.messageReceived(id: 1, payload: [1], wantsReply: true)])
        pair.handle(.phone, .messageAnswered(id: 1, .reply([42])))
        pair.handle(.watch, .messageSent(id: 2, payload: [2], wantsReply: false, now: pair.now))
        pair.handle(.phone, .messageAnswered(id: 2, .handled))
        pair.handle(.watch, .messageSent(id: 3, payload: [3], wantsReply: false, now: pair.now))
        pair.handle(.phone, .messageAnswered(id: 3, .failed(.deliveryFailed, reason: "no handler for kind x")))
        #expect(
            pair.notifications(.watch) == [
                .messageCompleted(id: 1, .replied([42])), .messageCompleted(id: 2, .delivered),
                .messageCompleted(id: 3, .failed(.deliveryFailed(reason: "no handler for kind x"))),
            ])
    }

    @Test("each messageFailed code reaches the sender as the error it names, not all as deliveryFailed")
    func messageFailureCodes() {
        var pair = linkedPair()
        let limit = pair.phone.configuration.maximumMessageBytes
        pair.handle(.watch, .messageSent(id: 1, payload: [1], wantsReply: true, now: pair.now))
        pair.handle(.phone, .messageAnswered(id: 1, .failed(.payloadUnsupportedTypes, reason: "not JSON")))
        // A reply over the limit cannot be sent: messageReplyFailed, never a truncated reply.
        pair.handle(.watch, .messageSent(id: 2, payload: [2], wantsReply: true, now: pair.now))
        pair.handle(.phone, .messageAnswered(id: 2, .reply([UInt8](repeating: 0, count: limit + 1))))
        let tooLong = "the reply of \(limit + 1) bytes exceeds the \(limit)-byte limit"
        #expect(
            pair.notifications(.watch) == [
                .messageCompleted(id: 1, .failed(.payloadUnsupportedTypes(reason: "not JSON"))),
                .messageCompleted(id: 2, .failed(.messageReplyFailed(reason: tooLong))),
            ])
        #expect(
            pair.framesSent[.phone]!.contains {
                if case .messageFailed(2, .messageReplyFailed, _) = $0 { true } else { false }
            })
    }

    @Test("a message over the receiver's limit is refused with payloadTooLarge and never reaches its app")
    func messageOverReceiverLimit() {
        var pair = linkedPair()
        let limit = pair.phone.configuration.maximumMessageBytes
        // A peer with a larger limit (another build) sends what this phone does not take.
        let oversized = LinkFrame.message(id: 4, wantsReply: true, payload: [UInt8](repeating: 7, count: limit + 1))
        pair.handle(
            .phone,
            .bytesReceived(connection(pair), pair.wire([oversized], from: .watch, on: connection(pair)), now: pair.now))
        #expect(pair.notifications(.phone).isEmpty)
        #expect(pair.framesSent[.phone] == [.messageFailed(id: 4, code: .payloadTooLarge, reason: "\(limit)")])
        // The sender of such a message learns its size and the receiver's limit.
        pair.handle(.watch, .messageSent(id: 5, payload: [5, 5, 5], wantsReply: true, now: pair.now))
        pair.forget()
        let refusal = LinkFrame.messageFailed(id: 5, code: .payloadTooLarge, reason: "2")
        pair.handle(
            .watch,
            .bytesReceived(connection(pair), pair.wire([refusal], from: .phone, on: connection(pair)), now: pair.now))
        #expect(pair.notifications(.watch) == [.messageCompleted(id: 5, .failed(.payloadTooLarge(size: 3, limit: 2)))])
    }

    @Test("sendMessageData: raw bytes reach the app as data, and the reply comes back as raw bytes")
    func dataMessageOutcomes() {
        var pair = linkedPair()
        pair.handle(.watch, .messageDataSent(id: 1, payload: [0xFF, 0x00], wantsReply: true, now: pair.now))
        #expect(pair.framesSent[.watch]!.contains(.messageData(id: 1, wantsReply: true, payload: [0xFF, 0x00])))
        #expect(pair.notifications(.phone) == [.messageDataReceived(id: 1, payload: [0xFF, 0x00], wantsReply: true)])
        pair.handle(.phone, .messageAnswered(id: 1, .reply([0x00, 0xFF])))
        // The same id space as dictionary messages: one connection keeps their order.
        pair.handle(.phone, .messageDataSent(id: 2, payload: [2], wantsReply: false, now: pair.now))
        pair.handle(.phone, .messageSent(id: 3, payload: [3], wantsReply: false, now: pair.now))
        #expect(
            pair.notifications(.watch) == [
                .messageCompleted(id: 1, .replied([0x00, 0xFF])),
                .messageDataReceived(id: 2, payload: [2], wantsReply: false),
                .messageReceived(id: 3, payload: [3], wantsReply: false),
            ])
        pair.forget()
        pair.handle(.watch, .messageAnswered(id: 2, .handled))
        #expect(pair.notifications(.phone) == [.messageCompleted(id: 2, .delivered)])
    }

    @Test(
        "sendMessageData keeps sendMessage's rules: size limit, notReachable, timeout, refusal over the receiver's limit"
    )
    func dataMessageRules() {
        var pair = linkedPair()
        let limit = pair.phone.configuration.maximumMessageBytes
        pair.handle(
            .watch,
            .messageDataSent(id: 1, payload: [UInt8](repeating: 1, count: limit + 1), wantsReply: true, now: pair.now))
        #expect(
            pair.notifications(.watch) == [
                .messageCompleted(id: 1, .failed(.payloadTooLarge(size: limit + 1, limit: limit)))
            ])
        pair.handle(.watch, .localAppStateChanged(foreground: false))
        pair.forget()
        pair.handle(.phone, .messageDataSent(id: 2, payload: [2], wantsReply: true, now: pair.now))
        #expect(pair.notifications(.phone) == [.messageCompleted(id: 2, .failed(.notReachable))])
        #expect(pair.framesSent[.phone]!.isEmpty, "nothing is queued")
        pair.handle(.watch, .messageDataSent(id: 3, payload: [3], wantsReply: true, now: pair.now))
        pair.advance(by: .seconds(5) + .milliseconds(20))
        #expect(pair.notifications(.watch).contains(.messageCompleted(id: 3, .failed(.messageReplyTimedOut))))
        pair.forget()
        let oversized = LinkFrame.messageData(
            id: 4, wantsReply: false, payload: [UInt8](repeating: 7, count: limit + 1))
        pair.handle(
            .phone,
            .bytesReceived(connection(pair), pair.wire([oversized], from: .watch, on: connection(pair)), now: pair.now))
        #expect(!pair.notifications(.phone).contains { if case .messageDataReceived = $0 { true } else { false } })
        #expect(pair.framesSent[.phone] == [.messageFailed(id: 4, code: .payloadTooLarge, reason: "\(limit)")])
    }

    // MARK: Session states

    @Test(
        "an unpaired watch: the phone learns it, sends fail with deviceNotPaired, launches drop; pairing again resumes")
    func unpairedWatch() {
        var pair = linkedPair()
        let unpaired = WatchState(isPaired: false, isWatchAppInstalled: true, isComplicationEnabled: true)
        pair.handle(.watch, .localWatchStateChanged(unpaired))
        #expect(pair.recorded[.watch]!.contains(.persistWatchState(unpaired)))
        #expect(pair.recorded[.phone]!.contains(.persistWatchState(unpaired)))
        #expect(pair.notifications(.phone) == [.watchStateChanged(unpaired), .reachabilityChanged(false)])
        #expect(pair.phone.admission(of: .context, bytes: 1) == .deviceNotPaired)
        pair.forget()
        pair.handle(.phone, .messageDataSent(id: 1, payload: [1], wantsReply: false, now: pair.now))
        pair.handle(.phone, .launchRequested(payload: [2]))
        #expect(pair.notifications(.phone) == [.messageCompleted(id: 1, .failed(.deviceNotPaired)), .launchDropped])
        #expect(pair.framesSent[.phone]!.isEmpty)
        // The watch still reaches the phone, and the phone's state holds across a repeat report.
        #expect(pair.watch.isReachable)
        pair.handle(.watch, .localWatchStateChanged(unpaired))
        #expect(pair.framesSent[.watch]!.isEmpty)
        pair.handle(.watch, .localWatchStateChanged(.installed))
        #expect(pair.notifications(.phone).contains(.watchStateChanged(.installed)))
        #expect(pair.phone.isReachable && pair.phone.admission(of: .message, bytes: 1) == nil)
    }

    @Test("an uninstalled watch app: sends and updates fail with watchAppNotInstalled; a slot written before waits")
    func uninstalledApp() {
        let uninstalled = WatchState(isPaired: true, isWatchAppInstalled: false, isComplicationEnabled: true)
        var refusing = linkedPair()
        refusing.handle(.watch, .localWatchStateChanged(uninstalled))
        #expect(refusing.phone.admission(of: .message, bytes: 1) == .watchAppNotInstalled)
        refusing.forget()
        refusing.handle(.phone, .contextUpdated(payload: [9], now: refusing.now))
        #expect(refusing.recorded[.phone]! == [.notify(.contextRefused(.watchAppNotInstalled))])

        // A slot written before the app went (admission checked then) is not sent to it on a new link,
        // and goes once the app is back.
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance,
                contextSlot: ContextSlot(generation: 1, payload: [9], acknowledgedGeneration: 0),
                outboxQueue: LinkPair.phoneQueue, watchState: uninstalled),
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue, watchState: uninstalled))
        pair.start()
        pair.advance(by: .seconds(2))
        #expect(pair.phone.isLinked)
        #expect(!pair.framesSent[.phone]!.contains { if case .context = $0 { true } else { false } })
        pair.handle(.watch, .localWatchStateChanged(.installed))
        #expect(
            pair.framesSent[.phone]!.contains(.context(generation: 1, sender: LinkPair.phoneInstance, payload: [9])))
        #expect(pair.watch.lastReceivedContext?.payload == [9])
    }

    @Test("the phone restores the watch state it last heard; a new link reports the watch's own at once")
    func watchStateRestored() {
        let uninstalled = WatchState(isPaired: true, isWatchAppInstalled: false, isComplicationEnabled: false)
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, outboxQueue: LinkPair.phoneQueue, watchState: uninstalled))
        #expect(pair.phone.admission(of: .context, bytes: 1) == .watchAppNotInstalled)
        pair.start()
        #expect(pair.notifications(.phone).contains(.watchStateChanged(.installed)))
        #expect(pair.phone.currentWatchState == .installed)
    }

    @Test("hasContentPending while a received transfer waits for the app to process it")
    func contentPending() {
        var pair = linkedPair()
        pair.handle(.watch, .transferPersisted(sequence: 1, payload: [1]))
        #expect(pair.phone.hasContentPending)
        pair.handle(.phone, .transfersProcessed([TransferKey(queue: LinkPair.watchQueue, sequence: 1)]))
        #expect(!pair.phone.hasContentPending)
    }

    @Test(
        "a transfer the receiver's app refuses is marked, refused on the wire, and fails at the sender; a copy is acked"
    )
    func refusedTransfer() {
        var pair = linkedPair()
        let key = TransferKey(queue: LinkPair.watchQueue, sequence: 1)
        pair.handle(.watch, .transferPersisted(sequence: 1, payload: [1]))
        pair.handle(.phone, .transfersRefused([key], reason: "cannot read it"))
        #expect(pair.marked(.phone, key))
        #expect(
            pair.framesSent[.phone]?.contains(.userInfoRefused(queue: key.queue, sequence: 1, reason: "cannot read it"))
                == true)
        let failed = LinkNotification.transferFailed(
            sequence: 1, complication: false, payload: [1], .payloadUnsupportedTypes(reason: "cannot read it"))
        #expect(pair.notifications(.watch).contains(failed))
        #expect(!pair.notifications(.watch).contains(.transferFinished(sequence: 1, payload: [1])))
        #expect(pair.watch.outstandingTransfers.isEmpty && !pair.phone.hasContentPending)
    }

    // MARK: Complications

    static let complicationQueue = InstanceID(bytes: [UInt8](repeating: 0xC0, count: 16))!

    @Test("complication transfers go ahead of ordinary userInfo not yet sent, under their own queue, and finish apart")
    func complicationsFirst() {
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, outboxQueue: LinkPair.phoneQueue,
                complicationQueue: Self.complicationQueue))
        pair.handle(.phone, .started(now: pair.now))
        // Queued while the watch is away: ordinary 1 and 2 first, then complication 1.
        pair.handle(.phone, .transferPersisted(sequence: 1, payload: [1]))
        pair.handle(.phone, .transferPersisted(sequence: 2, payload: [2]))
        pair.handle(.phone, .complicationPersisted(sequence: 1, payload: [0xC1]))
        #expect(pair.phone.outstandingComplications.map(\.sequence) == [1])
        pair.handle(.watch, .started(now: pair.now))
        let transfers = pair.framesSent[.phone]!.filter { $0.kind == .userInfo }
        #expect(
            transfers == [
                .userInfo(queue: Self.complicationQueue, sequence: 1, payload: [0xC1]),
                .userInfo(queue: LinkPair.phoneQueue, sequence: 1, payload: [1]),
                .userInfo(queue: LinkPair.phoneQueue, sequence: 2, payload: [2]),
            ])
        // The watch keeps a mark per queue: the complication's sequence 1 does not hide the ordinary 1.
        #expect(pair.notifications(.watch).filter { if case .userInfoReceived = $0 { true } else { false } }.count == 3)
        pair.forget()
        pair.handle(
            .watch,
            .transfersProcessed([
                TransferKey(queue: Self.complicationQueue, sequence: 1),
                TransferKey(queue: LinkPair.phoneQueue, sequence: 1),
            ]))
        #expect(pair.recorded[.phone]!.contains(.removeComplications(sequences: [1])))
        #expect(pair.recorded[.phone]!.contains(.removeTransfers(sequences: [1], cancelled: false)))
        #expect(
            pair.notifications(.phone) == [
                .complicationFinished(sequence: 1), .transferFinished(sequence: 1, payload: [1]),
            ])
        #expect(pair.phone.outstandingComplications.isEmpty && pair.phone.outstandingTransfers.map(\.sequence) == [2])
    }

    @Test("a complication persisted while ordinary transfers are in flight is put on the wire at once")
    func complicationWhileLinked() {
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: LinkPair.watchInstance, outboxQueue: LinkPair.phoneQueue,
                complicationQueue: Self.complicationQueue))
        pair.start()
        pair.dropAllFramesOfKind = .userInfoAck
        pair.handle(.phone, .transferPersisted(sequence: 1, payload: [1]))
        pair.forget()
        pair.handle(.phone, .complicationPersisted(sequence: 1, payload: [0xC5]))
        #expect(pair.framesSent[.phone] == [.userInfo(queue: Self.complicationQueue, sequence: 1, payload: [0xC5])])
    }

    @Test("a cancel is answered to the app: cancelled with its payload and whether it was sent, or refused")
    func cancelReported() {
        var pair = LinkPair(
            watchRestored: RestoredLinkState(knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue))
        pair.watchCanDial = false
        pair.start()
        pair.handle(.watch, .transferPersisted(sequence: 1, payload: [1]))
        pair.handle(.watch, .transferCancelRequested(sequence: 1))
        #expect(pair.notifications(.watch).contains(.transferCancelled(sequence: 1, payload: [1], wasSent: false)))
        pair.handle(.watch, .transferCancelRequested(sequence: 1))
        #expect(
            pair.notifications(.watch).contains(
                .transferCancelRefused(sequence: 1, .unknownTransfer(sequence: 1))))
    }

    @Test("phone → watch messages fail at once with notReachable while the watch app is in the background")
    func notReachableWhenWristDown() {
        var pair = linkedPair()
        pair.handle(.watch, .localAppStateChanged(foreground: false))
        pair.forget()
        pair.handle(.phone, .messageSent(id: 7, payload: [7], wantsReply: true, now: pair.now))
        #expect(pair.notifications(.phone) == [.messageCompleted(id: 7, .failed(.notReachable))])
        #expect(pair.framesSent[.phone]!.isEmpty, "nothing is queued")
        pair.handle(.watch, .localAppStateChanged(foreground: true))
        #expect(!pair.notifications(.watch).contains { if case .messageReceived = $0 { true } else { false } })
    }

    @Test("no answer within the timeout fails with messageReplyTimedOut; a late reply is dropped")
    func replyTimeout() {
        var pair = linkedPair()
        pair.handle(.watch, .messageSent(id: 5, payload: [], wantsReply: true, now: pair.now))
        pair.advance(by: .seconds(5) + .milliseconds(20))
        #expect(pair.notifications(.watch).contains(.messageCompleted(id: 5, .failed(.messageReplyTimedOut))))
        pair.forget()
        pair.handle(.phone, .messageAnswered(id: 5, .reply([1])))
        #expect(pair.notifications(.watch).isEmpty)
    }

    @Test("a link drop mid-send fails the message instead of hanging")
    func dropMidSend() {
        var pair = linkedPair()
        pair.handle(.watch, .messageSent(id: 9, payload: [], wantsReply: true, now: pair.now))
        pair.cutConnection()
        #expect(
            pair.notifications(.watch).contains {
                if case .messageCompleted(9, .failed(.deliveryFailed)) = $0 { true } else { false }
            })
    }

    // MARK: UserInfo

    @Test("transfers queued while unlinked are delivered in order on link-up and removed on ack")
    func transfersInOrder() {
        var pair = LinkPair(
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue,
                pendingTransfers: [(1, [1]), (2, [2])]))
        pair.watchCanDial = false
        pair.start()
        pair.handle(.watch, .transferPersisted(sequence: 3, payload: [3]))
        pair.watchCanDial = true
        pair.advance(by: .seconds(2))
        let received = pair.notifications(.phone).compactMap { notification -> UInt64? in
            if case .userInfoReceived(let key, _) = notification { return key.sequence }
            return nil
        }
        #expect(received == [1, 2, 3])
        for sequence in received {
            pair.handle(.phone, .transfersProcessed([TransferKey(queue: LinkPair.watchQueue, sequence: sequence)]))
        }
        #expect(pair.watch.outstandingTransfers.isEmpty)
        let removed = pair.recorded[.watch]!.flatMap { action -> [UInt64] in
            if case .removeTransfers(let sequences, cancelled: false) = action { return sequences }
            return []
        }
        #expect(removed == [1, 2, 3])
        #expect(pair.notifications(.watch).contains(.transferFinished(sequence: 3, payload: [3])))
    }

    @Test("transfers processed together: one mark write for the highest, then an ack of each, in order")
    func transfersProcessedTogether() throws {
        var pair = LinkPair(
            watchRestored: RestoredLinkState(
                knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue,
                pendingTransfers: [(1, [1]), (2, [2]), (3, [3])]))
        pair.start()
        pair.advance(by: .seconds(2))
        let keys = (1...3).map { TransferKey(queue: LinkPair.watchQueue, sequence: $0) }
        let acks = keys.map { LinkFrame.userInfoAck(queue: $0.queue, sequence: $0.sequence) }
        // The acks are held back here and handed to the watch as one read, as a drain's are.
        pair.dropAllFramesOfKind = .userInfoAck
        let before = pair.recorded[.phone]!.count
        pair.handle(.phone, .transfersProcessed(keys))
        let processed = pair.recorded[.phone]![before...].filter {
            if case .log = $0 { false } else { true }
        }
        let connection = try #require(processed.compactMap { if case .send(let c, _) = $0 { c } else { nil } }.first)
        var mark = QueueMark()
        for key in keys {
            mark.apply(sequence: key.sequence, digest: QueueMark.digest(ofPayload: [UInt8(key.sequence)]), window: 128)
        }
        #expect(
            Array(processed)
                == [.persistTransferMark(queue: LinkPair.watchQueue, mark)] + acks.map { .send(connection, $0) })

        pair.dropAllFramesOfKind = nil
        let watchBefore = pair.recorded[.watch]!.count
        pair.handle(.watch, .bytesReceived(connection, pair.wire(acks, from: .phone, on: connection), now: pair.now))
        let resolved = pair.recorded[.watch]![watchBefore...].filter {
            switch $0 {
            case .removeTransfers, .notify(.transferFinished): true
            default: false
            }
        }
        // One durable write for the read's three acks, before any of them is reported finished.
        #expect(
            Array(resolved)
                == [.removeTransfers(sequences: [1, 2, 3], cancelled: false)]
                + (1...3).map { .notify(.transferFinished(sequence: $0, payload: [UInt8($0)])) })
        #expect(pair.watch.outstandingTransfers.isEmpty)
    }

    @Test("a transfer redelivered after a lost ack is acknowledged again but not delivered twice")
    func dedup() {
        var pair = linkedPair()
        pair.dropAllFramesOfKind = .userInfoAck
        pair.handle(.watch, .transferPersisted(sequence: 1, payload: [1]))
        pair.handle(.phone, .transfersProcessed([TransferKey(queue: LinkPair.watchQueue, sequence: 1)]))
        #expect(pair.marked(.phone, TransferKey(queue: LinkPair.watchQueue, sequence: 1)))
        pair.dropAllFramesOfKind = nil
        pair.cutConnection()
        pair.forget()
        pair.advance(by: .seconds(2))
        #expect(pair.framesSent[.watch]!.contains { $0.kind == .userInfo }, "resent after reconnect")
        #expect(!pair.notifications(.phone).contains { if case .userInfoReceived = $0 { true } else { false } })
        #expect(pair.watch.outstandingTransfers.isEmpty)
    }

    @Test("a transfer not yet acknowledged can be cancelled, sent or not; the rest keep their order")
    func cancel() {
        var pair = LinkPair(
            watchRestored: RestoredLinkState(knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue))
        pair.watchCanDial = false
        pair.start()
        for sequence in UInt64(1)...3 {
            pair.handle(.watch, .transferPersisted(sequence: sequence, payload: [UInt8(sequence)]))
        }
        #expect(pair.watch.cancellationError(sequence: 2) == nil)
        pair.handle(.watch, .transferCancelRequested(sequence: 2))
        #expect(pair.recorded[.watch]!.contains(.removeTransfers(sequences: [2], cancelled: true)))
        pair.watchCanDial = true
        pair.advance(by: .seconds(2))
        let received = pair.notifications(.phone).compactMap { notification -> UInt64? in
            if case .userInfoReceived(let key, _) = notification { return key.sequence }
            return nil
        }
        #expect(received == [1, 3])
        #expect(pair.watch.cancellationError(sequence: 2) == .unknownTransfer(sequence: 2))
    }

    @Test("at most the window of transfers is in flight; acks release more")
    func window() {
        var pair = LinkPair { $0.transferWindow = 2 }
        pair.start()
        for sequence in UInt64(1)...5 { pair.handle(.watch, .transferPersisted(sequence: sequence, payload: [])) }
        #expect(pair.framesSent[.watch]!.filter { $0.kind == .userInfo }.count == 2)
        pair.handle(.phone, .transfersProcessed([TransferKey(queue: LinkPair.watchQueue, sequence: 1)]))
        #expect(pair.framesSent[.watch]!.filter { $0.kind == .userInfo }.count == 3)
    }

    // MARK: Launch

    @Test("launch is delivered when linked and dropped, never queued, when not")
    func launch() {
        var pair = linkedPair()
        pair.handle(.phone, .launchRequested(payload: [1]))
        #expect(pair.notifications(.watch) == [.launchReceived(payload: [1])])
        pair.cutConnection()
        pair.watchCanDial = false
        pair.forget()
        pair.handle(.phone, .launchRequested(payload: [2]))
        #expect(pair.notifications(.phone) == [.launchDropped])
        pair.watchCanDial = true
        pair.advance(by: .seconds(2))
        #expect(!pair.notifications(.watch).contains(.launchReceived(payload: [2])))
    }
}

@Suite("Link engine: context re-push and new watches")
struct LinkContextRepushTests {
    @Test("a forced update of an unchanged payload is delivered again under a new generation")
    func forcedRepush() {
        var pair = LinkPair()
        pair.start()
        pair.handle(.phone, .contextUpdated(payload: [1], now: pair.now))
        pair.forget()
        pair.handle(.phone, .contextUpdated(payload: [1], force: true, now: pair.now))
        #expect(
            pair.notifications(.watch) == [
                .contextReceived(ReceivedContext(sender: LinkPair.phoneInstance, generation: 2, payload: [1]))
            ])
    }

    @Test("a different watch instance gets the context even though the old watch acknowledged it")
    func newWatchGetsContext() {
        var pair = LinkPair(
            phoneRestored: RestoredLinkState(
                knownPeer: InstanceID(bytes: [UInt8](repeating: 0x55, count: 16))!,
                contextSlot: ContextSlot(generation: 7, payload: [7], acknowledgedGeneration: 7),
                outboxQueue: LinkPair.phoneQueue))
        pair.start()
        #expect(pair.watch.lastReceivedContext?.generation == 7)
    }
}

@Suite("Link engine: transfer ordering")
struct LinkTransferOrderTests {
    @Test("transfers persisted out of order by concurrent producers go on the wire in sequence order")
    func reorders() {
        var pair = LinkPair()
        pair.start()
        pair.forget()
        pair.handle(.watch, .transferPersisted(sequence: 2, payload: [2]))
        #expect(pair.framesSent[.watch]!.isEmpty)
        pair.handle(.watch, .transferPersisted(sequence: 1, payload: [1]))
        let sent = pair.framesSent[.watch]!.compactMap { frame -> UInt64? in
            if case .userInfo(_, let sequence, _) = frame { return sequence }
            return nil
        }
        #expect(sent == [1, 2])
    }
}
