import TestSupport
import Testing
import WatchEngine
import WorkoutModel

/// The session fix (S4/S5/S6/S7) through the engine, as the shell sees it.
@Suite("Watch engine: the workout session ends from authoritative data")
struct WatchEngineSessionTests {
    let launch = WorkoutLaunchRequest(runID: id(100)).encoded()

    /// Started, holding run 100 from a received context, with a session running for it since `at(1)`.
    func runningEngine(reachable: Bool, run: WorkoutDocument? = nil) throws -> WatchEngine {
        var engine = WatchEngine()
        _ = engine.handle(.started(lastContext: nil, now: t0))
        _ = engine.handle(.contextReceived(bytes(context([try run ?? newRun(100)])), now: t0))
        _ = engine.handle(.reachabilityChanged(reachable))
        _ = engine.handle(.launchReceived(payload: launch, now: at(1)))
        return engine
    }

    var runningState: SessionState {
        .running(RunningSession(runID: id(100), startedAt: at(1), origin: .phoneLaunch, runSeen: true))
    }

    /// The run as the watch stores and forwards it after the session recorded `metrics` at `stamp`.
    func withMetrics(_ run: WorkoutDocument, _ metrics: SessionMetrics, at stamp: Timestamp) -> WorkoutDocument {
        var saved = run
        saved.recordMetrics(metrics, at: Stamp(time: stamp, origin: .watch))
        return saved
    }

    func finished(_ metrics: SessionMetrics, at now: Timestamp) -> [WatchEngine.Action] {
        let ended = EndedSession(
            runID: id(100), startedAt: at(1), endedAt: now, outcome: .finishedAndSaved(metrics: metrics))
        return [
            .persistSession(SessionRecord(.ended(ended))),
            .log(.sessionEnded(run: id(100), .finishedAndSaved(metrics: metrics))),
        ]
    }

    @Test("a launch brings the app to the foreground and starts the session; a second launch is covered by it")
    func launchStarts() throws {
        var engine = WatchEngine()
        _ = engine.handle(.started(lastContext: nil, now: t0))
        _ = engine.handle(.contextReceived(bytes(context([try newRun(100)])), now: t0))
        #expect(
            engine.handle(.launchReceived(payload: launch, now: at(1)))
                == [
                    .bringAppToForeground, .persistSession(SessionRecord(runningState)),
                    .log(.sessionRunning(run: id(100), runInCache: true)),
                ])
        #expect(
            engine.handle(.launchReceived(payload: launch, now: at(2)))
                == [
                    .bringAppToForeground,
                    .log(
                        .sessionStartIgnored(
                            run: id(100), refusal: "the session running for run \(id(100)) covers it")),
                ])
        #expect(engine.session == runningState)
        let error = DocumentError.malformed(type: "WorkoutLaunchRequest", field: "runID", reason: "missing")
        #expect(
            engine.handle(.launchReceived(payload: Array(#"{"schemaVersion":1}"#.utf8), now: at(3)))
                == [.log(.launchRequestIgnored(error))])
    }

    @Test("S4: the phone completes the run while the watch app is in the background → finish and save, sent once")
    func phoneCompletes() throws {
        var engine = try runningEngine(reachable: true)
        let completed = try newRun(100).completedOnPhone(at: at(100))

        let actions = engine.handle(.contextReceived(bytes(context([completed])), now: at(130)))

        let metrics = completed.sessionMetrics(recordedAt: at(130))
        let saved = withMetrics(completed, metrics, at: at(130))
        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        #expect(
            actions
                == [
                    .log(.contextApplied(report, restored: false)), .persistWorkout(saved),
                    .sendMessage(MessageToken(rawValue: 1), .workoutUpdate(saved)),
                ] + finished(metrics, at: at(130)))
        #expect(saved.metrics?.setsCompleted == 3)
        #expect(saved.updatedAt > completed.updatedAt)

        // The phone's echo carries the metrics; nothing more is sent, the session stays ended.
        let echo = engine.handle(.contextReceived(bytes(context([saved])), now: at(131)))
        var echoReport = ContextApplyReport()
        echoReport.confirmedEdits = [id(100)]
        #expect(echo == [.log(.contextApplied(echoReport, restored: false))])
        #expect(
            engine.handle(.contextReceived(bytes(context([saved])), now: at(132))) == [
                .log(.contextApplied(ContextApplyReport(), restored: false))
            ])
    }

    @Test("S6: the phone saves early (end keeping progress) → the same finish and save, by transfer when unreachable")
    func phoneSavesEarly() throws {
        var engine = try runningEngine(reachable: false)
        var ended = try newRun(100).setDoneOnPhone(log: 0, at: at(60))
        try ended.endKeepingProgress(at: at(90))

        let actions = engine.handle(.contextReceived(bytes(context([ended])), now: at(95)))

        let metrics = ended.sessionMetrics(recordedAt: at(95))
        #expect(metrics == SessionMetrics(activeSeconds: 90, setsCompleted: 1, totalVolume: 500, recordedAt: at(95)))
        let saved = withMetrics(ended, metrics, at: at(95))
        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        #expect(
            actions
                == [
                    .log(.contextApplied(report, restored: false)), .persistWorkout(saved),
                    .transferUserInfo(.workoutUpdate(saved)),
                ]
                + finished(metrics, at: at(95)))
    }

    @Test("S7: the phone discards the run → the session is discarded, nothing saved or sent")
    func phoneDiscards() throws {
        var engine = try runningEngine(reachable: true)
        let actions = engine.handle(.contextReceived(bytes(context([])), now: at(20)))
        var report = ContextApplyReport()
        report.prunedWorkouts = [id(100)]
        let ended = EndedSession(runID: id(100), startedAt: at(1), endedAt: at(20), outcome: .discarded)
        #expect(
            actions == [
                .log(.contextApplied(report, restored: false)), .deleteWorkout(id(100)),
                .persistSession(SessionRecord(.ended(ended))),
                .log(.sessionEnded(run: id(100), .discarded)),
            ])
        #expect(engine.messagesInFlight.isEmpty)
    }

    @Test("a system failure ends the session; clear returns it to idle")
    func systemFailure() throws {
        var engine = try runningEngine(reachable: true)
        let ended = EndedSession(
            runID: id(100), startedAt: at(1), endedAt: at(7), outcome: .systemFailure(reason: "stopped"))
        #expect(
            engine.handle(.sessionEndedBySystem(failure: "stopped", now: at(7)))
                == [
                    .persistSession(SessionRecord(.ended(ended))),
                    .log(.sessionEnded(run: id(100), .systemFailure(reason: "stopped"))),
                ])
        #expect(engine.handle(.sessionCleared) == [.persistSession(SessionRecord(.idle)), .log(.sessionCleared)])
        #expect(engine.session == .idle)
    }

    @Test("S5: finishing the run on the watch ends the session through the same reconcile, one update sent")
    func watchFinishes() throws {
        var engine = try runningEngine(reachable: true)
        let actions = engine.handle(.editRequested(.finishRun, runID: id(100), now: at(50)))

        var finishedRun = try newRun(100)
        try finishedRun.endKeepingProgress(at: w(50))
        let metrics = finishedRun.sessionMetrics(recordedAt: at(50))
        var saved = finishedRun
        saved.recordMetrics(metrics, at: Stamp(time: at(50), counter: 1, origin: .watch))
        #expect(
            actions
                == [.sendMessage(MessageToken(rawValue: 1), .workoutUpdate(saved)), .persistWorkout(saved)]
                + finished(metrics, at: at(50)))

        // The echo of the update does not end the session a second time.
        let echo = engine.handle(.contextReceived(bytes(context([saved])), now: at(51)))
        #expect(echo.count == 1)
        #expect(engine.messagesInFlight.count == 1)
    }

    @Test(
        "a launch that beats its context keeps the session until the run arrives, then tracks it; the app asks for the state"
    )
    func launchBeforeContext() throws {
        var engine = WatchEngine()
        _ = engine.handle(.started(lastContext: nil, now: t0))
        let unseen = SessionState.running(
            RunningSession(runID: id(100), startedAt: at(1), origin: .phoneLaunch, runSeen: false))
        #expect(
            engine.handle(.launchReceived(payload: launch, now: at(1)))
                == [
                    .bringAppToForeground, .persistSession(SessionRecord(unseen)),
                    .log(.sessionRunning(run: id(100), runInCache: false)), .log(.requestingSync),
                ])

        let run = try newRun(100)
        let actions = engine.handle(.contextReceived(bytes(context([run])), now: at(2)))
        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        report.upsertedSplits = [id(1)]
        #expect(
            actions == [
                .log(.contextApplied(report, restored: false)), .persistWorkout(run), .persistSplit(twoExerciseSplit()),
                .persistSession(SessionRecord(runningState)),
            ])
    }

    @Test("restart: a running session whose run completed in the persisted context is finished and saved at start-up")
    func restartCompleted() throws {
        let run = try newRun(100)
        let completed = try run.completedOnPhone(at: at(100))
        var engine = WatchEngine(
            cache: WatchCache(restoringWorkouts: [run], splits: [twoExerciseSplit()]),
            session: SessionRecord(runningState))

        let actions = engine.handle(.started(lastContext: bytes(context([completed])), now: at(500)))

        let metrics = completed.sessionMetrics(recordedAt: at(500))
        let saved = withMetrics(completed, metrics, at: at(500))
        var report = ContextApplyReport()
        report.upsertedWorkouts = [id(100)]
        report.confirmedEdits = [id(100)]
        #expect(
            actions
                == [
                    .log(.contextApplied(report, restored: true)), .persistWorkout(saved),
                    .transferUserInfo(.workoutUpdate(saved)),
                ]
                + finished(metrics, at: at(500)))
    }

    /// A restored run may carry an edit the phone never got (seams 6): it is held and re-forwarded,
    /// and pruned, its session discarded, once the phone has it.
    @Test(
        "restart: a running session whose run is absent from the persisted context is discarded once the phone has the run's copy"
    )
    func restartAbsent() throws {
        let run = try newRun(100)
        var engine = WatchEngine(
            cache: WatchCache(restoringWorkouts: [run], splits: [twoExerciseSplit()]),
            session: SessionRecord(runningState))

        let actions = engine.handle(.started(lastContext: bytes(context([])), now: at(500)))

        var report = ContextApplyReport()
        report.heldUndelivered = [id(100)]
        #expect(actions == [.log(.contextApplied(report, restored: true)), .transferUserInfo(.workoutUpdate(run))])
        #expect(engine.cache.workouts[id(100)] == run)

        let delivered = engine.handle(.transferDelivered(.workoutUpdate(run), now: at(510)))
        let ended = EndedSession(runID: id(100), startedAt: at(1), endedAt: at(510), outcome: .discarded)
        #expect(
            delivered == [
                .log(.absentRunPruned(run: id(100))), .deleteWorkout(id(100)),
                .persistSession(SessionRecord(.ended(ended))),
                .log(.sessionEnded(run: id(100), .discarded)),
            ])
    }

    @Test("restart: a session still waiting for its run is not discarded by the older persisted context")
    func restartAwaiting() throws {
        let unseen = SessionState.running(
            RunningSession(runID: id(100), startedAt: at(1), origin: .phoneLaunch, runSeen: false))
        var engine = WatchEngine(session: SessionRecord(unseen))
        var report = ContextApplyReport()
        report.upsertedSplits = [id(1)]
        #expect(
            engine.handle(.started(lastContext: bytes(context([])), now: at(5)))
                == [.log(.contextApplied(report, restored: true)), .persistSplit(twoExerciseSplit())])
        #expect(engine.session == unseen)
    }
}
