import SyncEngine
import Testing
import WorkoutModel

/// Copies of a run older than the phone's (the Seams issue, item 1): another device's sync, or a file
/// that holds less than the index says. Merged, or taken when it is all the phone has, and never
/// asked for again and again.
@Suite("SyncEngine: older copies")
struct OlderCopyTests {
    /// An engine keeping one recent run: run 600 completed, then run 601 completed, which evicts 600.
    private func engineWithEvictedRun() throws -> (SyncEngine, older: WorkoutDocument, newer: WorkoutDocument) {
        var engine = SyncEngine(settings: nil, policy: PushPolicy(recentLimit: 1, recentWindow: .seconds(86_400)))
        _ = engine.handle(.gatherFinished(now: t0))
        _ = engine.handle(.linkActivated(now: t0))
        _ = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [squat]), now: t0)
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(600), endingOthers: false), now: at(1))
        _ = try engine.perform(.completeSet(runID: id(600), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let older = try #require(engine.run(id(600)))
        _ = try engine.perform(.completeSet(runID: id(600), logIndex: 0, setIndex: 1, reps: 5, weight: 100), now: at(3))
        let newer = try #require(engine.run(id(600)))
        #expect(newer.status == .completed)
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(601), endingOthers: false), now: at(4))
        _ = try engine.perform(.endKeepingProgress(runID: id(601)), now: at(5))
        _ = engine.handle(.pushQueued(generation: 9))
        _ = engine.handle(.contextAcknowledged(generation: 9, now: at(6)))
        _ = try engine.perform(.setSettings(Settings(restSeconds: 61)), now: at(7))
        #expect(engine.run(id(600)) == nil, "evicted: only its summary is in memory")
        return (engine, older, newer)
    }

    @Test("a load that finds the file older than the index is asked for once more, then taken: never forever")
    func staleLoadIsBounded() throws {
        var (engine, older, _) = try engineWithEvictedRun()
        // A phone that restarted since it dropped the run: the file is all there is of it.
        engine.evictedCopies = []
        // The newer run is discarded: the push wants run 600 back, whose file now holds an older copy.
        let discarded = try engine.perform(.discard(runID: id(601)), now: at(8))
        #expect(discarded.contains(.loadRuns([id(600): older.startedAt])))
        let first = engine.handle(.runsLoaded([older], unreadable: [], now: at(9)))
        #expect(first.contains(.loadRuns([id(600): older.startedAt])), "a late load may only be late: read again")
        let second = engine.handle(.runsLoaded([older], unreadable: [], now: at(10)))
        #expect(!second.contains { if case .loadRuns = $0 { true } else { false } })
        #expect(pushes(second).first?.0.workouts == [older])
        #expect(engine.run(id(600)) == older && engine.index[id(600)]?.version == older.version)
    }

    @Test(
        "an older copy of a run the phone only summarises is checked against the file: a late echo changes nothing, another device's copy is taken"
    )
    func olderCopyOfEvictedRun() throws {
        var (engine, older, newer) = try engineWithEvictedRun()
        // A phone that restarted since it dropped the run: the file is all there is of it.
        engine.evictedCopies = []
        let actions = engine.handle(.externalChange(.documentChanged(.workout(older)), now: at(8)))
        #expect(
            actions == [
                .loadRuns([id(600): older.startedAt]),
                .log(.externalOlderCopyOfSummary(id(600), version: older.version, had: newer.version)),
            ])
        // A late echo: the file holds the phone's newer copy.
        var echo = engine
        _ = echo.handle(.runsLoaded([newer], unreadable: [], now: at(9)))
        #expect(echo.index[id(600)]?.version == newer.version && echo.run(id(600)) == newer)
        // Another device's copy replaced the file: read older twice, it is all there is of the run.
        _ = engine.handle(.runsLoaded([older], unreadable: [], now: at(9)))
        #expect(engine.index[id(600)]?.version == newer.version, "one read may be late")
        let second = engine.handle(.runsLoaded([older], unreadable: [], now: at(10)))
        #expect(second.contains(.log(.staleRunAdopted(id(600), version: older.version, had: newer.version))))
        #expect(engine.index[id(600)]?.version == older.version && engine.run(id(600)) == older)
        // The taken copy is in progress, so it rides in the push again (simulator seed 135715: it
        // waited for the next push, which never came).
        #expect(pushes(second).first?.0.workouts.contains(older) == true)
    }

    /// Found by the simulator (seed 462142): another device put an older copy in the file while the
    /// run was in memory, and the run left memory before the watcher said so. The load that followed
    /// found the file older than the index twice and took it: an acknowledged watch edit was gone.
    @Test("an older copy in the file of a run the phone dropped from memory since merges with the phone's copy")
    func olderCopyOfRecentlyEvictedRun() throws {
        var (engine, older, newer) = try engineWithEvictedRun()
        let actions = engine.handle(.externalChange(.documentChanged(.workout(older)), now: at(8)))
        #expect(actions.contains(.loadRuns([id(600): older.startedAt])))
        let loaded = engine.handle(.runsLoaded([older], unreadable: [], now: at(9)))
        #expect(loaded.contains(.writeWorkout(newer)), "the phone's copy goes back over the older file")
        #expect(loaded.contains(.log(.evictedCopyRestored(id(600), version: older.version, had: newer.version))))
        #expect(!loaded.contains { if case .loadRuns = $0 { true } else { false } }, "nothing to read again")
        #expect(engine.index[id(600)]?.version == newer.version)
        // Still out of the recent window: the push drops it from memory again, its copy kept.
        #expect((engine.run(id(600)) ?? engine.evictedCopies.first { $0.id == id(600) }) == newer)
    }

    /// Found by the simulator (seed 27541): another device's copy, made from the file before the
    /// phone wrote a watch edit into it, reached the phone after the run left the working set, and was
    /// taken whole over the file: the acknowledged watch edit was gone.
    @Test("a newer copy of a run the phone only summarises is merged with what the file holds, once loaded")
    func newerCopyOfEvictedRunMerges() throws {
        var (engine, older, newer) = try engineWithEvictedRun()
        // The other device skipped the exercise on the older file (a later stamp); the file has the
        // phone's set 2, which the other device's copy lacks.
        var theirs = older
        try theirs.skipLog(logID: older.logs[0].id, at: Stamp(time: at(31), origin: .phone))
        let asked = engine.handle(.externalChange(.documentChanged(.workout(theirs)), now: at(32)))
        #expect(asked == [.loadRuns([id(600): older.startedAt])])
        let loaded = engine.handle(.runsLoaded([newer], unreadable: [], now: at(33)))
        let written = try #require(writtenRuns(loaded).first)
        #expect(written == (try newer.merged(with: theirs)))
        #expect(written.logs[0].mark == .skipped, "their later edit")
        #expect(written.logs[0].sets[1] == newer.logs[0].sets[1], "and the phone's set 2, which their copy lacked")
    }

    @Test("another device's older copy of a run in the working set merges, and the phone's newer copy goes back")
    func olderCopyOfLoadedRun() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let older = try #require(engine.run(id(5)))
        _ = try engine.perform(.undoSet(runID: id(5), logIndex: 0, setIndex: 0), now: at(3))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 7, weight: 100), now: at(4))
        let newer = try #require(engine.run(id(5)))
        let actions = engine.handle(.externalChange(.documentChanged(.workout(older)), now: at(5)))
        #expect(writtenRuns(actions) == [newer])
        #expect(engine.run(id(5)) == newer)
    }
}
