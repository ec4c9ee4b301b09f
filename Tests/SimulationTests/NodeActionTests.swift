import AdminCommands
import LinkProtocol
import Nodes
import Simulation
import Testing
import WorkoutModel

/// Whole action lists: the order the shell carries them out in is the durability rule. Each node is
/// the one the simulator's daemon holds after the script (a started run, an edit queued across a
/// partition), fed here by the test.
@Suite("Node actions: durability and shutdown as whole, ordered action lists")
struct NodeActionTests {
    /// A phone node that has the started run, and a watch update of it waiting as transfer 1.
    static func transferWaiting() throws -> (
        phone: PhoneNode, key: TransferKey, payload: [UInt8], run: DocumentID, now: Timestamp
    ) {
        let (pair, run) = try ScriptedScenarioTests.started()
        pair.partition()
        pair.advance(by: .seconds(5))  // the heartbeats notice: the phone is no longer reachable
        // Past the phone's clock mark (`ClockLease`), so the ingest's stamp moves it.
        pair.advance(by: ClockLease.lease * 2)
        pair.watch(.set(ScriptedScenarioTests.complete(run, 1, 1)))
        let transfer = try #require(pair.watchQueuedTransfers.last)
        return (try #require(pair.phoneNode), transfer.key, transfer.payload, run, pair.phoneClock)
    }

    static let phoneInstance = InstanceID(bytes: Array(repeating: 1, count: 16))!

    /// What the shell knows when an admin request arrives at an unlinked phone.
    static let unlinkedPhone = ShellFacts(
        link: LinkStatus(
            role: .phone, instance: Self.phoneInstance, activated: true,
            reachable: false, linked: false, peer: nil, watchAppForeground: false, contextGenerationSent: nil,
            contextGenerationAcknowledged: nil, contextGenerationReceived: nil, contextSender: nil, outboxDepth: 0,
            handshakingConnections: 0),
        uptimeSeconds: 1, journalCounts: [:])

    static func index(_ actions: [PhoneNode.Action], _ matches: (PhoneNode.Action) -> Bool) -> Int? {
        actions.firstIndex(where: matches)
    }

    static func isWrite(_ run: DocumentID) -> (PhoneNode.Action) -> Bool {
        { if case .store(.writeWorkout(let written)) = $0 { written.id == run } else { false } }
    }

    static func isAck(_ key: TransferKey) -> (PhoneNode.Action) -> Bool {
        { $0 == .node(.link(.transfersProcessed([key]))) }
    }

    static func isTimerBookkeeping(_ action: PhoneNode.Action) -> Bool {
        switch action {
        case .node(.armTimer), .node(.cancelTimer): true
        default: false
        }
    }

    @Test(
        "a transfer arriving: nothing is acknowledged in its turn; at the turn's end the write, the clock, then the ack"
    )
    func transferArrives() throws {
        var (phone, key, payload, run, now) = try Self.transferWaiting()
        let arrived = try phone.handle(.link(.userInfoReceived(key, payload: payload)), now: now)
        #expect(arrived.contains(.node(.callAtEndOfTurn)))
        #expect(Self.index(arrived, Self.isAck(key)) == nil, "acknowledged before its write: \(arrived)")
        #expect(Self.index(arrived, Self.isWrite(run)) == nil, "the batch writes once, at its end")

        let ended = try phone.handle(.reported(.turnEnded), now: now)
        let write = try #require(Self.index(ended, Self.isWrite(run)), "\(ended)")
        let clock = try #require(Self.index(ended) { if case .node(.persistClock) = $0 { true } else { false } })
        let ack = try #require(Self.index(ended, Self.isAck(key)), "\(ended)")
        #expect(write < clock && clock < ack)
        // The merged line is logged after the write it reports.
        let logged = try #require(
            Self.index(ended) { if case .node(.log(let line)) = $0 { line["outcome"] == "merged" } else { false } })
        #expect(write < logged)
        // Nothing after the ack but the run's file made visible (its write was durable before the
        // ack) and the timer bookkeeping.
        let publish = try #require(
            ended.firstIndex(of: .store(.publishWorkout(run, startedAt: Self.runStart(ended, run)))))
        #expect(write < publish)
        #expect(
            ended[(ack + 1)...].allSatisfy { Self.isTimerBookkeeping($0) || $0 == ended[publish] }, "\(ended)")
    }

    static func runStart(_ actions: [PhoneNode.Action], _ run: DocumentID) -> Timestamp {
        for case .store(.writeWorkout(let written)) in actions where written.id == run { return written.startedAt }
        return Timestamp(microsecondsSinceEpoch: 0)
    }

    /// With writes off the loop, an earlier batch's push is queued by the link (its `contextQueued` notification) while
    /// the next batch is open. The engine hands out the open batch's deferred writes with any event;
    /// the node dropped that event's actions, so the write was lost and the transfer acknowledged.
    @Test("a push queued while a batch is open: the batch's write still comes before its ack")
    func pushQueuedMidBatch() throws {
        var (phone, key, payload, run, now) = try Self.transferWaiting()
        _ = try phone.handle(.link(.userInfoReceived(key, payload: payload)), now: now)
        let queued = try phone.handle(.link(.contextQueued(generation: 7)), now: now)
        let ended = try phone.handle(.reported(.turnEnded), now: now)
        let all = queued + ended
        let write = try #require(Self.index(all, Self.isWrite(run)), "the batch's write is gone: \(all)")
        let ack = try #require(Self.index(all, Self.isAck(key)), "\(all)")
        #expect(write < ack)
    }

    /// The soak of session 24: a discard served between two slices of a drain's burst was answered
    /// before the batch ended, so phoned logged the batch's `merged` lines for the run after the
    /// discard was acknowledged ("resurrected" by the kill test's rule for the log).
    @Test("a person's edit while a batch is open: the batch's write, merged line and ack come first")
    func operationEndsBatch() throws {
        var (phone, key, payload, run, now) = try Self.transferWaiting()
        _ = try phone.handle(.link(.userInfoReceived(key, payload: payload)), now: now)
        let discard = try phone.handle(
            .admin(
                AdminRequestID(9), .discard(run: run), freshID: DocumentID(bytes: [UInt8](repeating: 7, count: 16)),
                facts: Self.unlinkedPhone),
            now: now)
        let merged = try #require(
            Self.index(discard) { if case .node(.log(let line)) = $0 { line["outcome"] == "merged" } else { false } },
            "\(discard)")
        let ack = try #require(Self.index(discard, Self.isAck(key)), "\(discard)")
        let reply = try #require(
            Self.index(discard) { if case .node(.reply(AdminRequestID(9), _)) = $0 { true } else { false } })
        #expect(merged < reply && ack < reply, "\(discard)")
        let ended = try phone.handle(.reported(.turnEnded), now: now)
        #expect(Self.index(ended, Self.isAck(key)) == nil, "acknowledged twice: \(ended)")
    }

    @Test("a failed write or fsync: the node logs why and exits 75, and acknowledges nothing")
    func failedFsync() throws {
        var (phone, _, _, _, now) = try Self.transferWaiting()
        let actions = try phone.handle(.reported(.durableWriteFailed(reason: "fsync: EIO")), now: now)
        #expect(actions.count == 2)
        guard case .node(.log(let line)) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(line.level == LogLine.Level.error && line["reason"] == "fsync: EIO")
        #expect(actions.last == .node(.exit(code: 75)))
    }

    /// On a full disk `phonectl complete` got no reply at all: phoned exited after the failed write
    /// and the CLI could only say the connection closed.
    @Test("a write that fails under an admin command: the request hears the reason, then the node exits 75")
    func failedWriteAnswersTheRequest() throws {
        var (phone, _, _, run, now) = try Self.transferWaiting()
        let request = AdminRequestID(9)
        let facts = Self.unlinkedPhone
        let complete = PhoneCommand.set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: nil))
        let edit = try phone.handle(.admin(request, complete, freshID: run, facts: facts), now: now)
        let write = try #require(Self.index(edit, Self.isWrite(run)), "\(edit)")
        let reply = try #require(Self.index(edit) { if case .node(.reply(request, _)) = $0 { true } else { false } })
        #expect(write < reply, "the reply waits for the write")

        // The shell's write fails (ENOSPC): the rest of that list, the reply with it, never ran.
        let failed = try phone.handle(.reported(.durableWriteFailed(reason: "No space left on device")), now: now)
        #expect(failed.count == 3, "\(failed)")
        guard case .node(.reply(request, let response)) = failed[1] else {
            Issue.record("\(failed)")
            return
        }
        #expect(response.status == AdminResponse.Status.error)
        #expect(response.message?.contains("No space left on device") == true, "\(response)")
        #expect(failed.last == .node(.exit(code: 75)))
    }

    @Test("shutdown with a transfer in flight: its write and ack first, then stop serving, then exit at the deadline")
    func shutdownWithTransferInFlight() throws {
        var (phone, key, payload, run, now) = try Self.transferWaiting()
        _ = try phone.handle(.link(.userInfoReceived(key, payload: payload)), now: now)
        let stopping = try phone.handle(.shutdownRequested(signal: "SIGTERM"), now: now)
        let write = try #require(Self.index(stopping, Self.isWrite(run)))
        let ack = try #require(Self.index(stopping, Self.isAck(key)))
        let notify = try #require(stopping.firstIndex(of: .node(.notifyStopping)))
        let close = try #require(stopping.firstIndex(of: .node(.closeServices)))
        #expect(write < ack && ack < notify && notify < close)
        #expect(stopping.contains(.node(.armTimer(.shutdown, at: now.advanced(by: .milliseconds(200))))))
        #expect(!stopping.contains { if case .node(.exit) = $0 { true } else { false } }, "exit waits for the deadline")
        // The turn's end that was asked for finds the batch finished: nothing is acknowledged twice.
        let late = try phone.handle(.reported(.turnEnded), now: now)
        #expect(Self.index(late, Self.isAck(key)) == nil)
        // A second signal changes nothing; the deadline exits 0.
        #expect(try phone.handle(.shutdownRequested(signal: "SIGINT"), now: now).isEmpty)
        // After every write before it, the slot is marked the last one made (`ContextGenerations`).
        #expect(
            try phone.handle(.reported(.timerFired(.shutdown)), now: now) == [
                .node(.markStoppedCleanly), .node(.exit(code: 0)),
            ])
    }

    @Test("an admin command the node refuses: a logged refusal and the reply, nothing written")
    func refusedAdminCommand() throws {
        var (phone, _, _, _, now) = try Self.transferWaiting()
        let unknown = DocumentID(bytes: Array(repeating: 0x5A, count: 16))
        let request = AdminRequestID(7)
        let facts = Self.unlinkedPhone
        let actions = try phone.handle(.admin(request, .pause(run: unknown), freshID: unknown, facts: facts), now: now)
        #expect(actions.count == 2, "\(actions)")
        guard case .node(.log(let line)) = actions.first, case .node(.reply(let replied, let response)) = actions.last
        else {
            Issue.record("\(actions)")
            return
        }
        #expect(line.level == LogLine.Level.notice && line.message == "refused admin request")
        #expect(replied == request)
        #expect(response.status == AdminResponse.Status.refused)
        #expect(response.message?.contains("\(unknown)") == true, "\(response)")
    }

    /// A linked watch edit's actions, `offset` after a first edit (the shell carries an action out
    /// once the writes before it have landed).
    static func watchEdit(at offset: Duration) throws -> (actions: [WatchNode.Action], run: DocumentID) {
        let (pair, run) = try ScriptedScenarioTests.started()
        var watch = try #require(pair.watchNode)
        let facts = try #require(pair.watchFacts)
        _ = try watch.handle(
            .admin(AdminRequestID(76), MessageLedgerTests.complete(run, set: 2), facts: facts), now: pair.watchClock)
        let actions = try watch.handle(
            .admin(AdminRequestID(77), MessageLedgerTests.complete(run, set: 1), facts: facts),
            now: pair.watchClock.advanced(by: offset))
        return (actions, run)
    }

    static func isEditMessage(_ action: WatchNode.Action) -> Bool {
        if case .node(.link(.sendMessage(_, _, _, .edit, _))) = action { true } else { false }
    }

    static func isCacheWrite(_ run: DocumentID) -> (WatchNode.Action) -> Bool {
        { if case .store(.persistWorkout(let written)) = $0 { written.id == run } else { false } }
    }

    static func isReply(_ action: WatchNode.Action) -> Bool {
        if case .node(.reply(AdminRequestID(77), _)) = action { true } else { false }
    }

    /// The message goes first, so the phone's write runs beside the watch's; the reply still waits
    /// for the write. Session 19 tried it and the simulator's seed 9000682 found what it costs: a
    /// cache write that fails (EIO) answered the edit with a plain error after the phone took it. The
    /// answer now says the edit may have reached the phone (below).
    @Test("a watch edit: the message, then the durable cache write, the file's publish, the reply last")
    func watchEditSendsFirst() throws {
        let (actions, run) = try Self.watchEdit(at: .milliseconds(10))
        let message = try #require(actions.firstIndex(where: Self.isEditMessage), "\(actions)")
        let write = try #require(actions.firstIndex(where: Self.isCacheWrite(run)), "\(actions)")
        let publish = try #require(actions.firstIndex(of: .store(.publishWorkout(run))), "\(actions)")
        let reply = try #require(actions.firstIndex(where: Self.isReply), "\(actions)")
        #expect(message < write && write < publish && publish < reply, "\(actions)")
        #expect(actions.filter { $0 == .store(.publishWorkout(run)) }.count == 1)
    }

    /// The simulator's seed 9006257: the clock's mark was written after the edit's message, so a
    /// failed write left the message's stamp past the mark on disk, and a restarted clock stepped
    /// back stamped the next acknowledged edit below the one the phone had taken.
    @Test("a watch edit past the clock's mark: the mark's write comes before the message")
    func watchEditClockFirst() throws {
        let (actions, _) = try Self.watchEdit(at: ClockLease.lease * 2)
        let clock = try #require(actions.firstIndex { if case .node(.persistClock) = $0 { true } else { false } })
        let message = try #require(actions.firstIndex(where: Self.isEditMessage), "\(actions)")
        #expect(clock < message, "\(actions)")
    }

    @Test("a watch edit whose write fails after its message: the answer says the phone may have it")
    func watchEditWriteFails() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        var watch = try #require(pair.watchNode)
        let (facts, now) = (try #require(pair.watchFacts), pair.watchClock)
        _ = try watch.handle(
            .admin(AdminRequestID(77), MessageLedgerTests.complete(run, set: 1), facts: facts), now: now)
        let failed = try watch.handle(.reported(.durableWriteFailed(reason: "EIO")), now: now)
        let answer = failed.compactMap { action -> AdminResponse? in
            if case .node(.reply(AdminRequestID(77), let response)) = action { response } else { nil }
        }
        #expect(answer.count == 1 && answer.first?.status == .error)
        #expect(answer.first?.message?.contains(WatchNode.editMayHaveReachedPhone) == true, "\(answer)")
        #expect(failed.last == .node(.exit(code: 75)))

        // A query answered in the list before the failure hears only why.
        _ = try watch.handle(.admin(AdminRequestID(78), .status, facts: facts), now: now)
        let again = try watch.handle(.reported(.durableWriteFailed(reason: "EIO")), now: now)
        #expect(
            !again.contains {
                if case .node(.reply(_, let r)) = $0 { r.message?.contains("phone") == true } else { false }
            })
    }
}

@Suite("Publishing a run's file: after what follows its durable write, before the replies")
struct PublishingTests {
    static func isPublish(_ run: DocumentID) -> (PhoneNode.Action) -> Bool {
        { if case .store(.publishWorkout(let id, _)) = $0 { id == run } else { false } }
    }

    /// `event`, and the end of the turn it asks for, as the shell feeds them.
    static func turn(_ phone: inout PhoneNode, _ event: PhoneNode.Event, now: Timestamp) throws -> [PhoneNode.Action] {
        var actions = try phone.handle(event, now: now)
        if actions.contains(.node(.callAtEndOfTurn)) { actions += try phone.handle(.reported(.turnEnded), now: now) }
        return actions
    }

    @Test("a watch edit reaching the linked phone: the write, the push, then the file, then the message's answer")
    func watchEditAtPhone() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        var watch = try #require(pair.watchNode)
        let edit = try watch.handle(
            .admin(AdminRequestID(77), MessageLedgerTests.complete(run, set: 1), facts: try #require(pair.watchFacts)),
            now: pair.watchClock)
        var message: (payload: [UInt8], wantsReply: Bool)?
        for case .node(.link(.sendMessage(let payload, let wantsReply, _, .edit, _))) in edit {
            message = (payload, wantsReply)
        }
        let sent = try #require(message, "\(edit)")
        var phone = try #require(pair.phoneNode)
        let received = LinkNotification.messageReceived(id: 1, payload: sent.payload, wantsReply: sent.wantsReply)
        let actions = try Self.turn(&phone, .link(received), now: pair.phoneClock)
        let write = try #require(actions.firstIndex(where: NodeActionTests.isWrite(run)), "\(actions)")
        let push = try #require(
            actions.firstIndex { if case .node(.link(.updateContext)) = $0 { true } else { false } }, "\(actions)")
        let publish = try #require(actions.firstIndex(where: Self.isPublish(run)), "\(actions)")
        let answer = try #require(
            actions.firstIndex { if case .node(.link(.answerMessage)) = $0 { true } else { false } }, "\(actions)")
        #expect(write < push && push < publish && publish < answer, "\(actions)")
        #expect(actions.filter(Self.isPublish(run)).count == 1)
    }

    @Test("a phone edit: the file published before the reply")
    func phoneEdit() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        var phone = try #require(pair.phoneNode)
        let edit = PhoneCommand.set(.complete(run: run, exercise: 1, set: 2, reps: 5, weight: 60))
        let actions = try Self.turn(
            &phone, .admin(AdminRequestID(9), edit, freshID: run, facts: try #require(pair.phoneFacts)),
            now: pair.phoneClock)
        let write = try #require(actions.firstIndex(where: NodeActionTests.isWrite(run)), "\(actions)")
        let publish = try #require(actions.firstIndex(where: Self.isPublish(run)), "\(actions)")
        let reply = try #require(
            actions.firstIndex { if case .node(.reply) = $0 { true } else { false } }, "\(actions)")
        #expect(write < publish && publish < reply, "\(actions)")
    }
}

/// The phone node the simulator holds, inside a link engine of its own.
@Suite("Linked node with the phone inside")
struct LinkedPhoneTests {
    /// Proofs that always pass: these tests never run a handshake.
    struct NoAuthenticator: HandshakeAuthenticator {
        func proof(for transcript: [UInt8]) -> [UInt8] { Array(repeating: 0, count: 32) }
        func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool { true }
    }

    @Test("with the phone inside: a transfer's document is written before its mark, and the mark before any ack")
    func phoneTransferOrder() throws {
        let (phone, key, payload, _, now) = try NodeActionTests.transferWaiting()
        let linkNow = LinkInstant(.seconds(5))
        let engine = LinkEngine(
            configuration: LinkConfiguration(role: .phone),
            instance: InstanceID(bytes: Array(repeating: 1, count: 16))!,
            authenticator: NoAuthenticator(),
            restored: RestoredLinkState(
                knownPeer: InstanceID(bytes: Array(repeating: 9, count: 16))!,
                outboxQueue: InstanceID(bytes: Array(repeating: 2, count: 16))!,
                complicationQueue: InstanceID(bytes: Array(repeating: 3, count: 16))!),
            seed: 1)
        var node = LinkedNode(phone, link: engine)
        var actions = try node.handle(
            .inner(.link(.userInfoReceived(key, payload: payload))), now: now, linkNow: linkNow)
        actions += try node.handle(.inner(.reported(.turnEnded)), now: now, linkNow: linkNow)
        let written = try #require(
            actions.firstIndex { if case .inner(.store(.writeWorkout)) = $0 { true } else { false } })
        let marked = try #require(
            actions.firstIndex {
                if case .link(.persistTransferMark(key.queue, let mark), _) = $0 {
                    mark.highest == key.sequence
                } else {
                    false
                }
            })
        #expect(written < marked)
        #expect(!actions[..<marked].contains { if case .link(.send(_, .userInfoAck), _) = $0 { true } else { false } })
    }
}
