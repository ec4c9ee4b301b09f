import SyncEngine
import Testing
import WorkoutModel

/// The push's promises (issue 14, items 1–5): it fits, it is never recorded as sent when it did not
/// go, the recent window neither shrinks nor lingers, old runs can be operated on, and a moved file
/// is not a delete.
@Suite("SyncEngine: what the push promises (issue 14)")
struct PushPromiseTests {
    /// A completed run of split 1 with ID `n`, started at `start`, ended an hour later.
    private func completedRun(_ n: Int, start: Timestamp) throws -> WorkoutDocument {
        var run = try WorkoutDocument.start(
            from: SplitDocument(id: id(1), name: "Legs", exercises: [squat, row], updatedAt: t0), id: id(n), at: start)
        try run.endKeepingProgress(at: start.advanced(by: .seconds(3_600)))
        return run
    }

    private func loads(_ actions: [SyncEngine.Action]) -> [DocumentID: Timestamp] {
        actions.reduce(into: [:]) { if case .loadRuns(let wanted) = $1 { $0.merge(wanted) { $1 } } }
    }

    @Test("a push the link refused is not recorded as sent: status says why, and a tick retries it")
    func refusedPushIsRetried() throws {
        var engine = try readyEngine()
        let first = try engine.perform(.createSplit(id: id(2), name: "Pull", exercises: [row]), now: at(1))
        let context = try #require(pushes(first).first?.0)
        _ = engine.handle(.pushFailed(reason: "payloadTooLarge", now: at(1)))
        #expect(engine.pushFailure == "payloadTooLarge")
        #expect(engine.lastPushed?.splits.count == 1, "the refused push is not the last one sent")
        #expect(engine.nextDeadline == at(1).advanced(by: SyncEngine.pushRetryInterval))
        let retried = engine.handle(.tick(now: at(6)))
        #expect(pushes(retried).map(\.0) == [context], "the identical push is not suppressed")
        #expect(engine.pushFailure == nil)
        #expect(engine.nextDeadline == nil)
    }

    @Test("a forced push the link refused is retried forced: not skipped as identical, and no deadline left behind")
    func refusedForcedPushIsRetriedForced() throws {
        // Simulator seed 1715: an epoch veto's forced re-push, identical to the last push sent, was
        // refused (deviceNotPaired). The retry found it identical to the last one sent and skipped
        // it, leaving the retry deadline in the past: phoned's push timer fired again at once,
        // forever, and the re-push never went.
        var engine = try readyEngine()
        let first = try engine.perform(.createSplit(id: id(2), name: "Pull", exercises: [row]), now: at(1))
        let context = try #require(pushes(first).first?.0)
        let forced = try engine.perform(.forcePush, now: at(2))
        #expect(pushes(forced).map(\.0) == [context])
        _ = engine.handle(.pushFailed(reason: "deviceNotPaired", now: at(2)))
        let retried = engine.handle(.tick(now: at(7)))
        #expect(pushes(retried).map(\.0) == [context], "the forced push goes on retry")
        #expect(engine.nextDeadline.map { $0 > at(7) } ?? true, "no deadline at or before now")
    }

    /// Found by the simulator (seed 77, a short recent window): the push for a run leaving the window
    /// failed, which put back the last push sent, whose window deadline was the one just reached.
    @Test("a push for the recent window that fails waits for its retry, not for the window deadline it just met")
    func failedWindowPushWaitsForItsRetry() throws {
        var engine = SyncEngine(settings: nil, policy: PushPolicy(recentLimit: 4, recentWindow: .seconds(10)))
        _ = engine.handle(.gatherFinished(now: t0))
        _ = engine.handle(.linkActivated(now: t0))
        _ = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [row]), now: t0)
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(700), endingOthers: false), now: at(1))
        _ = try engine.perform(.endKeepingProgress(runID: id(700)), now: at(2))
        _ = engine.handle(.pushQueued(generation: 5))
        _ = engine.handle(.contextAcknowledged(generation: 5, now: at(3)))
        let leaves = try #require(engine.nextDeadline)
        #expect(leaves > at(12) && leaves < at(13), "the run leaves the window ten seconds after its end")
        let moved = engine.handle(.tick(now: leaves))
        #expect(pushes(moved).count == 1)
        _ = engine.handle(.pushFailed(reason: "watchAppNotInstalled", now: leaves))
        #expect(engine.nextDeadline == leaves.advanced(by: SyncEngine.pushRetryInterval))
    }

    @Test("a retry that cannot push now leaves no deadline in the past")
    func retryDeferredLeavesNoPastDeadline() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.createSplit(id: id(2), name: "Pull", exercises: [row]), now: at(1))
        _ = engine.handle(.pushFailed(reason: "deviceNotPaired", now: at(1)))
        _ = engine.handle(.batchBegan)
        let deferred = engine.handle(.tick(now: at(6)))
        #expect(pushes(deferred).isEmpty, "a batch is open: the push waits for its end")
        #expect(engine.nextDeadline.map { $0 > at(6) } ?? true, "no deadline at or before now")
        let ended = engine.handle(.batchEnded(now: at(6)))
        #expect(pushes(ended).count == 1)
    }

    @Test("over the byte limit: the most recently updated active runs ride, the rest are held back by ID")
    func pushFitsTheLimit() throws {
        let policy = PushPolicy(recentLimit: 25, recentWindow: .seconds(86_400), maximumBytes: 8_000)
        var engine = SyncEngine(settings: nil, policy: policy)
        _ = engine.handle(.gatherFinished(now: t0))
        _ = engine.handle(.linkActivated(now: t0))
        _ = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [squat, row]), now: t0)
        for n in 0..<40 {
            _ = try engine.perform(.startRun(splitID: id(1), runID: id(100 + n), endingOthers: false), now: at(n + 1))
        }
        let last = try engine.perform(.forcePush, now: at(100))
        let context = try #require(pushes(last).first?.0)
        #expect(DocumentCoder.encodeCompact(context).count <= 8_000)
        #expect(!context.workouts.isEmpty)
        let carried = Set(context.workouts.map(\.id))
        let heldBack = Set(try #require(context.heldBackRunIDs))
        #expect(carried.union(heldBack) == Set((0..<40).map { id(100 + $0) }) && carried.isDisjoint(with: heldBack))
        #expect(carried.contains(id(139)), "the newest run rides")
        #expect(!carried.contains(id(100)), "the oldest is held back")
    }

    @Test("a run evicted from the working set is loaded when it qualifies again: the window keeps 25")
    func windowDoesNotShrink() throws {
        var engine = try readyEngine()
        for n in 0..<26 {
            _ = engine.handle(.documentScanned(.workout(try completedRun(200 + n, start: at(n))), now: at(5_000)))
        }
        let first = try engine.perform(.forcePush, now: at(5_000))
        #expect(pushes(first).first?.0.workouts.count == 25)
        let discard = try engine.perform(.discard(runID: id(225)), now: at(5_001))
        #expect(pushes(discard).isEmpty, "the push waits for the evicted run")
        #expect(loads(discard).keys.sorted() == [id(200)])
        let loaded = engine.handle(.runsLoaded([try completedRun(200, start: at(0))], unreadable: [], now: at(5_002)))
        #expect(pushes(loaded).first?.0.workouts.count == 25)
    }

    @Test("a completed run leaves the push when it leaves the window: nextDeadline, then tick")
    func runAgesOutOnTime() throws {
        var engine = try readyEngine()
        let run = try completedRun(300, start: at(0))
        _ = engine.handle(.documentScanned(.workout(run), now: at(3_700)))
        _ = try engine.perform(.forcePush, now: at(3_700))
        let leaves = run.endedAt!.advanced(by: .seconds(86_400)).advanced(by: .microseconds(1))
        #expect(engine.nextDeadline == leaves)
        #expect(pushes(engine.handle(.tick(now: leaves.advanced(by: .microseconds(-2))))).isEmpty)
        #expect(pushes(engine.handle(.tick(now: leaves))).map(\.0.workouts.count) == [0])
        #expect(engine.nextDeadline == nil)
    }

    @Test("an operation on a run outside the window works once the run is loaded")
    func operationsOnOldRuns() throws {
        var engine = try readyEngine()
        let old = try completedRun(400, start: at(0))
        _ = engine.handle(.documentScanned(.workout(old), now: at(10 * 86_400)))
        #expect(engine.needsDocument(old.id))
        #expect(PhoneOperation.reopenLog(runID: old.id, logIndex: 1).runID == old.id)
        _ = engine.handle(.runsLoaded([old], unreadable: [], now: at(10 * 86_400)))
        let actions = try engine.perform(.reopenLog(runID: old.id, logIndex: 1), now: at(10 * 86_400 + 1))
        #expect(writtenRuns(actions).first?.status == .inProgress)
        #expect(pushes(actions).first?.0.workouts.map(\.id) == [old.id])
        #expect(throws: OperationError.refused(.runCompleted(id(401)))) {
            var other = engine
            let done = try completedRun(401, start: at(0))
            _ = other.handle(.documentScanned(.workout(done), now: at(10 * 86_400)))
            _ = other.handle(.runsLoaded([done], unreadable: [], now: at(10 * 86_400)))
            _ = try other.perform(.pause(runID: done.id), now: at(10 * 86_400 + 2))
        }
    }

    @Test("the old file of a run whose start moved months is not a vanished run")
    func movedFileIsNotADelete() throws {
        var engine = try readyEngine()
        let started = try engine.perform(.startRun(splitID: id(1), runID: id(500), endingOthers: false), now: at(1))
        var moved = try #require(writtenRuns(started).first)
        let before = moved.startedAt
        moved.startedAt = before.advanced(by: .seconds(-40 * 86_400))
        try moved.pause(at: at(2))
        _ = engine.handle(.externalChange(.documentChanged(.workout(moved)), now: at(3)))
        let (year, month) = before.yearAndMonth
        let removed = engine.handle(.externalChange(.workoutRemoved(id(500), year: year, month: month), now: at(4)))
        #expect(engine.run(id(500)) == moved)
        #expect(pushes(removed).isEmpty)
        let (newYear, newMonth) = moved.startedAt.yearAndMonth
        _ = engine.handle(.externalChange(.workoutRemoved(id(500), year: newYear, month: newMonth), now: at(5)))
        _ = engine.handle(.tick(now: at(5).advanced(by: SyncEngine.removalGrace)))
        #expect(engine.run(id(500)) == nil, "its current file going is a vanish, as before")
    }

    @Test("a run whose file is removed before its moved file is written stays in the push: the removal is held")
    func removalBeforeTheMovedFileIsHeld() throws {
        var engine = try readyEngine()
        let started = try engine.perform(.startRun(splitID: id(1), runID: id(510), endingOthers: false), now: at(1))
        let run = try #require(writtenRuns(started).first)
        let (year, month) = run.startedAt.yearAndMonth
        var moved = run
        moved.startedAt = run.startedAt.advanced(by: .seconds(-40 * 86_400))
        try moved.pause(at: at(2))

        // Old file first, the moved one seconds later: no push without the run, nothing forgotten.
        let removed = engine.handle(.externalChange(.workoutRemoved(id(510), year: year, month: month), now: at(3)))
        #expect(pushes(removed).isEmpty, "\(removed)")
        #expect(engine.run(id(510)) == run && engine.index[id(510)] != nil)
        let grace = try #require(engine.nextDeadline)
        #expect(grace == at(3).advanced(by: SyncEngine.removalGrace))
        #expect(pushes(engine.handle(.tick(now: grace.advanced(by: .microseconds(-1))))).isEmpty)
        #expect(engine.run(id(510)) == run)
        let appeared = engine.handle(
            .externalChange(.documentChanged(.workout(moved)), now: grace.advanced(by: .microseconds(-1))))
        #expect(pushes(appeared).map { $0.0.workouts.map(\.startedAt) } == [[moved.startedAt]])
        #expect(engine.nextDeadline == nil, "nothing held any more")
        #expect(pushes(engine.handle(.tick(now: grace))).isEmpty)
        #expect(engine.run(id(510)) == moved)

        // Removed and nothing appears: dropped (not deleted) and pushed absent once the grace ends.
        let (newYear, newMonth) = moved.startedAt.yearAndMonth
        let vanishedAt = grace.advanced(by: .seconds(60))
        let vanished = engine.handle(
            .externalChange(.workoutRemoved(id(510), year: newYear, month: newMonth), now: vanishedAt))
        #expect(pushes(vanished).isEmpty)
        #expect(engine.run(id(510)) == moved)
        let deadline = try #require(engine.nextDeadline)
        #expect(deadline == vanishedAt.advanced(by: SyncEngine.removalGrace))
        let dropped = engine.handle(.tick(now: deadline))
        #expect(pushes(dropped).map { $0.0.workouts } == [[]])
        #expect(engine.run(id(510)) == nil && engine.index.count == 0)
        #expect(engine.tombstones.isEmpty && engine.pendingDeletes.isEmpty)
        #expect(engine.nextDeadline == nil)
    }

    @Test("a completed run the watch may hold active rides until the watch acknowledged it completed")
    func completedRunRidesUntilTheWatchSawIt() throws {
        var engine = SyncEngine(settings: nil, policy: PushPolicy(recentLimit: 1, recentWindow: .seconds(86_400)))
        _ = engine.handle(.gatherFinished(now: t0))
        _ = engine.handle(.linkActivated(now: t0))
        _ = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [squat, row]), now: t0)
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(600), endingOthers: false), now: at(1))
        _ = engine.handle(.pushQueued(generation: 2))
        _ = engine.handle(.contextAcknowledged(generation: 2, now: at(2)))
        // The watch goes away; the run ends and a newer one ends after it (recentRunsLimit 1).
        _ = try engine.perform(.endKeepingProgress(runID: id(600)), now: at(3))
        _ = engine.handle(.pushQueued(generation: 3))
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(601), endingOthers: false), now: at(4))
        _ = engine.handle(.pushQueued(generation: 4))
        let ended = try engine.perform(.endKeepingProgress(runID: id(601)), now: at(5))
        _ = engine.handle(.pushQueued(generation: 5))
        #expect(pushes(ended).first?.0.workouts.map(\.id) == [id(601), id(600)])
        // The watch applies the last push and acknowledges it: the run has been seen completed.
        let acknowledged = engine.handle(.contextAcknowledged(generation: 5, now: at(6)))
        #expect(pushes(acknowledged).first?.0.workouts.map(\.id) == [id(601)])
    }
}
