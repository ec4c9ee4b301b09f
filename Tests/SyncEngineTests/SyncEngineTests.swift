import SyncEngine
import TestSupport
import Testing
import WorkoutModel

let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!
func at(_ seconds: Int) -> Timestamp { t0.advanced(by: .seconds(seconds)) }

func id(_ n: Int) -> DocumentID {
    var bytes = [UInt8](repeating: 0xCD, count: 16)
    bytes[10] = 0x77
    bytes[14] = UInt8(n >> 8 & 0xFF)
    bytes[15] = UInt8(n & 0xFF)
    return DocumentID(bytes: bytes)
}

let squat = ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 100)
let row = ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 1, targetReps: 10, targetWeight: 40)

/// An engine that finished its gather and is linked, with one split (id 1).
func readyEngine() throws -> SyncEngine {
    var engine = SyncEngine(settings: nil)
    _ = engine.handle(.gatherFinished(now: t0))
    _ = engine.handle(.linkActivated(now: t0))
    _ = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [squat, row]), now: t0)
    return engine
}

func pushes(_ actions: [SyncEngine.Action]) -> [(ApplicationContext, Bool)] {
    actions.compactMap { if case .pushContext(let context, let force) = $0 { (context, force) } else { nil } }
}

func writtenRuns(_ actions: [SyncEngine.Action]) -> [WorkoutDocument] {
    actions.compactMap { if case .writeWorkout(let run) = $0 { run } else { nil } }
}

@Suite("SyncEngine: ingestFromWatch gates")
struct IngestTests {
    private func engineWithRun() throws -> (SyncEngine, WorkoutDocument) {
        var engine = try readyEngine()
        let actions = try engine.perform(.startRun(splitID: id(1), runID: id(100), endingOthers: false), now: at(1))
        return (engine, try #require(writtenRuns(actions).first))
    }

    @Test("a copy with a newer edit: merged, status recomputed, written, cached, authoritative echo pushed")
    func acceptsNewer() throws {
        var (engine, run) = try engineWithRun()
        var edited = run
        try edited.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        edited.status = .notStarted  // a confused watch: the phone recomputes
        let (outcome, actions) = engine.ingestFromWatch(edited, now: at(11))
        #expect(outcome == .merged)
        let written = try #require(writtenRuns(actions).first)
        #expect(written.status == .inProgress)
        #expect(engine.run(run.id) == written)
        #expect(pushes(actions).map(\.0.workouts) == [[written]])
        #expect(pushes(actions).map(\.1) == [false])
    }

    @Test("the phone's own copy back is an echo: unchanged, no write, no push")
    func ignoresEcho() throws {
        var (engine, run) = try engineWithRun()
        let (outcome, actions) = engine.ingestFromWatch(run, now: at(2))
        #expect(outcome == .unchanged)
        #expect(writtenRuns(actions).isEmpty)
        #expect(pushes(actions).isEmpty)
    }

    @Test("a copy behind the phone's: unchanged, no write; re-pushed only when the state differs from the last push")
    func repushesStale() throws {
        var (engine, run) = try engineWithRun()
        _ = try engine.perform(.completeSet(runID: run.id, logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(20))
        let (outcome, actions) = engine.ingestFromWatch(run, now: at(21))
        #expect(outcome == .unchanged)
        #expect(writtenRuns(actions).isEmpty)
        // The phone's state already went out with the edit: a forced copy per stale transfer would
        // send the whole (up to 256 KiB) state again for every queued update a drain delivers.
        #expect(pushes(actions).isEmpty)
        #expect(engine.run(run.id)?.logs[0].sets[0].isDone == true)
    }

    @Test("an older edit of another set is merged, not dropped (the whole-document gate lost it)")
    func mergesOlderEditOfAnotherSet() throws {
        var (engine, run) = try engineWithRun()
        _ = try engine.perform(.completeSet(runID: run.id, logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(20))
        var watchCopy = run
        try watchCopy.skipLog(logID: run.logs[1].id, at: Stamp(time: at(15), origin: .watch))
        let (outcome, actions) = engine.ingestFromWatch(watchCopy, now: at(21))
        #expect(outcome == .merged)
        let written = try #require(writtenRuns(actions).first)
        #expect(written.logs[0].sets[0].isDone)
        #expect(written.logs[1].resolution == .skipped)
        #expect(engine.run(run.id) == written)
    }

    @Test("tombstoned: vetoed, nothing written, forced re-push without the run")
    func tombstoneVeto() throws {
        var (engine, run) = try engineWithRun()
        _ = try engine.perform(.discard(runID: run.id), now: at(5))
        _ = engine.handle(.tombstoneWritten(run.id, now: at(5)))
        var late = run
        try late.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(30))
        let (outcome, actions) = engine.ingestFromWatch(late, now: at(31))
        #expect(outcome == .vetoedTombstoned)
        #expect(writtenRuns(actions).isEmpty)
        let push = try #require(pushes(actions).first)
        #expect(push.1)
        #expect(push.0.workouts.isEmpty)
        #expect(engine.index[run.id] == nil)
    }

    @Test("pending delete: vetoed while the stub has not landed; a tombstone veto afterwards")
    func pendingDeleteVeto() throws {
        var (engine, run) = try engineWithRun()
        let discard = try engine.perform(.discard(runID: run.id), now: at(5))
        #expect(discard.contains(.writeTombstone(Tombstone(id: run.id, kind: .workout, deletedAt: at(5)))))
        #expect(discard.contains(.removeWorkoutFile(run.id, startedAt: run.startedAt)))
        var late = run
        try late.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(30))
        #expect(engine.ingestFromWatch(late, now: at(31)).outcome == .vetoedPendingDelete)
        _ = engine.handle(.tombstoneWritten(run.id, now: at(32)))
        #expect(engine.pendingDeletes.isEmpty)
        #expect(engine.ingestFromWatch(late, now: at(33)).outcome == .vetoedTombstoned)
        #expect(engine.ingestCounts == [.vetoedPendingDelete: 1, .vetoedTombstoned: 1])
    }

    @Test("an old run only summarised in memory merges with the copy the shell loaded, never overwritten blind")
    func oldRunNeedsItsFile() throws {
        var engine = SyncEngine(settings: nil)
        let split = SplitDocument(id: id(1), name: "Legs", exercises: [squat, row], updatedAt: t0)
        var old = try WorkoutDocument.start(from: split, id: id(300), at: at(0))
        try old.completeSet(logID: old.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(1))
        try old.endKeepingProgress(at: at(2))
        let twoDaysLater = at(2 * 86_400)
        _ = engine.handle(.documentScanned(.workout(old), now: twoDaysLater))
        _ = engine.handle(.gatherFinished(now: twoDaysLater))
        #expect(engine.needsDocument(old.id))
        // The watch's copy lacks the phone's set 1.1 and adds its metrics.
        var watchCopy = try WorkoutDocument.start(from: split, id: id(300), at: at(0))
        try watchCopy.endKeepingProgress(at: Stamp(time: at(3), origin: .watch))
        watchCopy.recordMetrics(watchCopy.sessionMetrics(recordedAt: at(4)), at: Stamp(time: at(4), origin: .watch))

        let blind = engine.ingestFromWatch(watchCopy, now: twoDaysLater)
        #expect(blind.outcome == .refused)
        #expect(writtenRuns(blind.actions).isEmpty)

        let (outcome, actions) = engine.ingestFromWatch(watchCopy, loaded: old, now: twoDaysLater)
        #expect(outcome == .merged)
        let written = try #require(writtenRuns(actions).first)
        #expect(written.logs[0].sets[0].reps == 5)
        #expect(written.metrics != nil)
        #expect(written == (try old.merged(with: watchCopy)))
    }

    @Test("an unknown run from the watch is accepted (it was finished there while the phone had no copy)")
    func unknownAccepted() throws {
        var engine = try readyEngine()
        let run = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0), id: id(200), at: at(1))
        #expect(engine.ingestFromWatch(run, now: at(2)).outcome == .merged)
    }
}

@Suite("SyncEngine: the state push")
struct PushTests {
    @Test("nothing is pushed before the initial gather finishes, and the pristine state never")
    func gatherAndPristine() throws {
        var engine = SyncEngine(settings: nil)
        _ = engine.handle(.linkActivated(now: t0))
        let split = SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0)
        #expect(pushes(engine.handle(.documentScanned(.split(split), now: t0))).isEmpty)
        #expect(pushes(engine.handle(.requestSyncReceived(now: t0))).isEmpty)
        let finished = engine.handle(.gatherFinished(now: t0))
        #expect(pushes(finished).map(\.0.splits) == [[split]])

        var empty = SyncEngine(settings: nil)
        _ = empty.handle(.linkActivated(now: t0))
        let actions = empty.handle(.gatherFinished(now: t0))
        #expect(pushes(actions).isEmpty)
        #expect(actions.contains { if case .log(.pushSkippedPristine) = $0 { true } else { false } })
    }

    @Test("every trigger pushes; a push equal in value to the last is skipped unless forced")
    func triggers() throws {
        var engine = try readyEngine()
        #expect(pushes(engine.handle(.reachabilityRestored(now: at(1)))).isEmpty, "unchanged state")
        #expect(pushes(engine.handle(.requestSyncReceived(now: at(2)))).map(\.1) == [true])
        #expect(pushes(try engine.perform(.forcePush, now: at(3))).map(\.1) == [true])
        #expect(pushes(try engine.perform(.setWorkoutLock(nil), now: at(4))).isEmpty)
        let started = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(5))
        #expect(pushes(started).count == 1)
        #expect(started.contains(.launchWatchApp(runID: id(5))))
    }

    @Test("a lock change is pushed at once; locks are not persisted and die with the engine")
    func locks() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        let locked = try engine.perform(.setWorkoutLock(id(5)), now: at(2))
        #expect(pushes(locked).map(\.0.editLocks) == [EditLocks(editingWorkoutID: id(5))])
        #expect(!locked.contains { if case .persistSettings = $0 { true } else { false } })
        let splitLocked = try engine.perform(.setSplitLock(id(1)), now: at(3))
        #expect(pushes(splitLocked).first?.0.editLocks == EditLocks(editingWorkoutID: id(5), editingSplitID: id(1)))
        #expect(throws: OperationError.unknownRun(id(9))) { try engine.perform(.setWorkoutLock(id(9)), now: at(4)) }
        let restarted = SyncEngine(settings: engine.settings)
        #expect(restarted.locks == EditLocks())
    }

    @Test("only pushable runs stay in memory; old completed runs keep only their summary")
    func workingSet() throws {
        var engine = SyncEngine(settings: nil)
        var old = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0), id: id(300), at: t0)
        try old.endKeepingProgress(at: at(60))
        _ = engine.handle(.documentScanned(.workout(old), now: at(3 * 86_400)))
        _ = engine.handle(.gatherFinished(now: at(3 * 86_400)))
        #expect(engine.index.count == 1)
        #expect(engine.documents.isEmpty)
        #expect(engine.needsDocument(old.id))
    }
}

@Suite("SyncEngine: operations")
struct OperationTests {
    @Test("starting a run snapshots the split; later split edits leave it alone")
    func snapshot() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.editSplit(id: id(1), name: "Renamed", exercises: [row]), now: at(2))
        let run = try #require(engine.run(id(5)))
        #expect(run.splitName == "Legs")
        #expect(run.logs.map(\.exerciseName) == ["Squat", "Row"])
    }

    @Test("starting while others are active can end them keeping progress first")
    func endOthers() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let actions = try engine.perform(.startRun(splitID: id(1), runID: id(6), endingOthers: true), now: at(3))
        #expect(writtenRuns(actions).map(\.id) == [id(5), id(6)])
        let pushIndex = try #require(actions.firstIndex { if case .pushContext = $0 { true } else { false } })
        let launchIndex = try #require(actions.firstIndex(of: .launchWatchApp(runID: id(6))))
        #expect(pushIndex < launchIndex, "the watch ends the old session before it is asked to start the new one")
        #expect(engine.run(id(5))?.status == .completed)
        #expect(engine.run(id(5))?.logs[0].sets[0].reps == 5)
        #expect(engine.index.activeIDs == [id(6)])
    }

    @Test("clear history tombstones exactly the completed runs the phone has, never a date cutoff")
    func clearHistory() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.endKeepingProgress(runID: id(5)), now: at(2))
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(6), endingOthers: false), now: at(3))
        let actions = try engine.perform(.clearHistory, now: at(4))
        let stubs = actions.compactMap { if case .writeTombstone(let stub) = $0 { stub.id } else { nil } }
        #expect(stubs == [id(5)])
        #expect(engine.index.activeIDs == [id(6)])
        // A run finished on the watch before the clear but arriving after it survives.
        var watchRun = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0), id: id(7), at: at(0))
        try watchRun.endKeepingProgress(at: at(3))
        #expect(engine.ingestFromWatch(watchRun, now: at(10)).outcome == .merged)
        #expect(engine.index.completedIDs == [id(7)])
    }

    @Test("a refused operation changes nothing")
    func refusals() throws {
        var engine = try readyEngine()
        let before = engine.splits
        #expect(throws: OperationError.unknownSplit(id(9))) {
            try engine.perform(.startRun(splitID: id(9), runID: id(5), endingOthers: false), now: at(1))
        }
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        let run = engine.run(id(5))
        #expect(throws: OperationError.logIndexOutOfRange(run: id(5), index: 7, count: 2)) {
            try engine.perform(.skipLog(runID: id(5), logIndex: 7), now: at(2))
        }
        #expect(throws: OperationError.refused(.notPaused)) { try engine.perform(.resume(runID: id(5)), now: at(2)) }
        #expect(engine.run(id(5)) == run)
        _ = try engine.perform(.discard(runID: id(5)), now: at(3))
        #expect(throws: OperationError.deleted(id(5))) {
            try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 1, weight: 1), now: at(4))
        }
        #expect(engine.splits == before)
        // A deleted split is named as such when a run is started from it, as when it is edited.
        _ = try engine.perform(.deleteSplit(id: id(1)), now: at(5))
        _ = engine.handle(.tombstoneWritten(id(1), now: at(5)))
        #expect(throws: OperationError.deleted(id(1))) {
            try engine.perform(.startRun(splitID: id(1), runID: id(6), endingOthers: false), now: at(6))
        }
        var gathering = SyncEngine(settings: nil)
        #expect(throws: OperationError.stillGathering) { try gathering.perform(.forcePush, now: t0) }
    }

    @Test("phone edits are stamped strictly after every copy it has seen")
    func stamps() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        var watchCopy = try #require(engine.run(id(5)))
        try watchCopy.pause(at: at(100))
        _ = engine.ingestFromWatch(watchCopy, now: at(2))
        let actions = try engine.perform(.resume(runID: id(5)), now: at(3))
        #expect(try #require(writtenRuns(actions).first).version > watchCopy.version)
    }

    @Test("settings are persisted, pushed and validated")
    func settings() throws {
        var engine = try readyEngine()
        let new = Settings(restSeconds: 60, doneCountdownSeconds: 3, weightUnit: .pounds)
        let actions = try engine.perform(.setSettings(new), now: at(1))
        #expect(actions.first == .persistSettings(new))
        #expect(pushes(actions).first?.0.settings == new)
        #expect(throws: OperationError.self) { try engine.perform(.setSettings(Settings(restSeconds: -5)), now: at(2)) }
    }
}

@Suite("SyncEngine: scan and external changes")
struct ExternalChangeTests {
    @Test("an external run flows through the cache to a push; our own write seen again is ignored")
    func externalRun() throws {
        var engine = try readyEngine()
        let run = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0), id: id(50), at: at(1))
        let actions = engine.handle(.externalChange(.documentChanged(.workout(run)), now: at(2)))
        #expect(pushes(actions).first?.0.workouts == [run])
        #expect(engine.handle(.externalChange(.documentChanged(.workout(run)), now: at(3))).isEmpty)
    }

    @Test(
        "an echo of our own older write, read back late by the watcher, never rolls the cache back: the phone's copy goes back over it"
    )
    func lateEcho() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        let older = try #require(engine.run(id(5)))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let newer = try #require(engine.run(id(5)))
        // The engine cannot tell a late echo from another device's older copy (seams 1): either way
        // the file may hold the older copy now, so the phone's goes back; nothing is pushed.
        #expect(
            engine.handle(.externalChange(.documentChanged(.workout(older)), now: at(3))) == [
                .writeWorkout(newer), .log(.externalCopyCovered(id(5), version: older.version)),
            ])
        #expect(engine.run(id(5)) == newer)
    }

    @Test("another device's copy made from an older one merges: the phone's newer set stays, on disk too")
    func staleExternalCopy() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        let older = try #require(engine.run(id(5)))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let phoneCopy = try #require(engine.run(id(5)))
        // Another device, which has not seen set 1 yet, completes set 2 later and writes its copy.
        var theirs = older
        try theirs.completeSet(
            logID: older.logs[0].id, setIndex: 1, reps: 3, weight: 90, at: Stamp(time: at(3), origin: .phone))
        let actions = engine.handle(.externalChange(.documentChanged(.workout(theirs)), now: at(4)))
        let merged = try phoneCopy.merged(with: theirs)
        #expect(merged.logs[0].sets.map(\.reps) == [5, 3])
        #expect(engine.run(id(5)) == merged)
        #expect(writtenRuns(actions) == [merged], "the file holds the merge, not the other device's copy")
        #expect(pushes(actions).first?.0.workouts == [merged])
        #expect(actions.contains(.log(.externalRunMerged(id(5)))))
        // Its own write, seen again by the watcher, changes nothing.
        #expect(engine.handle(.externalChange(.documentChanged(.workout(merged)), now: at(5))).isEmpty)
    }

    @Test("a newer external copy is written back as taken: the phone may have rewritten the file since")
    func externalCopyWrittenBack() throws {
        // Seed 4078420: another device's copy arrived after the phone had overwritten that file with
        // an edit of its own; the phone held the device's copy only in memory, and a restart lost it.
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        var theirs = try #require(engine.run(id(5)))
        try theirs.completeSet(
            logID: theirs.logs[0].id, setIndex: 0, reps: 4, weight: 80, at: Stamp(time: at(60), origin: .phone))
        let actions = engine.handle(.externalChange(.documentChanged(.workout(theirs)), now: at(2)))
        #expect(writtenRuns(actions) == [theirs])
        #expect(actions.contains(.log(.externalRun(id(5)))))
        #expect(engine.run(id(5)) == theirs)
    }

    @Test("a live file removed without a stub is dropped but not deleted; a stub appearing is a delete")
    func removals() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        let run = try #require(engine.run(id(5)))
        let (year, month) = run.startedAt.yearAndMonth
        _ = engine.handle(.externalChange(.workoutRemoved(id(5), year: year, month: month), now: at(2)))
        let dropped = engine.handle(.tick(now: at(2).advanced(by: SyncEngine.removalGrace)))
        #expect(pushes(dropped).first?.0.workouts == [])
        #expect(engine.tombstones.isEmpty)
        _ = engine.handle(.externalChange(.documentChanged(.workout(run)), now: at(100)))
        let stub = Tombstone(id: id(5), kind: .workout, deletedAt: at(101))
        let deleted = engine.handle(.externalChange(.documentChanged(.tombstone(stub)), now: at(101)))
        #expect(deleted.contains(.removeWorkoutFile(id(5), startedAt: run.startedAt)))
        #expect(engine.tombstones[id(5)] == stub)
        let resurrect = engine.handle(.externalChange(.documentChanged(.workout(run)), now: at(102)))
        #expect(resurrect.contains(.removeWorkoutFile(id(5), startedAt: run.startedAt)))
        #expect(engine.index.count == 0)
    }

    @Test("a live file found next to its own stub during the scan is removed after the gather")
    func orphanCleanup() throws {
        var engine = SyncEngine(settings: nil)
        let run = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat], updatedAt: t0), id: id(60), at: at(1))
        _ = engine.handle(.documentScanned(.workout(run), now: at(2)))
        _ = engine.handle(
            .documentScanned(.tombstone(Tombstone(id: id(60), kind: .workout, deletedAt: at(1))), now: at(2)))
        let actions = engine.handle(.gatherFinished(now: at(2)))
        #expect(actions.contains(.removeWorkoutFile(id(60), startedAt: run.startedAt)))
        #expect(engine.index.count == 0)
    }

    @Test("a split file found next to its own stub is removed after the gather, whichever is scanned first")
    func orphanedSplitCleanup() {
        let stub = Tombstone(id: id(61), kind: .split, deletedAt: at(1))
        let split = SplitDocument(id: id(61), name: "Legs", exercises: [squat], updatedAt: t0)
        for stubFirst in [true, false] {
            var engine = SyncEngine(settings: nil)
            let scans: [SyncEngine.ScannedDocument] =
                stubFirst ? [.tombstone(stub), .split(split)] : [.split(split), .tombstone(stub)]
            let during = scans.flatMap { engine.handle(.documentScanned($0, now: at(2))) }
            #expect(during.isEmpty, "nothing is written mid-scan")
            let actions = engine.handle(.gatherFinished(now: at(2)))
            #expect(actions.contains(.removeSplitFile(id(61))), "stub first: \(stubFirst)")
            #expect(engine.splits.isEmpty)
        }
    }
}

@Suite("SyncEngine: a burst of input is one push and one write per run")
struct BatchTests {
    /// Whether `action` logs a push of `runs` runs and one split, for `reason`.
    static func isPush(_ action: SyncEngine.Action, reason: String, forced: Bool, runs: Int) -> Bool {
        guard case .log(.pushed(reason, forced, splits: 1, runs, heldBack: nil, _, splitsHeldBack: 0)) = action else {
            return false
        }
        return true
    }

    private func engineWithRun() throws -> (SyncEngine, WorkoutDocument) {
        var engine = try readyEngine()
        let started = try engine.perform(.startRun(splitID: id(1), runID: id(100), endingOthers: false), now: at(1))
        return (engine, try #require(writtenRuns(started).first))
    }

    @Test(
        "userInfo ingests of a batch: nothing written or pushed until batchEnded, then the newest copy once and one push"
    )
    func batchOfIngestsWritesAndPushesOnce() throws {
        var (engine, run) = try engineWithRun()
        #expect(engine.handle(.batchBegan).isEmpty)
        #expect(engine.isBatching)
        for second in 10..<15 {
            try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: second, weight: 100, at: at(second))
            let (outcome, actions) = engine.ingestFromWatch(run, via: .userInfo, now: at(second))
            #expect(outcome == .merged)
            #expect(writtenRuns(actions).isEmpty && pushes(actions).isEmpty, "\(actions)")
            // Its merged line waits for the write too: a kill before the batch's end leaves neither.
            #expect(!actions.contains { if case .log(.ingestMerged) = $0 { true } else { false } })
            #expect(engine.run(run.id) == run, "the engine answers from the batch's copy")
        }
        let ended = engine.handle(.batchEnded(now: at(20)))
        #expect(!engine.isBatching)
        #expect(writtenRuns(ended) == [run])
        let pushed = pushes(ended)
        #expect(pushed.count == 1)
        #expect(pushed.first?.0.workouts == [run])
        #expect(pushed.first?.1 == false)
        #expect(ended.contains { Self.isPush($0, reason: "watch update, batch of 5", forced: false, runs: 1) })
        // The write comes before the merged lines (five, one per ingest) and the push.
        let writeAt = try #require(ended.firstIndex { if case .writeWorkout = $0 { true } else { false } })
        let pushAt = try #require(ended.firstIndex { if case .pushContext = $0 { true } else { false } })
        let mergedAt = ended.indices.filter {
            if case .log(.ingestMerged) = ended[$0] { true } else { false }
        }
        #expect(mergedAt.count == 5)
        #expect(writeAt < pushAt && mergedAt.allSatisfy { $0 > writeAt })
    }

    @Test("in a batch a message ingest is written at once, after the batch's earlier writes; an operation too")
    func messagesAndOperationsFlushTheBatch() throws {
        var (engine, run) = try engineWithRun()
        _ = engine.handle(.batchBegan)
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        #expect(writtenRuns(engine.ingestFromWatch(run, via: .userInfo, now: at(10)).actions).isEmpty)
        try run.completeSet(logID: run.logs[0].id, setIndex: 1, reps: 5, weight: 100, at: at(11))
        let message = engine.ingestFromWatch(run, via: .message, now: at(11))
        #expect(message.outcome == .merged)
        #expect(writtenRuns(message.actions).count == 2, "the deferred copy, then the message's")
        #expect(writtenRuns(message.actions).last == run)

        try run.pause(at: at(12))
        #expect(writtenRuns(engine.ingestFromWatch(run, via: .userInfo, now: at(12)).actions).isEmpty)
        let operation = try engine.perform(.resume(runID: run.id), now: at(13))
        let written = writtenRuns(operation)
        #expect(written.count == 2)
        #expect(written.first == run, "the batch's write goes before the operation's")
        #expect(written.first?.isPaused == true && written.last?.isPaused == false)
        #expect(writtenRuns(engine.handle(.batchEnded(now: at(14)))).isEmpty, "nothing left deferred")
    }

    @Test("a forced push in the batch (requestSync) makes the batch's push forced; an empty batch pushes nothing")
    func forcedWins() throws {
        var (engine, run) = try engineWithRun()
        _ = engine.handle(.batchBegan)
        #expect(engine.handle(.batchEnded(now: at(2))).isEmpty)
        _ = engine.handle(.batchBegan)
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(3))
        #expect(engine.ingestFromWatch(run, via: .userInfo, now: at(3)).outcome == .merged)
        #expect(pushes(engine.handle(.requestSyncReceived(now: at(4)))).isEmpty)
        let ended = engine.handle(.batchEnded(now: at(5)))
        #expect(pushes(ended).map(\.1) == [true])
        #expect(ended.contains { Self.isPush($0, reason: "watch update, batch of 2", forced: true, runs: 1) })
    }
}
