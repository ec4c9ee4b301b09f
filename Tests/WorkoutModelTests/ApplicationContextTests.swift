import TestSupport
import Testing
import WorkoutModel

@Suite("The state push payload")
struct ApplicationContextTests {
    /// A completed run (ended at `end`) and an index holding it.
    private func completedRun(_ n: Int, endedAt end: Timestamp) throws -> WorkoutDocument {
        var run = try startedRun(n, at: end.advanced(by: .seconds(-600)))
        try run.endKeepingProgress(at: end)
        return run
    }

    private func build(_ runs: [WorkoutDocument], now: Timestamp, locks: EditLocks = EditLocks()) -> ApplicationContext
    {
        let byID = Dictionary(uniqueKeysWithValues: runs.map { ($0.id, $0) })
        let index = RunIndex(runs.map(RunIndex.RunSummary.init))
        return ApplicationContext.build(
            splits: [twoExerciseSplit(2), twoExerciseSplit(1)], index: index, run: { byID[$0] },
            settings: Settings(), editLocks: locks, now: now)
    }

    @Test("every active run rides, uncapped")
    func activeUncapped() throws {
        let runs = try (0..<60).map { try startedRun(1_000 + $0, at: at($0)) }
        let context = build(runs, now: at(100))
        #expect(context.workouts.count == 60)
        #expect(context.workouts.map(\.id) == runs.map(\.id))
    }

    @Test("at most 25 completed runs, newest end first", arguments: [24, 25, 26, 40])
    func recentCap(count: Int) throws {
        let now = at(10_000)
        let runs = try (0..<count).map { try completedRun(2_000 + $0, endedAt: at(5_000 + $0)) }
        let context = build(runs, now: now)
        #expect(context.workouts.count == min(count, 25))
        #expect(context.workouts.first?.id == runs.last?.id)
        #expect(context.workouts.map(\.endedAt) == context.workouts.map(\.endedAt).sorted { $0! > $1! })
    }

    @Test("the 24 h window is inclusive at exactly 24 h and excludes one microsecond more")
    func windowBoundary() throws {
        let now = at(100_000)
        let exactly = try completedRun(3_000, endedAt: now.advanced(by: .seconds(-86_400)))
        let justOver = try completedRun(3_001, endedAt: now.advanced(by: .seconds(-86_400) - .microseconds(1)))
        let context = build([exactly, justOver], now: now)
        #expect(context.workouts.map(\.id) == [exactly.id])
    }

    @Test("active runs come first, then recent ones; splits are ordered by ID")
    func ordering() throws {
        let active = try startedRun(4_000, at: at(50))
        let done = try completedRun(4_001, endedAt: at(60))
        let context = build([done, active], now: at(100))
        #expect(context.workouts.map(\.id) == [active.id, done.id])
        #expect(context.splits.map(\.id) == [id(1), id(2)])
    }

    @Test("contexts compare by value: same state equal, any change unequal")
    func valueEquality() throws {
        let run = try startedRun()
        let first = build([run], now: at(10))
        let again = build([run], now: at(20))
        #expect(first == again)
        #expect(first != build([run], now: at(20), locks: EditLocks(editingWorkoutID: run.id)))
        var edited = run
        try edited.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(15))
        #expect(first != build([edited], now: at(20)))
        let decoded = try DocumentCoder.decode(ApplicationContext.self, from: DocumentCoder.encodeCompact(first))
        #expect(decoded == first)
    }

    @Test("absent lock keys mean not editing; a lock on the split parks its runs")
    func locks() throws {
        let run = try startedRun()
        let unlocked = DocumentCoder.encodeCompact(EditLocks())
        #expect(String(decoding: unlocked, as: UTF8.self) == "{}")
        #expect(!EditLocks().parks(run))
        #expect(EditLocks(editingWorkoutID: run.id).parks(run))
        #expect(EditLocks(editingSplitID: run.splitID).parks(run))
        #expect(!EditLocks(editingWorkoutID: id(77), editingSplitID: id(78)).parks(run))
    }

    @Test("building a push looks up only the selected runs, not the history")
    func doesNotTouchHistory() throws {
        var summaries: [RunIndex.RunSummary] = []
        for n in 0..<5_000 {
            var summary = RunIndex.RunSummary(try startedRun(10_000 + n, at: at(n)))
            summary.status = .completed
            summary.endedAt = at(n)
            summaries.append(summary)
        }
        let active = try startedRun(99, at: at(9_000))
        summaries.append(RunIndex.RunSummary(active))
        var index = RunIndex(summaries)
        var lookups = 0
        let context = ApplicationContext.build(
            splits: [], index: index,
            run: { id in
                lookups += 1
                return id == active.id ? active : nil
            }, settings: Settings(), editLocks: EditLocks(), now: at(9_000))
        #expect(lookups == 26)
        #expect(context.workouts == [active])
        index.remove(active.id)
        #expect(index.pushSelection(now: at(9_000), policy: .standard).count == 25)
    }

    @Test("over the byte limit, each run is sized once through encodedSize and the fit holds by the real encoding")
    func fitSizesEachRunOnce() throws {
        let runs = try (0..<400).map { try startedRun(20_000 + $0, at: at($0)) }
        let byID = Dictionary(uniqueKeysWithValues: runs.map { ($0.id, $0) })
        var sized: [DocumentID: Int] = [:]
        let policy = PushPolicy(recentLimit: 25, recentWindow: .seconds(86_400), maximumBytes: 64 * 1_024)
        let context = ApplicationContext.build(
            splits: [twoExerciseSplit(1)], index: RunIndex(runs.map(RunIndex.RunSummary.init)), run: { byID[$0] },
            settings: Settings(), editLocks: EditLocks(), now: at(500), policy: policy,
            encodedSize: { run in
                sized[run.id, default: 0] += 1
                return DocumentCoder.encodeCompact(run).count
            })
        // The total is summed from the runs' sizes (once each), then the fit asks again only for the
        // runs it tries; a caller caching sizes per run (the SyncEngine does) encodes each run once.
        #expect(sized.count == 400)
        #expect(sized.values.allSatisfy { $0 <= 2 })
        #expect(context.heldBackRunIDs?.isEmpty == false)
        #expect(DocumentCoder.encodeCompact(context).count <= policy.maximumBytes)
    }

    @Test(
        "splits too large to send together are fitted too: the newest within half the limit, and the active run rides")
    func fitSplits() throws {
        let policy = PushPolicy(recentLimit: 25, recentWindow: .seconds(86_400), maximumBytes: 64 * 1_024)
        let active = try startedRun(7, at: at(10))
        // 40 splits of about 2 KB (80 KB in all), and one of 100 KB that could never fit.
        var splits = (0..<40).map { n in
            var split = twoExerciseSplit(100 + n)
            split.name = String(repeating: "n", count: 2_000)
            split.updatedAt = at(n)
            return split
        }
        var huge = twoExerciseSplit(999)
        huge.name = String(repeating: "h", count: 100_000)
        huge.updatedAt = at(1_000)
        splits.append(huge)
        let context = ApplicationContext.build(
            splits: splits, index: RunIndex([RunIndex.RunSummary(active)]), run: { $0 == active.id ? active : nil },
            settings: Settings(), editLocks: EditLocks(), now: at(20), policy: policy)
        #expect(DocumentCoder.encodeCompact(context).count <= policy.maximumBytes)
        #expect(context.workouts == [active] && context.heldBackRunIDs == nil)
        let kept = Set(context.splits.map(\.id))
        #expect(!kept.contains(huge.id))
        #expect(kept.count > 10 && kept.count < 40, "\(kept.count) splits kept")
        // The newest that fit, in ID order as always.
        let newest = splits.dropLast().sorted { $0.updatedAt > $1.updatedAt }.prefix(kept.count).map(\.id)
        #expect(kept == Set(newest))
        #expect(context.splits.map(\.id) == context.splits.map(\.id).sorted())
    }

    @Test("the index follows upserts and removals of completed runs")
    func indexMaintenance() throws {
        var index = RunIndex()
        var run = try startedRun(5_000, at: at(0))
        index.upsert(RunIndex.RunSummary(run))
        #expect(index.activeIDs == [run.id])
        try run.endKeepingProgress(at: at(10))
        index.upsert(RunIndex.RunSummary(run))
        #expect(index.activeIDs.isEmpty)
        #expect(index.completedIDs == [run.id])
        try run.reopenLog(logID: run.logs[0].id, at: at(20))
        index.upsert(RunIndex.RunSummary(run))
        #expect(index.completedIDs.isEmpty)
        #expect(index.activeIDs == [run.id])
        index.remove(run.id)
        #expect(index.count == 0)
    }
}
