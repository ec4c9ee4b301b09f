import Testing
import WatchEngine
import WorkoutModel

@Suite("WatchEngine: phone epochs")
struct PhoneEpochTests {
    func epochContext(_ runs: [WorkoutDocument], epoch: Timestamp?, splits: [SplitDocument] = [twoExerciseSplit()])
        -> [UInt8]
    {
        var pushed = context(runs, splits: splits)
        pushed.epoch = epoch
        return bytes(pushed)
    }

    @Test("a newer epoch replaces the cache wholesale, local edits included, and is persisted")
    func newerEpochWins() throws {
        var engine = WatchEngine()
        let run = try newRun(100)
        _ = engine.handle(.contextReceived(epochContext([run], epoch: at(0)), now: at(1)))
        _ = engine.handle(.editRequested(.skipLog(logID: run.log(0)), runID: run.id, now: at(2)))
        #expect(engine.cache.hasUndeliveredEdit(run.id))
        guard
            case .transferUserInfo(.workoutUpdate(_, let madeAgainst))? = engine.handle(
                .editRequested(.skipLog(logID: run.log(1)), runID: run.id, now: at(3))
            ).last
        else {
            Issue.record("the edit was not forwarded")
            return
        }
        #expect(madeAgainst == at(0), "an edit names the epoch it was made against")

        let reset = try newRun(200)
        let pushed = epochContext([reset], epoch: at(50), splits: [twoExerciseSplit(2)])
        let actions = engine.handle(.contextReceived(pushed, now: at(60)))
        #expect(actions.contains(.persistPhoneEpoch(PhoneEpochRecord(at(50)))))
        #expect(actions.contains(.deleteWorkout(run.id)))
        #expect(engine.cache.workouts == [reset.id: reset])
        #expect(engine.cache.undeliveredEdits.isEmpty && engine.phoneEpoch == at(50))
    }

    @Test(
        "a message that fails after a reset phone's push falls back to a transfer under the epoch it was made against"
    )
    func failedMessageKeepsItsEpoch() throws {
        var engine = WatchEngine()
        let run = try newRun(100)
        _ = engine.handle(.contextReceived(epochContext([run], epoch: at(0)), now: at(1)))
        _ = engine.handle(.reachabilityChanged(true))
        let edited = engine.handle(.editRequested(.skipLog(logID: run.log(0)), runID: run.id, now: at(2)))
        let sent = edited.compactMap { action -> (MessageToken, Timestamp?)? in
            guard case .sendMessage(let token, .workoutUpdate(_, let epoch)) = action else { return nil }
            return (token, epoch)
        }
        guard let (token, madeAgainst) = sent.first else {
            Issue.record("the edit was not sent as a message: \(edited)")
            return
        }
        #expect(madeAgainst == at(0))
        // The phone is reset while the message is in flight; its new state arrives first.
        _ = engine.handle(.contextReceived(epochContext([], epoch: at(50), splits: []), now: at(60)))
        let failed = engine.handle(.messageSendFailed(token, reason: "link lost"))
        let fallbacks = failed.compactMap { action -> Timestamp?? in
            guard case .transferUserInfo(.workoutUpdate(_, let epoch)) = action else { return nil }
            return epoch
        }
        guard let fallback = fallbacks.first else {
            Issue.record("no fallback transfer: \(failed)")
            return
        }
        #expect(fallback == at(0), "the old phone's edit: the reset phone vetoes it")
        #expect(engine.cache.undeliveredEdits.isEmpty)
    }

    /// Found by the simulator (seed 779, a crash while a message was in flight): the record of a new
    /// epoch landed before the old epoch's runs were pruned; the restarted watch took those runs for
    /// edits of the new phone's state and wrote them into it. And the context re-applied at start-up
    /// names no sender, which retired the phone the record named (the same one, its documents wiped).
    @Test("a new epoch's record lands after the old epoch's runs are pruned; a start-up re-apply retires no phone")
    func epochRecordAfterPrune() throws {
        var engine = WatchEngine()
        let old = try newRun(100)
        _ = engine.handle(.contextReceivedFrom(sender: "A", epochContext([old], epoch: at(0)), now: at(1)))
        let actions = engine.handle(
            .contextReceivedFrom(sender: "A", epochContext([], epoch: at(50), splits: []), now: at(60)))
        let pruned = try #require(actions.firstIndex(of: .deleteWorkout(old.id)))
        let record = try #require(actions.firstIndex(of: .persistPhoneEpoch(PhoneEpochRecord(at(50), sender: "A"))))
        #expect(pruned < record)

        // Restarted before the record landed: the old record, the old run's file, the new context.
        var restarted = WatchEngine(
            cache: WatchCache(restoringWorkouts: [old], splits: []),
            phoneEpochRecord: PhoneEpochRecord(at(0), sender: "A"))
        let started = restarted.handle(.started(lastContext: epochContext([], epoch: at(50), splits: []), now: at(70)))
        #expect(started.contains(.deleteWorkout(old.id)))
        #expect(!started.contains { if case .transferUserInfo = $0 { true } else { false } }, "\(started)")
        #expect(restarted.retiredSenders.isEmpty && restarted.phoneSender == "A")
    }

    @Test("a context of an older epoch, or of none once one is known, is skipped whole")
    func olderEpochSkipped() throws {
        let run = try newRun(100)
        var engine = WatchEngine(phoneEpoch: at(50))
        _ = engine.handle(.contextReceived(epochContext([run], epoch: at(50)), now: at(51)))
        let cache = engine.cache
        for older in [at(49), nil] {
            let actions = engine.handle(.contextReceived(epochContext([], epoch: older, splits: []), now: at(60)))
            #expect(actions.count == 1 && engine.cache == cache, "\(actions)")
            #expect(engine.lastSkipped?.description.contains("older than") == true)
            #expect(engine.phoneEpoch == at(50))
        }
        // At start-up too: a persisted context of an older epoch is not re-applied.
        var restarted = WatchEngine(cache: cache, phoneEpoch: at(50))
        _ = restarted.handle(.started(lastContext: epochContext([], epoch: at(10), splits: []), now: at(70)))
        #expect(restarted.cache.workouts[run.id] != nil)
    }

    /// Found by the simulator (seed 248 with --clock-steps-back): a wiped phone whose clock is
    /// behind the old phone's epoch was refused for good.
    @Test("a never-seen phone wins even with an older epoch; the phone it replaced, restored, never does")
    func wipedPhoneWithSlowClock() throws {
        var engine = WatchEngine()
        let old = try newRun(100)
        _ = engine.handle(.contextReceivedFrom(sender: "A", epochContext([old], epoch: at(50)), now: at(51)))
        #expect(engine.phoneSender == "A")

        // Phone A is wiped; as phone B its clock is behind A's epoch.
        let fresh = try newRun(200)
        let actions = engine.handle(
            .contextReceivedFrom(
                sender: "B", epochContext([fresh], epoch: at(40), splits: [twoExerciseSplit(2)]), now: at(60)))
        #expect(engine.cache.workouts == [fresh.id: fresh], "the wiped phone wins wholesale")
        #expect(actions.contains(.persistPhoneEpoch(PhoneEpochRecord(at(40), sender: "B", retiredSenders: ["A"]))))

        // A's state restored from a backup (instance A, epoch 50, newer than B's): refused.
        let cache = engine.cache
        _ = engine.handle(.contextReceivedFrom(sender: "A", epochContext([old], epoch: at(50)), now: at(70)))
        #expect(engine.cache == cache)
        #expect(engine.lastSkipped?.description.contains("older than") == true)

        // An older backup of B itself: refused by its epoch, as before.
        _ = engine.handle(.contextReceivedFrom(sender: "B", epochContext([], epoch: at(30), splits: []), now: at(80)))
        #expect(engine.cache == cache)

        // Across a restart the retired instances are kept.
        var restarted = WatchEngine(
            cache: cache, phoneEpochRecord: PhoneEpochRecord(at(40), sender: "B", retiredSenders: ["A"]))
        _ = restarted.handle(.contextReceivedFrom(sender: "A", epochContext([old], epoch: at(45)), now: at(90)))
        #expect(restarted.cache == cache)
    }

    /// Found by the simulator (seed 8191): the watch went down after a reset phone's push had
    /// replaced its cache but before the epoch record landed; at start-up the persisted context was
    /// re-applied without its sender, so the old phone was never retired, and its state restored
    /// from a backup won again.
    @Test("the context re-applied at start-up names its sender: the phone it replaced is retired")
    func restartBeforeTheEpochRecordLanded() throws {
        let old = try newRun(100)
        let fresh = try newRun(200)
        // On disk: the record still names A's epoch; the received context is B's (a reset phone).
        var engine = WatchEngine(phoneEpochRecord: PhoneEpochRecord(at(50), sender: "A", retiredSenders: nil))
        _ = engine.handle(
            .started(
                lastContext: epochContext([fresh], epoch: at(60), splits: [twoExerciseSplit(2)]), sender: "B",
                now: at(70)))
        #expect(engine.phoneEpoch == at(60) && engine.phoneSender == "B")
        #expect(engine.retiredSenders == ["A"])
        // A restored from its backup: refused.
        let cache = engine.cache
        _ = engine.handle(.contextReceivedFrom(sender: "A", epochContext([old], epoch: at(50)), now: at(80)))
        #expect(engine.cache == cache)
    }
}
