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
        guard case .transferUserInfo(.workoutUpdate(_, let madeAgainst))? = engine.handle(
            .editRequested(.skipLog(logID: run.log(1)), runID: run.id, now: at(3))
        ).last else {
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
}
