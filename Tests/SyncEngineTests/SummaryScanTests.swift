import SyncEngine
import Testing
import WorkoutModel

/// Runs the initial scan knows only by summary (the run index file's table, its folders unchanged):
/// indexed like scanned documents, loaded when something needs their document.
@Suite("SyncEngine: runs known by summary from the run index")
struct SummaryScanTests {
    private let split = SplitDocument(id: id(1), name: "Legs", exercises: [squat, row], updatedAt: t0)

    private func runs() throws -> (active: WorkoutDocument, recent: WorkoutDocument, old: WorkoutDocument) {
        let active = try WorkoutDocument.start(from: split, id: id(10), at: Stamp(time: at(-600), origin: .phone))
        var recent = try WorkoutDocument.start(from: split, id: id(11), at: Stamp(time: at(-7_200), origin: .phone))
        try recent.endKeepingProgress(at: Stamp(time: at(-3_600), counter: 2, origin: .watch))
        var old = try WorkoutDocument.start(from: split, id: id(12), at: Stamp(time: at(-90 * 86_400), origin: .phone))
        try old.endKeepingProgress(at: Stamp(time: at(-89 * 86_400), origin: .phone))
        return (active, recent, old)
    }

    /// An engine whose scan met the split and these runs by summary only.
    private func summarizedEngine(_ runs: [WorkoutDocument]) -> SyncEngine {
        var engine = SyncEngine(settings: nil)
        _ = engine.handle(.documentScanned(.split(split), now: t0))
        _ = engine.handle(.runTableScanned(.recording(runs.map(RunIndex.RunSummary.init)), now: t0))
        return engine
    }

    @Test("summaries index exactly as the documents would, observe the clock, and hold no document")
    func summariesIndexLikeDocuments() throws {
        let (active, recent, old) = try runs()
        var scanned = SyncEngine(settings: nil)
        var summarized = SyncEngine(settings: nil)
        for run in [active, recent, old] { _ = scanned.handle(.documentScanned(.workout(run), now: t0)) }
        _ = summarized.handle(
            .runTableScanned(.recording([active, recent, old].map(RunIndex.RunSummary.init)), now: t0))
        #expect(summarized.index == scanned.index)
        #expect(summarized.clock.last == scanned.clock.last)
        #expect(summarized.documents.isEmpty)
        #expect(summarized.needsDocument(active.id))
    }

    @Test("after the gather, unlinked: active runs known by summary are loaded, nothing else")
    func activeRunsAreLoadedAfterTheGather() throws {
        let (active, recent, old) = try runs()
        var engine = summarizedEngine([active, recent, old])
        let actions = engine.handle(.gatherFinished(now: t0))
        #expect(actions.contains(.loadRuns([active.id: active.startedAt])))
        _ = engine.handle(.runsLoaded([active], unreadable: [], now: t0))
        #expect(engine.run(active.id) == active)
        // Ending every active run before a start needs their documents: they are there.
        let started = try engine.perform(.startRun(splitID: split.id, runID: id(20), endingOthers: true), now: at(1))
        #expect(writtenRuns(started).map(\.id) == [active.id, id(20)])
    }

    @Test("linked: the first push loads what it carries (active and recent), then goes")
    func thePushLoadsWhatItCarries() throws {
        let (active, recent, old) = try runs()
        var engine = summarizedEngine([active, recent, old])
        _ = engine.handle(.gatherFinished(now: t0))
        let activation = engine.handle(.linkActivated(now: t0))
        #expect(activation.contains(.loadRuns([active.id: active.startedAt, recent.id: recent.startedAt])))
        #expect(pushes(activation).isEmpty)
        let loaded = engine.handle(.runsLoaded([active, recent], unreadable: [], now: t0))
        #expect(pushes(loaded).map { $0.0.workouts.map(\.id) } == [[active.id, recent.id]])
    }

    @Test("a recorded run whose tombstone comes after the table is dropped and its live file removed")
    func tombstoneAfterTheTable() throws {
        let (_, _, old) = try runs()
        var engine = SyncEngine(settings: nil)
        _ = engine.handle(.runTableScanned(.recording([RunIndex.RunSummary(old)]), now: t0))
        _ = engine.handle(.documentScanned(.tombstone(Tombstone(id: old.id, kind: .workout, deletedAt: t0)), now: t0))
        #expect(engine.index.count == 0)
        let actions = engine.handle(.gatherFinished(now: t0))
        #expect(actions.contains(.removeWorkoutFile(old.id, startedAt: old.startedAt)))
    }

    @Test("a summary of a tombstoned run is dropped and its live file removed at the end of the gather")
    func tombstonedSummaryIsRemoved() throws {
        let (_, _, old) = try runs()
        var engine = SyncEngine(settings: nil)
        _ = engine.handle(.documentScanned(.tombstone(Tombstone(id: old.id, kind: .workout, deletedAt: t0)), now: t0))
        _ = engine.handle(.runTableScanned(.recording([RunIndex.RunSummary(old)]), now: t0))
        #expect(engine.index.count == 0)
        let actions = engine.handle(.gatherFinished(now: t0))
        #expect(actions.contains(.removeWorkoutFile(old.id, startedAt: old.startedAt)))
    }
}
