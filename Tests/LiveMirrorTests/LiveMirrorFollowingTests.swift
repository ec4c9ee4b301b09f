import LiveMirror
import TestSupport
import Testing
import WorkoutModel

@Suite("Live mirror: following, ordering and durable repair")
struct LiveMirrorFollowingTests {
    let run = newRun()
    var runID: DocumentID { run.id }

    @Test("a peer frame becomes a follower cover whose timers run from the frame's anchor")
    func followerCover() {
        var mirror = reachableMirror()
        let frame = squat(.rest, set: 0, anchor: atMs(20_500), version: 3)
        #expect(
            mirror.handle(.messageReceived(.progress(frame), now: at(21)))
                == [
                    .log(.following(run: runID, frame, coverDismissed: false)),
                    .scheduleWakeUp(at: atMs(110_500)),
                ])
        let screen = mirror.screen(for: runID, now: atMs(62_000))
        #expect(screen?.role == .following)
        #expect(screen?.phase == .rest)
        #expect(screen?.remaining == .milliseconds(48_500))
        #expect(screen?.remainingSeconds == 49)
        #expect(screen?.description == "run \(runID) Squat: rest, set 1 of 3, 49 s left (following, v3)")
        // Asked later without any tick: already the next countdown, anchored at the rest's end.
        let later = mirror.screen(for: runID, now: at(112))
        #expect(later?.phase == .ready)
        #expect(later?.setNumber == 2)
        #expect(later?.phaseAnchor == atMs(110_500))
        #expect(later?.remaining == .milliseconds(3_500))
    }

    @Test("the cover is suppressed while the run is open here or after the person dismissed it")
    func coverSuppressed() {
        var mirror = reachableMirror()
        _ = mirror.handle(.messageReceived(.progress(squat(.work, version: 1)), now: t0))
        #expect(mirror.screen(now: at(1)).map(\.role) == [.following])
        #expect(mirror.handle(.coverDismissed(runID: runID)) == [.log(.coverDismissed(run: runID))])
        #expect(mirror.screen(now: at(1)).isEmpty)
        // Newer frames keep the hidden cover current without showing it.
        _ = mirror.handle(.messageReceived(.progress(squat(.rest, anchor: at(2), version: 2)), now: at(2)))
        #expect(mirror.screen(for: runID, now: at(3)) == nil)
        // The peer ends the run: the dismissal is forgotten; the next time it drives, the cover shows.
        _ = mirror.handle(.messageReceived(.ended(LiveEnded(runID: runID, version: 3, anchor: at(4))), now: at(4)))
        _ = mirror.handle(.messageReceived(.progress(squat(.ready, anchor: at(5), version: 4)), now: at(5)))
        #expect(mirror.screen(for: runID, now: at(5))?.role == .following)
        // Opening the run here shows the local flow, not the cover.
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: at(6)))
        #expect(mirror.screen(now: at(6)).map(\.role) == [.driving])
        #expect(mirror.screen(for: runID, now: at(6))?.version == 5)
    }

    @Test("liveEnded drops the cover, and a late frame it outranks cannot bring it back")
    func endedThenLateFrame() {
        var mirror = reachableMirror()
        _ = mirror.handle(.messageReceived(.progress(squat(.ready, version: 1)), now: t0))
        let end = LiveEnded(runID: runID, version: 3, anchor: at(9))
        #expect(
            mirror.handle(.messageReceived(.ended(end), now: at(9)))
                == [.log(.peerClosed(run: runID, version: 3))])
        let late = squat(.rest, anchor: at(8), version: 2)
        #expect(
            mirror.handle(.messageReceived(.progress(late), now: at(10)))
                == [.log(.staleAfterEnd(run: runID, received: late.order, ended: end.order))])
        #expect(mirror.screen(now: at(10)).isEmpty)
    }

    @Test("a duplicate or older frame is ignored by the cover")
    func staleFrameIgnored() {
        var mirror = reachableMirror()
        let current = squat(.rest, anchor: at(20), version: 5)
        _ = mirror.handle(.messageReceived(.progress(current), now: at(20)))
        let older = squat(.work, anchor: at(5), version: 4)
        #expect(
            mirror.handle(.messageReceived(.progress(older), now: at(21)))
                == [.log(.staleWhileFollowing(run: runID, received: older.order, following: current.order))])
        #expect(mirror.handle(.messageReceived(.progress(current), now: at(21))).count == 1)
        #expect(mirror.screen(for: runID, now: at(22))?.phase == .rest)
    }

    @Test(
        "anti-rollback: a received frame that outranks the staged one drops it; the edge re-sends only the adopted frame"
    )
    func receivedOutranksStaged() {
        var mirror = LiveMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        let staged = mirror.staging[runID]!.message
        let peer = squat(.rest, set: 1, anchor: at(50), version: 5)
        #expect(
            mirror.handle(.messageReceived(.progress(peer), now: at(50)))
                == [
                    .log(.stagedDropped(run: runID, staged: staged.order, peer: peer.order)),
                    .log(.adoptedWhileOpen(run: runID, peer)),
                    .scheduleWakeUp(at: at(140)),
                ])
        // The dropped frame is never sent; the edge sends the open flow's current frame, which is the
        // peer's own (a peer that restarted gets its cover back; one that did not ignores it).
        #expect(mirror.handle(.reachabilityChanged(true, now: at(51))) == [.send(.progress(peer), attempt: 1)])
        #expect(mirror.screen(for: runID, now: at(51))?.phase == .rest)
    }

    @Test("anti-rollback: a delivery the staged frame outranks is ignored, not applied to the flow")
    func stagedOutranksDelivery() {
        var mirror = LiveMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.countdownSkipped(runID: runID, now: at(2)))
        let staged = mirror.staging[runID]!.message
        #expect(staged.version == 2)
        // Version-collided and earlier: the person here skipped the countdown after the peer's action.
        let collided = squat(.ready, anchor: at(1), version: 2)
        #expect(
            mirror.handle(.messageReceived(.progress(collided), now: at(11)))
                == [.log(.outrankedByStaged(run: runID, received: collided.order, staged: staged.order))])
        #expect(mirror.flows[runID]?.basis.order == staged.order)
        #expect(mirror.covers[runID] == nil)
        #expect(mirror.staging[runID]?.message == staged)
    }

    /// Found by the simulator (seed 1000147, docs/SIMULATION.md): a liveEnded and a progress frame were
    /// arbitrated like two frames of one flow, so a staged liveEnded hid the peer's open flow.
    @Test("a staged liveEnded does not hide the peer's open flow: its frame shows as a cover")
    func stagedEndDoesNotHidePeerFlow() {
        var mirror = LiveMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.flowClosed(runID: runID, now: at(10)))
        let staged = mirror.staging[runID]!.message
        #expect(staged == .ended(LiveEnded(runID: runID, version: 2, anchor: at(10))))
        let peer = squat(.work, anchor: at(9), version: 1)
        _ = mirror.handle(.messageReceived(.progress(peer), now: at(11)))
        #expect(mirror.covers[runID]?.basis == peer)
        #expect(mirror.screen(for: runID, now: at(11))?.phase == .work)
        #expect(mirror.staging[runID]?.message == staged, "the close still goes to the peer")
    }

    @Test("a peer's newer liveEnded does not drop the staged frame of a flow still open here")
    func peerEndKeepsStagedFrame() {
        var mirror = LiveMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        let staged = mirror.staging[runID]!.message
        _ = mirror.handle(.messageReceived(.ended(LiveEnded(runID: runID, version: 9, anchor: at(5))), now: at(6)))
        #expect(mirror.flows[runID] != nil)
        #expect(mirror.staging[runID]?.message == staged)
        #expect(mirror.handle(.reachabilityChanged(true, now: at(7))) == [.send(staged, attempt: 1)])
    }

    @Test("two sides minting the same version after a lost frame agree: the later anchor wins on both")
    func versionTie() {
        var pair = Pair()
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        pair.now = at(1)
        pair.feed(.watch, .flowOpened(run: run, logID: nil, settings: settings, now: at(1)))
        #expect(pair.phone.flows[runID]?.basis.version == 2)
        pair.setPartitioned(true)
        pair.now = at(3)
        pair.feed(.phone, .countdownSkipped(runID: runID, now: at(3)))
        pair.now = at(4)
        pair.feed(.watch, .setCompleted(runID: runID, now: at(4)))
        #expect(pair.phone.staging[runID]?.message.order == LiveOrder(version: 3, anchor: at(3)))
        #expect(pair.watch.staging[runID]?.message.order == LiveOrder(version: 3, anchor: at(4)))
        pair.now = at(10)
        pair.setPartitioned(false)
        let phone = pair.phone.screen(for: runID, now: at(10))
        let watch = pair.watch.screen(for: runID, now: at(10))
        #expect(phone?.phase == .rest)
        #expect(phone?.phaseAnchor == at(4))
        #expect(phone == watch)
        #expect(pair.phone.staging.entries.isEmpty)
        #expect(pair.watch.staging.entries.isEmpty)
    }

    @Test("durable repair moves a cover forward to the first unfinished set's work page, never backward")
    func repairCoverForward() {
        var mirror = reachableMirror()
        _ = mirror.handle(.messageReceived(.progress(squat(.ready, anchor: t0, version: 1)), now: t0))
        #expect(
            mirror.handle(.documentAbsorbed(run.withSetsDone(2), now: at(60)))
                == [
                    .log(
                        .repairedForward(
                            run: runID, LivePosition(phase: .work, setIndex: 2, anchor: at(60)), setCount: 3,
                            role: .following))
                ])
        let screen = mirror.screen(for: runID, now: at(61))
        #expect(screen?.phase == .work)
        #expect(screen?.setIndex == 2)
        #expect(screen?.phaseAnchor == at(60))
        // An older document (fewer sets done) never moves it back.
        #expect(mirror.handle(.documentAbsorbed(run.withSetsDone(1), now: at(62))) == [])
        #expect(mirror.handle(.documentAbsorbed(run, now: at(62))) == [])
        #expect(mirror.screen(for: runID, now: at(63))?.setIndex == 2)
        // The run completed: finish.
        var completed = run.withSetsDone(2)
        try? completed.endKeepingProgress(at: at(64))
        _ = mirror.handle(.documentAbsorbed(completed, now: at(65)))
        #expect(mirror.screen(for: runID, now: at(66))?.phase == .finish)
    }

    @Test("durable repair leaves a resting flow alone: its set is already counted")
    func repairRespectsRest() {
        var mirror = reachableMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        _ = mirror.handle(.setCompleted(runID: runID, now: at(20)))
        #expect(mirror.handle(.documentAbsorbed(run.withSetsDone(1), now: at(21))) == [])
        #expect(mirror.screen(for: runID, now: at(22))?.phase == .rest)
        // A document showing the whole exercise done (say the peer finished it while frames were lost)
        // moves the driver's flow to finish, and sends nothing.
        let actions = mirror.handle(.documentAbsorbed(run.withSetsDone(3), now: at(30)))
        #expect(sent(actions).isEmpty)
        #expect(mirror.screen(for: runID, now: at(31))?.phase == .finish)
    }

    @Test("three missed boundaries fast-forward to exactly what a follower ticked every 100 ms shows")
    func missedBoundaries() {
        var onTime = reachableMirror()
        var asleep = reachableMirror()
        let open = LiveMessage.progress(squat(.ready, anchor: atMs(250), version: 1))
        let rest = LiveMessage.progress(squat(.rest, anchor: atMs(20_250), version: 2))
        _ = onTime.handle(.messageReceived(open, now: atMs(300)))
        _ = asleep.handle(.messageReceived(open, now: atMs(300)))
        var instant = atMs(300)
        var onTimeCrossings = 0
        while instant < at(118) {
            instant = instant.advanced(by: .milliseconds(100))
            if instant == atMs(20_300) {
                _ = onTime.handle(.messageReceived(rest, now: instant))
                _ = asleep.handle(.messageReceived(rest, now: instant))
            }
            onTimeCrossings +=
                onTime.handle(.tick(now: instant)).filter { if case .log = $0 { true } else { false } }.count
        }
        // Boundaries asleep missed: ready → work (5.25 s), rest → ready (110.25 s), ready → work (115.25 s).
        #expect(onTimeCrossings == 3)
        #expect(
            asleep.handle(.tick(now: instant))
                == [
                    .log(
                        .crossed(
                            run: runID, LivePosition(phase: .work, setIndex: 1, anchor: atMs(115_250)), setCount: 3,
                            role: .following, crossed: 2))
                ])
        #expect(asleep.screen(now: instant) == onTime.screen(now: instant))
        #expect(asleep.covers == onTime.covers)
        #expect(asleep.screen(for: runID, now: instant)?.phaseAnchor == atMs(115_250))
        // And a mid-countdown instant shows the same timer on both, to the microsecond.
        let mid = atMs(112_345)
        #expect(asleep.screen(for: runID, now: mid)?.remaining == onTime.screen(for: runID, now: mid)?.remaining)
    }

    @Test("undecodable bytes are logged and dropped; good bytes are handled like a message")
    func payloads() {
        var mirror = reachableMirror()
        let bad = mirror.handle(.payloadReceived(Array("{}".utf8), now: t0))
        #expect(bad.count == 1)
        #expect(bad.first.map { if case .log(.undecodableMessage) = $0 { true } else { false } } == true)
        let frame = squat(.work, anchor: t0, version: 4)
        _ = mirror.handle(.payloadReceived(LiveMessage.progress(frame).encoded(), now: t0))
        #expect(mirror.covers[runID]?.basis == frame)
        #expect(mirror.version == 4)
    }

    @Test("a removed run forgets its flow, cover and staged frame")
    func runRemoved() {
        var mirror = LiveMirror()
        _ = mirror.handle(.flowOpened(run: run, logID: nil, settings: settings, now: t0))
        #expect(
            mirror.handle(.runRemoved(runID: runID))
                == [.log(.removed(run: runID))])
        #expect(mirror.staging.entries.isEmpty)
        #expect(mirror.handle(.reachabilityChanged(true, now: at(1))) == [])
        #expect(mirror.handle(.runRemoved(runID: runID)) == [])
    }
}
