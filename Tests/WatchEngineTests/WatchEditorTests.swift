import Testing
import WatchEngine
import WorkoutModel

@Suite("Watch editor")
struct WatchEditorTests {
    /// A cache holding run 100 (phone stamp `at(0)`) and run 101 of split 2, with `locks`.
    func cache(locks: EditLocks = EditLocks()) throws -> WatchCache {
        var cache = WatchCache()
        let runs = [try newRun(100), try newRun(101, split: 2, at: at(1))]
        _ = WatchCacheApplier.apply(context(runs, locks: locks), to: &cache)
        return cache
    }

    @Test("completing a set applies the model mutation, stamps it and marks it undelivered")
    func completeSet() throws {
        var cache = try cache()
        var editor = WatchEditor()
        let run = try #require(cache.workouts[id(100)])
        let edited = try editor.apply(
            .completeSet(logID: run.log(0), setIndex: 1, reps: 6, weight: 102.5), toRun: id(100), in: &cache,
            at: at(10))

        var expected = run
        try expected.completeSet(logID: run.log(0), setIndex: 1, reps: 6, weight: 102.5, at: w(10))
        #expect(edited == expected)
        #expect(edited.status == .inProgress)
        #expect(cache.workouts[id(100)] == expected)
        #expect(cache.undeliveredEdits.mapValues(\.time) == [id(100): at(10)])
    }

    @Test("every edit kind maps to its model mutation")
    func everyEditKind() throws {
        var cache = try cache()
        var editor = WatchEditor()
        let run = try #require(cache.workouts[id(100)])
        let squat = run.log(0)
        var expected = run

        _ = try editor.apply(
            .completeSet(logID: squat, setIndex: 0, reps: 5, weight: 100), toRun: id(100), in: &cache, at: at(1))
        try expected.completeSet(logID: squat, setIndex: 0, reps: 5, weight: 100, at: w(1))
        _ = try editor.apply(.undoSet(logID: squat, setIndex: 0), toRun: id(100), in: &cache, at: at(2))
        try expected.undoSet(logID: squat, setIndex: 0, at: w(2))
        _ = try editor.apply(.skipLog(logID: squat), toRun: id(100), in: &cache, at: at(3))
        try expected.skipLog(logID: squat, at: w(3))
        _ = try editor.apply(.reopenLog(logID: squat), toRun: id(100), in: &cache, at: at(4))
        try expected.reopenLog(logID: squat, at: w(4))
        _ = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(5))
        try expected.pause(at: w(5))
        _ = try editor.apply(.resume, toRun: id(100), in: &cache, at: at(6))
        try expected.resume(at: w(6))
        #expect(cache.workouts[id(100)] == expected)

        let finished = try editor.apply(.finishRun, toRun: id(100), in: &cache, at: at(7))
        try expected.endKeepingProgress(at: w(7))
        #expect(finished == expected)
        #expect(finished.status == .completed)
        #expect(finished.logs.map(\.resolution) == [.skipped, .skipped])
    }

    @Test("an edit to a run the watch does not hold is refused")
    func unknownRun() throws {
        var cache = try cache()
        let before = cache
        var editor = WatchEditor()
        #expect(throws: EditRefusal.unknownRun(id(999))) {
            try editor.apply(.pause, toRun: id(999), in: &cache, at: at(1))
        }
        #expect(cache == before)
    }

    @Test(
        "a run parked by a workout lock or by its split's lock is refused as editing on phone",
        arguments: [EditLocks(editingWorkoutID: id(100)), EditLocks(editingSplitID: id(1))])
    func parked(locks: EditLocks) throws {
        var cache = try cache(locks: locks)
        let before = cache
        var editor = WatchEditor()
        #expect(throws: EditRefusal.editingOnPhone(id(100))) {
            try editor.apply(.pause, toRun: id(100), in: &cache, at: at(1))
        }
        #expect(cache == before)
        #expect(EditRefusal.editingOnPhone(id(100)).description.contains("edited on the phone"))
        // The other run (split 2) is not parked.
        _ = try editor.apply(.pause, toRun: id(101), in: &cache, at: at(2))
    }

    @Test("a mutation the model refuses leaves the cache and the clock unchanged")
    func modelRefusal() throws {
        var cache = try cache()
        let before = cache
        var editor = WatchEditor()
        let squat = try #require(cache.workouts[id(100)]).log(0)
        #expect(throws: EditRefusal.refusedByModel(run: id(100), .notPaused)) {
            try editor.apply(.resume, toRun: id(100), in: &cache, at: at(1))
        }
        #expect(throws: EditRefusal.refusedByModel(run: id(100), .setOutOfRange(log: squat, index: 5, count: 2))) {
            try editor.apply(
                .completeSet(logID: squat, setIndex: 5, reps: 1, weight: 1), toRun: id(100), in: &cache, at: at(1))
        }
        #expect(cache == before)
        #expect(editor.clock == HybridLogicalClock(origin: .watch))
    }

    @Test("stamps strictly increase and outrank the phone's copy, even with a slow clock")
    func stampsIncrease() throws {
        var cache = WatchCache()
        let phoneCopy = try newRun(100).setDoneOnPhone(log: 0, at: at(60))
        _ = WatchCacheApplier.apply(context([phoneCopy]), to: &cache)
        var editor = WatchEditor()

        // The watch's clock is behind the phone's: the stamp still lands after the phone's copy.
        let first = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(30))
        let second = try editor.apply(.resume, toRun: id(100), in: &cache, at: at(30))
        let third = try editor.apply(.pause, toRun: id(100), in: &cache, at: at(90))
        #expect(first.version == Stamp(time: at(60), counter: 1, origin: .watch))
        #expect(second.version == Stamp(time: at(60), counter: 2, origin: .watch))
        #expect(third.version == Stamp(time: at(90), counter: 0, origin: .watch))
    }
}
