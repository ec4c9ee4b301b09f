import LiveMirror
import Testing
import WorkoutModel

@Suite("Live mirror: driving a flow and delivering its frames")
struct LiveMirrorDrivingTests {
    let run = newRun()
    var runID: DocumentID { run.id }

    @Test("opening a flow broadcasts ready for the first unfinished set and wakes at the countdown's end")
    func openFlow() {
        var mirror = reachableMirror()
        let actions = mirror.handle(.flowOpened(run: run.withSetsDone(1), logID: nil, settings: settings, now: t0))
        let frame = squat(.ready, set: 1, anchor: t0, version: 1)
        #expect(
            actions == [
                .send(.progress(frame), attempt: 1),
                .log(.driving(run: runID, frame)),
                .scheduleWakeUp(at: at(5)),
            ])
        #expect(mirror.screen(for: runID, now: at(2))?.remainingSeconds == 3)
        #expect(mirror.screen(for: runID, now: at(2))?.role == .driving)
    }

    @Test("opening a named exercise starts there; an unknown log or a missing flow is refused")
    func openNamedLogAndRefusals() {
        var mirror = reachableMirror()
        let opened = mirror.handle(.flowOpened(run: run, logID: run.logs[1].id, settings: settings, now: t0))
        #expect(progress(sent(opened).first)?.exerciseName == "Row")
        #expect(progress(sent(opened).first)?.setCount == 2)
        #expect(
            mirror.handle(.flowOpened(run: run, logID: id(9), settings: settings, now: t0))
                == [.refused(runID: runID, .unknownLog(id(9)))])
        #expect(mirror.handle(.setCompleted(runID: id(7), now: t0)) == [.refused(runID: id(7), .flowNotOpen)])
        #expect(
            mirror.handle(.restSkipped(runID: runID, now: at(1)))
                == [.refused(runID: runID, .notInPhase(action: "skip the rest", phase: .ready))])
    }

    @Test("human actions send frames; crossing a timed boundary only logs")
    func humanActionsOnly() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.sendSucceeded(runID: runID, version: 1))
        #expect(
            mirror.handle(.tick(now: at(5)))
                == [
                    .log(
                        .crossed(
                            run: runID, LivePosition(phase: .work, setIndex: 0, anchor: at(5)), setCount: 3,
                            role: .driving, crossed: 1))
                ])
        #expect(
            mirror.handle(.setCompleted(runID: runID, now: at(20)))
                == [
                    .send(.progress(squat(.rest, set: 0, anchor: at(20), version: 2)), attempt: 1),
                    .log(.moved(run: runID, squat(.rest, set: 0, anchor: at(20), version: 2))),
                    .scheduleWakeUp(at: at(110)),
                ])
        #expect(
            mirror.handle(.restSkipped(runID: runID, now: at(30)))
                == [
                    .send(.progress(squat(.ready, set: 1, anchor: at(30), version: 3)), attempt: 1),
                    .log(.moved(run: runID, squat(.ready, set: 1, anchor: at(30), version: 3))),
                    .scheduleWakeUp(at: at(35)),
                ])
        #expect(
            mirror.handle(.countdownSkipped(runID: runID, now: at(31)))
                == [
                    .send(.progress(squat(.work, set: 1, anchor: at(31), version: 4)), attempt: 1),
                    .log(.moved(run: runID, squat(.work, set: 1, anchor: at(31), version: 4))),
                ])
        #expect(
            mirror.handle(.flowClosed(runID: runID, now: at(40)))
                == [
                    .send(.ended(LiveEnded(runID: runID, version: 5, anchor: at(40))), attempt: 1),
                    .log(.closed(run: runID, version: 5)),
                ])
        #expect(mirror.screen(now: at(41)).isEmpty)
    }

    @Test("the last set's completion goes to finish, with no rest")
    func finishAfterLastSet() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run.withSetsDone(2), logID: nil, settings: settings, now: t0))
        let actions = mirror.handle(.setCompleted(runID: runID, now: at(3)))
        #expect(progress(sent(actions).first) == squat(.finish, set: 2, anchor: at(3), version: 2))
        #expect(mirror.screen(for: runID, now: at(500))?.phase == .finish)
    }

    @Test("receiving v7 bumps the counter: the next outbound frame is v8")
    func bumpPastReceived() {
        var mirror = reachableMirror()
        _ = mirror.handle(.messageReceived(.progress(squat(.work, version: 7, run: 200)), now: t0))
        let actions = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: at(1)))
        #expect(progress(sent(actions).first)?.version == 8)
        // A received version below the counter does not lower it.
        _ = mirror.handle(.messageReceived(.ended(LiveEnded(runID: id(300), version: 2, anchor: t0)), now: at(2)))
        #expect(mirror.version == 8)
    }

    @Test("a restarted engine's version floor is the start-up wall clock in milliseconds")
    func versionFloor() {
        #expect(LiveMirror.versionFloor(startingAt: t0) == Int(t0.microsecondsSinceEpoch / 1_000))
        var restarted = reachableMirror(versionFloor: LiveMirror.versionFloor(startingAt: at(60)))
        let frame = progress(
            sent(restarted.handle(.flowOpened(run: run, logID: nil, settings: settings, now: at(60)))).first)
        #expect(frame.map { $0.version > LiveMirror.versionFloor(startingAt: t0) + 1_000 } == true)
    }

    @Test("after a restart the floor never falls below the persisted version, even with the clock behind it")
    func versionFloorMonotoneAcrossRestarts() {
        var before = reachableMirror(versionFloor: LiveMirror.versionFloor(startingAt: at(60)))
        _ = before.handle(.flowOpened(run: run, logID: nil, settings: settings, now: at(60)))
        let last = before.version
        // The clock stepped back a minute before the restart.
        var restarted = reachableMirror(versionFloor: LiveMirror.versionFloor(startingAt: t0, persisted: last))
        let opened = restarted.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        let frame = progress(sent(opened).first)
        #expect(frame.map { $0.version > last } == true, "a later action outranks an earlier one")
    }

    @Test("while unreachable each run stages only its latest frame; liveEnded replaces it; the edge re-sends it")
    func stagingLatestWins() {
        var mirror = LiveMirror()
        #expect(
            mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
                == [.log(.driving(run: runID, squat(.ready, anchor: t0, version: 1))), .scheduleWakeUp(at: at(5))])
        _ = mirror.handle(.countdownSkipped(runID: runID, now: at(2)))
        #expect(mirror.staging[runID]?.message == .progress(squat(.work, anchor: at(2), version: 2)))
        _ = mirror.handle(.flowClosed(runID: runID, now: at(3)))
        let ended = LiveMessage.ended(LiveEnded(runID: runID, version: 3, anchor: at(3)))
        #expect(mirror.staging.entries.count == 1)
        #expect(mirror.staging[runID]?.message == ended)
        #expect(mirror.handle(.reachabilityChanged(true, now: at(10))) == [.send(ended, attempt: 1)])
        // Not an edge: nothing is sent again.
        #expect(mirror.handle(.reachabilityChanged(true, now: at(11))) == [])
        #expect(mirror.handle(.sendSucceeded(runID: runID, version: 3)) == [])
        #expect(mirror.staging.entries.isEmpty)
    }

    @Test("regaining reachability re-sends exactly the newest frame of each open run, in run order")
    func resendOnReachability() {
        var mirror = LiveMirror()
        let other = newRun(101)
        _ = mirror.handle(.flowOpened(run: other, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.setCompleted(runID: runID, now: at(1)))
        _ = mirror.handle(.setCompleted(runID: other.id, now: at(2)))
        let actions = mirror.handle(.reachabilityChanged(true, now: at(5)))
        #expect(
            actions == [
                .send(.progress(squat(.rest, anchor: at(1), version: 3)), attempt: 1),
                .send(.progress(squat(.rest, anchor: at(2), version: 4, run: 101)), attempt: 1),
            ])
        // Delivered: the next edge sends the same frames again, nothing newer (the peer may have
        // restarted and lost its covers; one that did not already shows them).
        _ = mirror.handle(.sendSucceeded(runID: runID, version: 3))
        _ = mirror.handle(.sendSucceeded(runID: other.id, version: 4))
        _ = mirror.handle(.reachabilityChanged(false, now: at(6)))
        #expect(
            sent(mirror.handle(.reachabilityChanged(true, now: at(7))))
                == [
                    .progress(squat(.rest, anchor: at(1), version: 3)),
                    .progress(squat(.rest, anchor: at(2), version: 4, run: 101)),
                ])
    }

    @Test("a delivery report clears the staged frame only if it is still the same frame")
    func successClearsSameFrameOnly() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.countdownSkipped(runID: runID, now: at(1)))
        _ = mirror.handle(.sendSucceeded(runID: runID, version: 1))
        #expect(mirror.staging[runID]?.message.version == 2)
        #expect(mirror.handle(.sendFailed(runID: runID, version: 1, stillReachable: true, now: at(2))) == [])
        _ = mirror.handle(.sendSucceeded(runID: runID, version: 2))
        #expect(mirror.staging[runID] == nil)
    }

    @Test("a failure while reachable retries after 250 ms, 500 ms, 1 s, 2 s, 4 s, then gives up")
    func retrySchedule() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.sendSucceeded(runID: runID, version: 1))
        _ = mirror.handle(.countdownSkipped(runID: runID, now: t0))
        let frame = LiveMessage.progress(squat(.work, anchor: t0, version: 2))
        var now = t0
        for (retry, delay) in [250, 500, 1_000, 2_000, 4_000].enumerated() {
            let due = now.advanced(by: .milliseconds(delay))
            #expect(
                mirror.handle(.sendFailed(runID: runID, version: 2, stillReachable: true, now: now))
                    == [
                        .log(.sendFailedRetrying(run: runID, version: 2, retry: retry + 1, at: due)),
                        .scheduleWakeUp(at: due),
                    ])
            // An early wake-up sends nothing and asks again for the same instant.
            #expect(
                mirror.handle(.tick(now: due.advanced(by: .milliseconds(-1)))) == [.scheduleWakeUp(at: due)])
            #expect(mirror.handle(.tick(now: due)) == [.send(frame, attempt: retry + 2)])
            now = due
        }
        #expect(
            mirror.handle(.sendFailed(runID: runID, version: 2, stillReachable: true, now: now))
                == [.log(.sendGivenUp(run: runID, version: 2))])
        #expect(mirror.handle(.tick(now: now.advanced(by: .seconds(60)))) == [])
        // Still staged: a reachability edge re-sends it (an edge is not a retry).
        #expect(mirror.handle(.reachabilityChanged(false, now: now)) == [])
        #expect(mirror.handle(.reachabilityChanged(true, now: now)) == [.send(frame, attempt: 7)])
    }

    @Test("a failure because the peer is unreachable waits for the edge; losing reachability cancels a retry")
    func failureWhileUnreachable() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        #expect(
            mirror.handle(.sendFailed(runID: runID, version: 1, stillReachable: false, now: t0))
                == [.log(.sendFailedStaged(run: runID, version: 1))])
        _ = mirror.handle(.countdownSkipped(runID: runID, now: at(1)))
        _ = mirror.handle(.sendFailed(runID: runID, version: 2, stillReachable: true, now: at(1)))
        #expect(mirror.staging[runID]?.retryAt == atMs(1_250))
        #expect(mirror.handle(.reachabilityChanged(false, now: atMs(1_100))) == [])
        #expect(mirror.handle(.tick(now: at(2))) == [])
        #expect(
            mirror.handle(.reachabilityChanged(true, now: at(3)))
                == [.send(.progress(squat(.work, anchor: at(1), version: 2)), attempt: 2)])
    }

    @Test("no frame is ever sent for an auto-advance, across a long run ticked every 100 ms")
    func noAutoAdvanceFrames() {
        var pair = Pair()
        let runID = run.id
        var humanActions = 0
        func act(_ pair: inout Pair, _ event: LiveMirror.Event) {
            pair.feed(.phone, event)
            humanActions += 1
        }
        act(&pair, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        for ms in stride(from: 100, through: 600_000, by: 100) {
            pair.advance(to: atMs(ms))
            switch ms {
            case 30_000, 150_000: act(&pair, .setCompleted(runID: runID, now: pair.now))
            case 300_000: act(&pair, .setCompleted(runID: runID, now: pair.now))
            case 400_000: act(&pair, .flowOpened(run: run, logID: run.logs[1].id, settings: settings, now: pair.now))
            case 420_000, 520_000: act(&pair, .setCompleted(runID: runID, now: pair.now))
            case 590_000: act(&pair, .flowClosed(runID: runID, now: pair.now))
            default: break
            }
        }
        let sends = pair.trace.compactMap { side, action -> (Pair.Side, LiveMessage)? in
            if case .send(let message, _) = action { (side, message) } else { nil }
        }
        #expect(humanActions == 8)
        #expect(sends.count == humanActions)
        #expect(sends.allSatisfy { $0.0 == .phone })
        #expect(sends.map(\.1.version) == Array(1...8))
        // The run crossed plenty of boundaries meanwhile, on both sides.
        let crossings = pair.trace.filter { if case .log(.crossed) = $0.1 { true } else { false } }
        #expect(crossings.count >= 16)
    }
}
