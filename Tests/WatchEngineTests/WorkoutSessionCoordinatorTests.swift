import TestSupport
import Testing
import WatchEngine
import WorkoutModel

@Suite("Workout session coordinator")
struct WorkoutSessionCoordinatorTests {
    func cache(_ runs: [WorkoutDocument]) -> WatchCache {
        var cache = WatchCache()
        _ = WatchCacheApplier.apply(context(runs), to: &cache)
        return cache
    }

    func running(_ run: Int = 100, since start: Timestamp = at(1), seen: Bool = true) -> SessionState {
        .running(RunningSession(runID: id(run), startedAt: start, origin: .phoneLaunch, runSeen: seen))
    }

    @Test("a launch for a cached active run starts the session and persists it")
    func startFromLaunch() throws {
        var coordinator = WorkoutSessionCoordinator()
        let actions = coordinator.handle(
            .startRequested(runID: id(100), origin: .phoneLaunch, cache: cache([try newRun()]), now: at(1)))
        #expect(coordinator.state == running())
        #expect(
            actions == [
                .persistSession(SessionRecord(running())), .log(.sessionRunning(run: id(100), runInCache: true)),
            ])
    }

    @Test("a second start while running is covered by the running session, and logged")
    func startIdempotent() throws {
        var coordinator = WorkoutSessionCoordinator()
        let cache = cache([try newRun(), try newRun(101)])
        _ = coordinator.handle(.startRequested(runID: id(100), origin: .phoneLaunch, cache: cache, now: at(1)))
        #expect(coordinator.startRefusal(runID: id(101), origin: .watch, cache: cache) == nil)
        let again = coordinator.handle(.startRequested(runID: id(101), origin: .watch, cache: cache, now: at(2)))
        #expect(
            again == [
                .log(.sessionStartIgnored(run: id(101), refusal: "the session running for run \(id(100)) covers it"))
            ])
        #expect(coordinator.state == running())
    }

    /// Seams 8: seed 001's session machine ends the session when the active list empties; one bound
    /// to one run ended while another was active, and the second run never had a session.
    @Test("the session goes on for another active run when its own completes, and ends when none is left")
    func sessionCoversTheActiveList() throws {
        var coordinator = WorkoutSessionCoordinator()
        var first = try newRun()
        let second = try newRun(101)
        _ = coordinator.handle(
            .startRequested(runID: id(100), origin: .phoneLaunch, cache: cache([first, second]), now: at(1)))
        try first.endKeepingProgress(at: Stamp(time: at(10), origin: .phone))
        let metrics = first.sessionMetrics(recordedAt: at(11))
        let moved = coordinator.handle(.cacheChanged(cache([first, second]), source: .receivedContext, now: at(11)))
        let goesOn = RunningSession(runID: id(101), startedAt: at(1), origin: .phoneLaunch, runSeen: true)
        #expect(
            moved == [
                .saveMetrics(runID: id(100), metrics), .persistSession(SessionRecord(.running(goesOn))),
                .log(.sessionMovedOn(from: id(100), .finishedAndSaved(metrics: metrics), to: id(101))),
            ])
        let ended = coordinator.handle(.cacheChanged(cache([first]), source: .receivedContext, now: at(12)))
        let over = EndedSession(runID: id(101), startedAt: at(1), endedAt: at(12), outcome: .discarded)
        #expect(ended == [.persistSession(SessionRecord(.ended(over))), .log(.sessionEnded(run: id(101), .discarded))])
    }

    @Test("a start for a completed run, or a watch start for an unknown run, is refused")
    func startRefused() throws {
        var coordinator = WorkoutSessionCoordinator()
        let cache = cache([try newRun().completedOnPhone(at: at(5))])
        #expect(
            coordinator.handle(.startRequested(runID: id(100), origin: .phoneLaunch, cache: cache, now: at(6)))
                == [.log(.sessionStartIgnored(run: id(100), refusal: "the run is completed"))])
        #expect(
            coordinator.handle(.startRequested(runID: id(7), origin: .watch, cache: cache, now: at(6)))
                == [.log(.sessionStartIgnored(run: id(7), refusal: "no such run on this watch"))])
        #expect(coordinator.state == .idle)
    }

    @Test("a launch that beats its context starts anyway and waits for the run to arrive")
    func launchBeforeContext() throws {
        var coordinator = WorkoutSessionCoordinator()
        let start = coordinator.handle(
            .startRequested(runID: id(100), origin: .phoneLaunch, cache: WatchCache(), now: at(1)))
        #expect(
            start == [
                .persistSession(SessionRecord(running(seen: false))),
                .log(.sessionRunning(run: id(100), runInCache: false)),
            ])
        // The re-applied persisted context and local edits of other runs cannot show the run is gone.
        #expect(coordinator.handle(.cacheChanged(cache([]), source: .restoredContext, now: at(2))) == [])
        #expect(coordinator.handle(.cacheChanged(cache([]), source: .localEdit, now: at(2))) == [])
        #expect(coordinator.state == running(seen: false))
        // The context arrives: the run is seen, and the record says so.
        let arrived = coordinator.handle(.cacheChanged(cache([try newRun()]), source: .receivedContext, now: at(3)))
        #expect(arrived == [.persistSession(SessionRecord(running()))])
        #expect(coordinator.handle(.cacheChanged(cache([try newRun()]), source: .receivedContext, now: at(4))) == [])
    }

    @Test("a received context without the never-seen run discards the session")
    func neverSeenRunDiscarded() throws {
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running(seen: false)))
        let actions = coordinator.handle(.cacheChanged(cache([]), source: .receivedContext, now: at(9)))
        let ended = EndedSession(runID: id(100), startedAt: at(1), endedAt: at(9), outcome: .discarded)
        #expect(coordinator.state == .ended(ended))
        #expect(
            actions == [
                .persistSession(SessionRecord(.ended(ended))),
                .log(.sessionEnded(run: id(100), .discarded)),
            ])
    }

    @Test(
        "a completed run finishes and saves with its metrics, whatever completed it",
        arguments: ["all sets done", "ended early keeping progress"])
    func completedRunFinishes(how: String) throws {
        var run = try newRun().setDoneOnPhone(log: 0, at: at(60))
        if how == "all sets done" {
            run = try run.completedOnPhone(at: at(120))
        } else {
            try run.endKeepingProgress(at: at(120))
        }
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running()))
        let actions = coordinator.handle(.cacheChanged(cache([run]), source: .receivedContext, now: at(130)))

        let metrics = run.sessionMetrics(recordedAt: at(130))
        let ended = EndedSession(
            runID: id(100), startedAt: at(1), endedAt: at(130), outcome: .finishedAndSaved(metrics: metrics))
        #expect(coordinator.state == .ended(ended))
        #expect(actions.count == 3)
        #expect(
            actions.prefix(2) == [.saveMetrics(runID: id(100), metrics), .persistSession(SessionRecord(.ended(ended)))])
        // Once ended, further reconciles do nothing: metrics are saved once.
        #expect(coordinator.handle(.cacheChanged(cache([run]), source: .receivedContext, now: at(140))) == [])
    }

    @Test(
        "a seen run that leaves the cache discards the session, whatever the change source",
        arguments: [WorkoutSessionCoordinator.CacheChangeSource.receivedContext, .restoredContext, .localEdit])
    func absentRunDiscards(source: WorkoutSessionCoordinator.CacheChangeSource) {
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running()))
        let actions = coordinator.handle(.cacheChanged(cache([]), source: source, now: at(50)))
        #expect(actions.first == .persistSession(SessionRecord(coordinator.state)))
        #expect(
            coordinator.state
                == .ended(EndedSession(runID: id(100), startedAt: at(1), endedAt: at(50), outcome: .discarded)))
    }

    @Test("an active run keeps the session running")
    func activeRunKeepsRunning() throws {
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running()))
        let run = try newRun().setDoneOnPhone(log: 0, at: at(60))
        #expect(coordinator.handle(.cacheChanged(cache([run]), source: .receivedContext, now: at(61))) == [])
        #expect(coordinator.state == running())
    }

    @Test("a system end moves running to ended; clear moves ended to idle")
    func systemEndAndClear() {
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running()))
        let actions = coordinator.handle(.endedBySystem(failure: "heart-rate sensor lost", now: at(5)))
        let ended = EndedSession(
            runID: id(100), startedAt: at(1), endedAt: at(5), outcome: .systemFailure(reason: "heart-rate sensor lost"))
        #expect(
            actions == [
                .persistSession(SessionRecord(.ended(ended))),
                .log(.sessionEnded(run: id(100), .systemFailure(reason: "heart-rate sensor lost"))),
            ])
        #expect(
            coordinator.handle(.endedBySystem(failure: "again", now: at(6)))
                == [.log(.systemEndIgnored(failure: "again"))])
        #expect(coordinator.handle(.cleared) == [.persistSession(SessionRecord(.idle)), .log(.sessionCleared)])
        #expect(coordinator.state == .idle)
        #expect(coordinator.handle(.cleared) == [])
    }

    @Test("a start after an ended session clears it implicitly")
    func startAfterEnded() throws {
        let ended = EndedSession(runID: id(100), startedAt: at(1), endedAt: at(5), outcome: .discarded)
        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(.ended(ended)))
        _ = coordinator.handle(
            .startRequested(runID: id(101), origin: .watch, cache: cache([try newRun(101)]), now: at(9)))
        #expect(
            coordinator.state
                == .running(RunningSession(runID: id(101), startedAt: at(9), origin: .watch, runSeen: true)))
    }

    @Test("metrics count active time without pauses, sets done and volume")
    func metricsArithmetic() throws {
        // Started at t0; paused 100 s → 160 s; the last set done at 220 s.
        var run = try newRun()
        try run.completeSet(logID: run.log(0), setIndex: 0, reps: 5, weight: 100, at: at(60))
        try run.pause(at: at(100))
        try run.resume(at: at(160))
        try run.completeSet(logID: run.log(0), setIndex: 1, reps: 4, weight: 102.5, at: at(200))
        try run.completeSet(logID: run.log(1), setIndex: 0, reps: 10, weight: 40, at: at(220))
        #expect(run.status == .completed)

        var coordinator = WorkoutSessionCoordinator(restoring: SessionRecord(running()))
        let actions = coordinator.handle(.cacheChanged(cache([run]), source: .receivedContext, now: at(300)))
        let expected = SessionMetrics(
            activeSeconds: 160, setsCompleted: 3, totalVolume: 500 + 410 + 400, recordedAt: at(300))
        #expect(actions.first == .saveMetrics(runID: id(100), expected))
    }

    @Test("the session record round-trips through the document coder")
    func recordRoundTrips() throws {
        let shape = String(decoding: DocumentCoder.encodeCompact(SessionRecord(running())), as: UTF8.self)
        #expect(
            shape == #"{"schemaVersion":1,"state":{"running":{"_0":{"origin":"phoneLaunch","runID":"\#(id(100))","#
                + #""runSeen":true,"startedAt":"2026-11-29T12:00:01.000000Z"}}}}"#)
        let metrics = SessionMetrics(activeSeconds: 1.5, setsCompleted: 2, totalVolume: 3, recordedAt: at(4))
        for state in [
            SessionState.idle, running(seen: false),
            .ended(
                EndedSession(
                    runID: id(1), startedAt: at(1), endedAt: at(2), outcome: .finishedAndSaved(metrics: metrics))),
            .ended(EndedSession(runID: id(1), startedAt: at(1), endedAt: at(2), outcome: .systemFailure(reason: "x"))),
        ] {
            let record = SessionRecord(state)
            #expect(try DocumentCoder.decode(SessionRecord.self, from: DocumentCoder.encodeForDisk(record)) == record)
        }
    }
}
