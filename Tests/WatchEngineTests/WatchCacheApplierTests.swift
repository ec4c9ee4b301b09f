import Testing
import WatchEngine
import WorkoutModel

@Suite("Watch cache applier")
struct WatchCacheApplierTests {
    /// A cache that has applied a context with runs 100 and 101.
    func seededCache() throws -> WatchCache {
        var cache = WatchCache()
        _ = WatchCacheApplier.apply(context([try newRun(100), try newRun(101, at: at(1))]), to: &cache)
        return cache
    }

    @Test("upserts every pushed document and prunes every absent one")
    func upsertAndPrune() throws {
        var cache = try seededCache()
        let changed = try newRun(100).setDoneOnPhone(log: 0, at: at(10))
        let added = try newRun(102, at: at(5))
        let split2 = twoExerciseSplit(2)

        let report = WatchCacheApplier.apply(context([changed, added], splits: [split2]), to: &cache)

        var expected = ContextApplyReport()
        expected.upsertedWorkouts = [id(100), id(102)]
        expected.prunedWorkouts = [id(101)]
        expected.upsertedSplits = [id(2)]
        expected.prunedSplits = [id(1)]
        #expect(report == expected)
        #expect(cache.workouts == [id(100): changed, id(102): added])
        #expect(cache.splits == [id(2): split2])
        #expect(cache.activeRuns.map(\.id) == [id(100), id(102)])
    }

    @Test("a context that does not decode is skipped: no upsert, no prune, cache identical")
    func skipOnDecodeFailure() throws {
        var cache = try seededCache()
        let before = cache
        let outcome = WatchCacheApplier.apply(contextBytes: Array(#"{"schemaVersion":1,"splits":[]}"#.utf8), to: &cache)
        guard case .skipped(.malformed) = outcome else {
            Issue.record("expected a malformed skip, got \(outcome)")
            return
        }
        #expect(cache == before)
        #expect(WatchCacheApplier.apply(contextBytes: Array("not json".utf8), to: &cache) != .applied(.init()))
        #expect(cache == before)
    }

    @Test("a context of an unknown schema version is skipped and says which version")
    func unknownSchemaVersionSkipped() throws {
        var cache = try seededCache()
        let before = cache
        var future = context([])
        future.schemaVersion = 2
        let outcome = WatchCacheApplier.apply(contextBytes: bytes(future), to: &cache)
        #expect(outcome == .skipped(.unsupportedSchemaVersion(type: "ApplicationContext", found: 2, supported: 1)))
        #expect(cache == before)
    }

    @Test("decoded bytes apply like the decoded value")
    func bytesApply() throws {
        var cache = WatchCache()
        let run = try newRun(100)
        let outcome = WatchCacheApplier.apply(contextBytes: bytes(context([run])), to: &cache)
        var expected = ContextApplyReport()
        expected.upsertedWorkouts = [id(100)]
        expected.upsertedSplits = [id(1)]
        #expect(outcome == .applied(expected))
        #expect(cache.workouts[id(100)] == run)
    }

    @Test("a pushed copy without an undelivered local edit is merged with it: neither side's edit is lost")
    func noRollbackOfUndeliveredEdit() throws {
        var cache = try seededCache()
        var editor = WatchEditor()
        let local = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(20))
        let phoneCopy = try newRun(100).setDoneOnPhone(log: 0, at: at(10))

        let report = WatchCacheApplier.apply(context([phoneCopy, try newRun(101, at: at(1))]), to: &cache)

        var expected = ContextApplyReport()
        expected.keptLocal = [id(100)]
        expected.upsertedWorkouts = [id(100)]
        #expect(report == expected)
        let merged = try #require(cache.workouts[id(100)])
        #expect(merged == (try local.merged(with: phoneCopy)))
        #expect(merged.isPaused)
        #expect(merged.logs[0].sets[0].isDone)
        #expect(cache.undeliveredEdits.mapValues(\.time) == [id(100): at(20)])
    }

    @Test(
        "the echo, or a phone copy that merged the local edit and added its own, confirms it and clears the mark",
        arguments: [0, 7])
    func echoClearsMark(secondsLater: Int) throws {
        var cache = try seededCache()
        var editor = WatchEditor()
        let local = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(20))
        let phoneCopy = secondsLater == 0 ? local : try local.setDoneOnPhone(log: 0, at: at(20 + secondsLater))

        let report = WatchCacheApplier.apply(context([phoneCopy, try newRun(101, at: at(1))]), to: &cache)

        var expected = ContextApplyReport()
        expected.confirmedEdits = [id(100)]
        expected.upsertedWorkouts = secondsLater == 0 ? [] : [id(100)]
        #expect(report == expected)
        #expect(cache.workouts[id(100)] == phoneCopy)
        #expect(cache.undeliveredEdits.isEmpty)
    }

    /// Seams 6: the phone leaves runs out for other reasons than a delete (window, cap, size); a run
    /// pruned with its edit in flight lost the edit when watchd died before it landed. The engine
    /// prunes it once the edit is delivered (a deleted run's edit is then vetoed: tombstones win).
    @Test("a run absent from the push is kept while it carries an undelivered edit; one without is pruned")
    func absentRunWithPendingEditIsHeld() throws {
        var cache = try seededCache()
        var editor = WatchEditor()
        _ = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(20))
        let edited = try #require(cache.workouts[id(100)])

        let report = WatchCacheApplier.apply(context([try newRun(101, at: at(1))]), to: &cache)

        #expect(report.prunedWorkouts == [])
        #expect(report.heldUndelivered == [id(100)])
        #expect(cache.workouts[id(100)] == edited)
        #expect(cache.undeliveredEdits[id(100)] == edited.version)
    }

    @Test("applying the same context twice changes nothing the second time")
    func idempotent() throws {
        var cache = WatchCache()
        let pushed = context(
            [try newRun(100), try newRun(101, at: at(1))], settings: Settings(restSeconds: 60),
            locks: EditLocks(editingWorkoutID: id(101)))
        let first = WatchCacheApplier.apply(pushed, to: &cache)
        let afterFirst = cache
        let second = WatchCacheApplier.apply(pushed, to: &cache)
        #expect(first.changedCache)
        #expect(second == ContextApplyReport())
        #expect(cache == afterFirst)
    }

    @Test("settings and edit locks are replaced by the pushed ones, cleared locks included")
    func settingsAndLocksReplaced() throws {
        var cache = WatchCache()
        let settings = Settings(restSeconds: 120, doneCountdownSeconds: 3, weightUnit: .pounds)
        let locks = EditLocks(editingWorkoutID: id(100), editingSplitID: id(1))
        let report = WatchCacheApplier.apply(context([], settings: settings, locks: locks), to: &cache)
        #expect(report.settingsChanged && report.editLocksChanged)
        #expect(cache.settings == settings)
        #expect(cache.editLocks == locks)

        let cleared = WatchCacheApplier.apply(context([], settings: settings), to: &cache)
        #expect(!cleared.settingsChanged && cleared.editLocksChanged)
        #expect(cache.editLocks == EditLocks())
    }

    @Test("restored runs count as undelivered until a push confirms them; an older push keeps the file")
    func restoredRunsAreMarked() throws {
        let phoneCopy = try newRun(100)
        let localFile = try phoneCopy.setDoneOnPhone(log: 0, at: at(30))
        var cache = WatchCache(restoringWorkouts: [localFile, try newRun(101, at: at(1))], splits: [])
        #expect(cache.undeliveredEdits.mapValues(\.time) == [id(100): at(30), id(101): at(1)])

        let report = WatchCacheApplier.apply(context([phoneCopy, try newRun(101, at: at(1))]), to: &cache)

        #expect(report.keptLocal == [id(100)])
        #expect(report.confirmedEdits == [id(101)])
        #expect(cache.workouts[id(100)] == localFile)
        #expect(cache.undeliveredEdits.mapValues(\.time) == [id(100): at(30)])
    }

    @Test("the active list holds not-started and in-progress runs, oldest start first")
    func activeRunsSorted() throws {
        var cache = WatchCache()
        let done = try newRun(103, at: at(-50)).completedOnPhone(at: at(-10))
        let later = try newRun(100, at: at(5)).setDoneOnPhone(log: 0, at: at(6))
        let earlier = try newRun(102, at: at(1))
        _ = WatchCacheApplier.apply(context([later, done, earlier]), to: &cache)
        #expect(cache.activeRuns.map(\.id) == [id(102), id(100)])
    }
}

extension WatchCacheApplierTests {
    @Test("a context whose run, split or settings is of an unknown schema version is skipped whole")
    func unknownInnerSchemaVersionSkipped() throws {
        var cache = try seededCache()
        let before = cache
        var futureRun = try newRun(102)
        futureRun.schemaVersion = WorkoutDocument.currentSchemaVersion + 1
        var futureSplit = twoExerciseSplit(2)
        futureSplit.schemaVersion = 3
        var futureSettings = context([])
        futureSettings.settings.schemaVersion = 4
        let cases: [(ApplicationContext, type: String, found: Int, supported: Int)] = [
            (context([futureRun]), "WorkoutDocument", futureRun.schemaVersion, WorkoutDocument.currentSchemaVersion),
            (context([], splits: [futureSplit]), "SplitDocument", 3, 1),
            (futureSettings, "Settings", 4, 1),
        ]
        for (pushed, type, found, supported) in cases {
            let expected = ContextApplyOutcome.skipped(
                .unsupportedSchemaVersion(type: type, found: found, supported: supported))
            #expect(WatchCacheApplier.apply(contextBytes: bytes(pushed), to: &cache) == expected)
            #expect(cache == before, "no upsert, no prune")
        }
    }
}
