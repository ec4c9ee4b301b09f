import TestSupport
import Testing
import WatchEngine
import WorkoutModel

/// The engine as the shell drives it: complete action lists for each event.
@Suite("Watch engine: cache, edits and forwarding")
struct WatchEngineTests {
    /// An engine that started empty, applied `pushed` as a received context, and has `reachable` set.
    func engine(_ pushed: ApplicationContext, reachable: Bool) -> WatchEngine {
        var engine = WatchEngine()
        _ = engine.handle(.started(lastContext: nil, now: t0))
        _ = engine.handle(.contextReceived(bytes(pushed), now: t0))
        _ = engine.handle(.reachabilityChanged(reachable))
        return engine
    }

    @Test("a received context is applied and its changes written and deleted file by file")
    func contextWritesFiles() throws {
        var engine = engine(context([try newRun(100), try newRun(101)]), reachable: true)
        let changed = try newRun(100).setDoneOnPhone(log: 0, at: at(10))
        let split2 = twoExerciseSplit(2)
        let pushed = context([changed], splits: [twoExerciseSplit(), split2])

        let actions = engine.handle(.contextReceived(bytes(pushed), now: at(11)))

        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        report.prunedWorkouts = [id(101)]
        report.upsertedSplits = [id(2)]
        #expect(
            actions == [
                .log(.contextApplied(report, restored: false)), .persistWorkout(changed), .deleteWorkout(id(101)),
                .persistSplit(split2),
            ])
        #expect(engine.lastApplied == report)
    }

    @Test("a context that does not decode is skipped: nothing written, cache and status say why")
    func contextSkipped() throws {
        var engine = engine(context([try newRun(100)]), reachable: false)
        let before = engine.cache
        var future = context([])
        future.schemaVersion = 9
        let actions = engine.handle(.contextReceived(bytes(future), now: at(1)))
        let error = DocumentError.unsupportedSchemaVersion(type: "ApplicationContext", found: 9, supported: 1)
        #expect(actions == [.log(.contextSkipped(error))])
        #expect(engine.cache == before)
        #expect(engine.lastSkipped == error)
    }

    @Test("an edit while reachable is written and sent as a message carrying the whole document")
    func editReachable() throws {
        var engine = engine(context([try newRun(100)]), reachable: true)
        let log = try #require(engine.cache.workouts[id(100)]).log(0)
        let actions = engine.handle(
            .editRequested(.completeSet(logID: log, setIndex: 0, reps: 5, weight: 100), runID: id(100), now: at(5)))

        var expected = try newRun(100)
        try expected.completeSet(logID: log, setIndex: 0, reps: 5, weight: 100, at: w(5))
        // The message goes before the write (it acknowledges nothing); the edit's reply waits for the write.
        #expect(
            actions == [
                .sendMessage(MessageToken(rawValue: 1), .workoutUpdate(expected)), .persistWorkout(expected),
            ])
        #expect(engine.cache.undeliveredEdits.mapValues(\.time) == [id(100): at(5)])
        #expect(engine.handle(.messageDelivered(MessageToken(rawValue: 1), now: at(100))) == [])
        #expect(engine.messagesInFlight.isEmpty)
    }

    /// Found by the simulator (seeds 9604842, 9608820, 9625528, docs/SIMULATION.md): the phone took
    /// the edit, then a person changed the file by hand while phoned was down, and its restart read
    /// the file as its own. Its pushes carried other values under the edit's stamps, which never
    /// covered the edit, and the watch waited for one that would, forever.
    @Test("a context that leaves a delivered edit uncovered: the edit is sent again, once per version")
    func uncoveredEditResent() throws {
        var engine = engine(context([try newRun(100)]), reachable: true)
        let log = try #require(engine.cache.workouts[id(100)]).log(0)
        _ = engine.handle(
            .editRequested(.completeSet(logID: log, setIndex: 0, reps: 5, weight: 100), runID: id(100), now: at(5)))
        _ = engine.handle(.messageDelivered(MessageToken(rawValue: 1), now: at(100)))
        let local = try #require(engine.cache.workouts[id(100)])
        // The phone's copy: the same stamp on the set, 4 reps written by hand (the tie between two values
        // under one stamp goes to the watch's, by their encoding).
        var phoneCopy = local
        phoneCopy.logs[0].sets[0].reps = 4

        let actions = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(6)))
        let merged = try #require(engine.cache.workouts[id(100)])
        #expect(engine.cache.undeliveredEdits[id(100)] != nil)
        #expect(actions.contains(.sendMessage(MessageToken(rawValue: 2), .workoutUpdate(merged))), "\(actions)")

        // The same context again (the phone refused it, say): not sent again for this version.
        let again = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(7)))
        #expect(!again.contains { if case .sendMessage = $0 { true } else { false } }, "\(again)")

        // Another hand edit under the same stamps (simulator seed 164123: the first re-send had gone
        // out before it): another copy leaves the edit uncovered, so the edit goes again.
        _ = engine.handle(.messageDelivered(MessageToken(rawValue: 2), now: at(8)))
        phoneCopy.logs[0].sets[0].reps = 3
        let another = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(9)))
        #expect(another.contains { if case .sendMessage = $0 { true } else { false } }, "\(another)")
    }

    /// Found by the simulator (seed 85946): the watch's edit was older than the phone's newest stamp,
    /// so the phone took it without raising the run's version. Another device then put back the copy
    /// from before it, and phoned lost power before its watcher said so: its restart read that copy as
    /// its own and pushed it, under the very version and copy the watch had answered once already.
    @Test("an edit the phone acknowledged and then lost goes again, though the push is one it answered")
    func acknowledgedEditLostResent() throws {
        var engine = engine(context([try newRun(100)]), reachable: false)
        let log = try #require(engine.cache.workouts[id(100)]).log(0)
        _ = engine.handle(
            .editRequested(.completeSet(logID: log, setIndex: 0, reps: 5, weight: 100), runID: id(100), now: at(5)))
        _ = engine.handle(.reachabilityChanged(true))
        // The phone's edit of another set is newer than the watch's: a push of it, made before the
        // phone had the watch's edit, leaves that edit uncovered, and it goes again under the phone's version.
        let phoneCopy = try newRun(100).setDoneOnPhone(log: 1, at: at(10))
        let first = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(11)))
        let local = try #require(engine.cache.workouts[id(100)])
        #expect(local.version == phoneCopy.version)
        #expect(first.contains(.sendMessage(MessageToken(rawValue: 1), .workoutUpdate(local))), "\(first)")
        _ = engine.handle(.messageDelivered(MessageToken(rawValue: 1), now: at(12)))

        // The phone lost what it acknowledged and pushes the old copy again: the edit goes again.
        let lost = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(20)))
        #expect(engine.cache.undeliveredEdits[id(100)] != nil)
        #expect(lost.contains(.sendMessage(MessageToken(rawValue: 2), .workoutUpdate(local))), "\(lost)")
        // Until it is answered, the same push does not send it a third time.
        let again = engine.handle(.contextReceived(bytes(context([phoneCopy])), now: at(21)))
        #expect(!again.contains { if case .sendMessage = $0 { true } else { false } }, "\(again)")
    }

    @Test("an edit while unreachable goes straight to transferUserInfo")
    func editUnreachable() throws {
        var engine = engine(context([try newRun(100)]), reachable: false)
        let actions = engine.handle(.editRequested(.pause, runID: id(100), now: at(5)))
        var expected = try newRun(100)
        try expected.pause(at: w(5))
        #expect(actions == [.persistWorkout(expected), .transferUserInfo(.workoutUpdate(expected))])
    }

    @Test("a failed message falls back to transferUserInfo of the same document")
    func messageFailureFallsBack() throws {
        var engine = engine(context([try newRun(100)]), reachable: true)
        _ = engine.handle(.editRequested(.pause, runID: id(100), now: at(5)))
        let paused = try #require(engine.cache.workouts[id(100)])
        // A later edit does not change what the failed message's fallback carries.
        _ = engine.handle(.editRequested(.resume, runID: id(100), now: at(6)))

        let actions = engine.handle(.messageSendFailed(MessageToken(rawValue: 1), reason: "peer unreachable"))
        #expect(
            actions == [
                .log(.updateFellBackToTransfer(MessageToken(rawValue: 1), run: id(100), reason: "peer unreachable")),
                .transferUserInfo(.workoutUpdate(paused)),
            ])
        #expect(engine.messagesInFlight.keys.sorted() == [MessageToken(rawValue: 2)])
        #expect(
            engine.handle(.messageSendFailed(MessageToken(rawValue: 1), reason: "again"))
                == [.log(.unknownMessageFailureIgnored(MessageToken(rawValue: 1)))])
    }

    @Test(
        "a refused edit is reported and changes nothing",
        arguments: [EditLocks(editingWorkoutID: id(100)), EditLocks(editingSplitID: id(1))])
    func editRefused(locks: EditLocks) throws {
        var engine = engine(context([try newRun(100)], locks: locks), reachable: true)
        let before = engine.cache
        #expect(
            engine.handle(.editRequested(.pause, runID: id(100), now: at(5)))
                == [.editRefused(runID: id(100), .editingOnPhone(id(100)))])
        #expect(
            engine.handle(.editRequested(.pause, runID: id(5), now: at(5)))
                == [.editRefused(runID: id(5), .unknownRun(id(5)))])
        #expect(engine.cache == before)
        #expect(engine.messagesInFlight.isEmpty)
    }

    @Test("the echo of a forwarded edit clears its undelivered mark")
    func echoConfirms() throws {
        var engine = engine(context([try newRun(100)]), reachable: true)
        _ = engine.handle(.editRequested(.pause, runID: id(100), now: at(5)))
        let local = try #require(engine.cache.workouts[id(100)])
        let actions = engine.handle(.contextReceived(bytes(context([local])), now: at(6)))
        var report = ContextApplyReport()
        report.confirmedEdits = [id(100)]
        #expect(actions == [.log(.contextApplied(report, restored: false))])
        #expect(engine.cache.undeliveredEdits.isEmpty)
    }
}

@Suite("Watch engine: cold launch and requestSync (S9)")
struct WatchEngineColdLaunchTests {
    @Test("the persisted context is re-applied eagerly; requestSync goes out once the phone is reachable")
    func eagerReapplyThenRequestSync() throws {
        var engine = WatchEngine()
        let run = try newRun(100)
        let started = engine.handle(.started(lastContext: bytes(context([run])), now: t0))
        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        report.upsertedSplits = [id(1)]
        #expect(
            started == [
                .log(.contextApplied(report, restored: true)), .persistWorkout(run), .persistSplit(twoExerciseSplit()),
            ])
        #expect(engine.cache.activeRuns == [run])

        #expect(
            engine.handle(.reachabilityChanged(true))
                == [
                    .log(.requestingSync),
                    .sendMessage(MessageToken(rawValue: 1), .requestSync),
                ])
        // A failed requestSync is best effort: logged, not retried, no transfer.
        #expect(
            engine.handle(.messageSendFailed(MessageToken(rawValue: 1), reason: "timeout"))
                == [.log(.requestSyncFailed(MessageToken(rawValue: 1), reason: "timeout"))])
    }

    @Test("reachability regained asks again only while no context has been received since start")
    func requestSyncAgainOnlyIfNothingReceived() throws {
        var engine = WatchEngine()
        _ = engine.handle(.started(lastContext: nil, now: t0))
        #expect(engine.handle(.reachabilityChanged(true)).count == 2)
        #expect(engine.handle(.reachabilityChanged(true)) == [])
        #expect(engine.handle(.reachabilityChanged(false)) == [])
        #expect(
            engine.handle(.reachabilityChanged(true))
                == [
                    .log(.requestingSync),
                    .sendMessage(MessageToken(rawValue: 2), .requestSync),
                ])
        _ = engine.handle(.contextReceived(bytes(context([])), now: at(1)))
        #expect(engine.handle(.reachabilityChanged(false)) == [])
        #expect(engine.handle(.reachabilityChanged(true)) == [])
    }

    @Test("a persisted context that does not decode is skipped at start-up and the cache files stay")
    func persistedContextSkipped() throws {
        let run = try newRun(100)
        var engine = WatchEngine(cache: WatchCache(restoringWorkouts: [run], splits: []))
        let actions = engine.handle(.started(lastContext: Array("{}".utf8), now: t0))
        let error = DocumentError.malformed(type: "ApplicationContext", field: "schemaVersion", reason: "missing")
        // Unconfirmed restored runs are re-forwarded: the phone's updatedAt gate ignores an echo.
        #expect(actions == [.log(.persistedContextSkipped(error)), .transferUserInfo(.workoutUpdate(run))])
        #expect(engine.cache.workouts == [id(100): run])
    }

    @Test("a local edit the phone never confirmed survives the restart and is re-forwarded")
    func undeliveredEditReforwarded() throws {
        let phoneCopy = try newRun(100)
        var localFile = phoneCopy
        try localFile.pause(at: at(30))
        var engine = WatchEngine(cache: WatchCache(restoringWorkouts: [localFile], splits: [twoExerciseSplit()]))

        let actions = engine.handle(.started(lastContext: bytes(context([phoneCopy])), now: at(40)))

        var report = ContextApplyReport()
        report.keptLocal = [id(100)]
        #expect(
            actions == [.log(.contextApplied(report, restored: true)), .transferUserInfo(.workoutUpdate(localFile))])
        #expect(engine.cache.workouts[id(100)] == localFile)
    }

    /// Found by the simulator (seed 74 with torn outbox appends, docs/SIMULATION.md): the outbox's
    /// copies were compared by `updatedAt`, the time of the newest stamp only. Two watch edits made
    /// while its clock was behind the stamps it had seen share that time and differ in the counter, so
    /// the older copy in the outbox passed for the newer edit whose transfer a crash lost.
    @Test("an outbox copy with the same time but an older stamp than the local edit does not stop the re-forward")
    func reforwardedOverSameTimeOlderCopy() throws {
        let (phoneCopy, queuedCopy, localFile) = try sameTimeEdits()
        #expect(localFile.updatedAt == queuedCopy.updatedAt && localFile.version > queuedCopy.version)
        var engine = restarted(localFile, queued: queuedCopy)

        let actions = engine.handle(.started(lastContext: bytes(context([phoneCopy])), now: at(40)))

        #expect(actions.contains(.transferUserInfo(.workoutUpdate(localFile))), "the newest edit is never sent")
    }

    /// The same comparison by `updatedAt` in the cancel: a cancelled older copy with the time of the
    /// newest edit passed for it, and the run went back to the phone's copy, the newer edit with it.
    @Test("cancelling the transfer of an older edit with the same time keeps the newer local edit")
    func cancelOfSameTimeOlderCopyKeepsNewerEdit() throws {
        let (phoneCopy, queuedCopy, localFile) = try sameTimeEdits()
        var engine = restarted(localFile, queued: queuedCopy)
        _ = engine.handle(.started(lastContext: bytes(context([phoneCopy])), now: at(40)))

        _ = engine.handle(.transferCancelled(.workoutUpdate(queuedCopy)))

        #expect(engine.cache.workouts[id(100)] == localFile, "the newer edit was reverted with the older copy")
        #expect(engine.cache.hasUndeliveredEdit(id(100)))
    }

    /// The phone's copy of a run, and two watch edits of it made while the watch's clock was behind:
    /// one time, counters 1 and 2 (the first still queued, the second the cache's).
    private func sameTimeEdits() throws -> (WorkoutDocument, WorkoutDocument, WorkoutDocument) {
        let phoneCopy = try newRun(100)
        var queuedCopy = phoneCopy
        try queuedCopy.pause(at: Stamp(time: at(30), counter: 1, origin: .watch))
        var localFile = queuedCopy
        try localFile.resume(at: Stamp(time: at(30), counter: 2, origin: .watch))
        return (phoneCopy, queuedCopy, localFile)
    }

    /// An engine started from a cache file holding `localFile` and an outbox holding `queued`.
    private func restarted(_ localFile: WorkoutDocument, queued: WorkoutDocument) -> WatchEngine {
        WatchEngine(
            cache: WatchCache(restoringWorkouts: [localFile], splits: [twoExerciseSplit()]),
            queued: [.workoutUpdate(queued)])
    }
}
