import AdminCommands
import LinkProtocol
import Nodes
import Testing
import WorkoutModel

/// Whole action lists: the order the shell carries them out in is the durability rule.
@Suite("Node actions: durability and shutdown as whole, ordered action lists")
struct NodeActionTests {
    /// A phone node that has the started run, and a watch update of it waiting as transfer 1.
    static func transferWaiting() throws -> (
        phone: PhoneNode, key: TransferKey, payload: [UInt8], run: DocumentID, now: Timestamp
    ) {
        var (pair, run) = try BackToBackTests.started()
        pair.disconnect()
        // Past the phone's clock mark (`ClockLease`), so the ingest's stamp moves it.
        pair.advance(by: ClockLease.lease * 2)
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        let transfer = try #require(pair.outbox.last)
        let key = TransferKey(queue: NodePair.watchInstance, sequence: transfer.sequence)
        return (pair.phone, key, transfer.payload, run, pair.now)
    }

    /// What the shell knows when an admin request arrives at an unlinked phone.
    static let unlinkedPhone = ShellFacts(
        link: LinkStatus(
            role: .phone, instance: NodePair.phoneInstance, activated: true,
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

    /// `phonectl show` of a run holding `1e308` (or a document's `activeSeconds` of `1e300`) trapped
    /// phoned in `Int(value)`.
    @Test("a number prints whole where an Int holds it, and as Swift writes it otherwise, never trapping")
    func numbersPrint() {
        #expect(format(60) == "60" && format(62.5) == "62.5" && format(0) == "0")
        #expect(format(1e300) == "1e+300" && format(-1e19) == "-1e+19")
        #expect(format(9_007_199_254_740_992) == "9007199254740992")
    }

    /// A linked watch edit's actions, `offset` after a first edit (the shell carries an action out
    /// once the writes before it have landed).
    static func watchEdit(at offset: Duration) throws -> (actions: [WatchNode.Action], run: DocumentID) {
        var (pair, run) = try BackToBackTests.started()
        var watch = pair.watch
        _ = try watch.handle(
            .admin(AdminRequestID(76), MessageLedgerTests.complete(run, set: 2), facts: pair.facts(.watch)),
            now: pair.now)
        pair.advance(by: offset)
        let actions = try watch.handle(
            .admin(AdminRequestID(77), MessageLedgerTests.complete(run, set: 1), facts: pair.facts(.watch)),
            now: pair.now)
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
        var (pair, run) = try BackToBackTests.started()
        var watch = pair.watch
        _ = try watch.handle(
            .admin(AdminRequestID(77), MessageLedgerTests.complete(run, set: 1), facts: pair.facts(.watch)),
            now: pair.now)
        let failed = try watch.handle(.reported(.durableWriteFailed(reason: "EIO")), now: pair.now)
        let answer = failed.compactMap { action -> AdminResponse? in
            if case .node(.reply(AdminRequestID(77), let response)) = action { response } else { nil }
        }
        #expect(answer.count == 1 && answer.first?.status == .error)
        #expect(answer.first?.message?.contains(WatchNode.editMayHaveReachedPhone) == true, "\(answer)")
        #expect(failed.last == .node(.exit(code: 75)))

        // A query answered in the list before the failure hears only why.
        _ = try watch.handle(.admin(AdminRequestID(78), .status, facts: pair.facts(.watch)), now: pair.now)
        let again = try watch.handle(.reported(.durableWriteFailed(reason: "EIO")), now: pair.now)
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

    @Test("a watch edit reaching the linked phone: the write, the push, then the file, then the message's answer")
    func watchEditAtPhone() throws {
        var (pair, run) = try BackToBackTests.started()
        let before = pair.phoneActions.count
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        let actions = Array(pair.phoneActions[before...])
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
        var (pair, run) = try BackToBackTests.started()
        let before = pair.phoneActions.count
        _ = pair.phonectl(.set(.complete(run: run, exercise: 1, set: 2, reps: 5, weight: 60)))
        let actions = Array(pair.phoneActions[before...])
        let write = try #require(actions.firstIndex(where: NodeActionTests.isWrite(run)), "\(actions)")
        let publish = try #require(actions.firstIndex(where: Self.isPublish(run)), "\(actions)")
        let reply = try #require(
            actions.firstIndex { if case .node(.reply) = $0 { true } else { false } }, "\(actions)")
        #expect(write < publish && publish < reply, "\(actions)")
    }

    @Test("each run written once is published once, at the folder of its last write; no write, nothing added")
    func oncePerRun() {
        let run = DocumentID(bytes: Array(repeating: 0xA1, count: 16))
        let split = SplitDocument(
            id: DocumentID(bytes: Array(repeating: 0xB2, count: 16)), name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 1, targetReps: 5, targetWeight: 80)
            ],
            updatedAt: Timestamp(microsecondsSinceEpoch: 0))
        let may = Timestamp(microsecondsSinceEpoch: 1_780_000_000_000_000)
        let june = Timestamp(microsecondsSinceEpoch: 1_782_000_000_000_000)
        guard var first = try? WorkoutDocument.start(from: split, id: run, at: Stamp(time: may, origin: .phone)) else {
            Issue.record("no run")
            return
        }
        var second = first
        second.startedAt = june
        first.splitName = "first"
        let actions: [PhoneNode.Action] = [
            .store(.writeWorkout(first)), .node(.callAtEndOfTurn), .store(.writeWorkout(second)),
            .node(.notifyStopping),
        ]
        #expect(
            PhoneNode.publishingWrites(actions) == actions + [.store(.publishWorkout(run, startedAt: june))])
        #expect(PhoneNode.publishingWrites([.node(.notifyStopping)]) == [.node(.notifyStopping)])
    }
}
