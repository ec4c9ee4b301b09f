import LiveMirror
import Testing
import WorkoutModel

@Suite("Live mirror: phone and watch back to back")
struct LiveMirrorSimulationTests {
    @Test(
        "the phone drives, the watch follows through partitions and failed sends; whenever nothing is staged both screens agree"
    )
    func phoneDrivesWatchFollows() {
        var pair = Pair()
        let run = newRun()
        let runID = run.id
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        var agreed = 0
        var staleWhileStaged = 0
        for ms in stride(from: 100, through: 200_000, by: 100) {
            pair.advance(to: atMs(ms))
            switch ms {
            case 20_000: pair.feed(.phone, .setCompleted(runID: runID, now: pair.now))
            case 40_000: pair.feed(.phone, .restSkipped(runID: runID, now: pair.now))
            case 60_000: pair.setPartitioned(true)
            case 70_000: pair.feed(.phone, .setCompleted(runID: runID, now: pair.now))
            case 80_000: pair.setPartitioned(false)
            case 161_900: pair.dropping = true
            case 162_000: pair.feed(.phone, .countdownSkipped(runID: runID, now: pair.now))
            case 162_400: pair.dropping = false
            case 180_000: pair.feed(.phone, .setCompleted(runID: runID, now: pair.now))
            case 190_000: pair.feed(.phone, .flowClosed(runID: runID, now: pair.now))
            default: break
            }
            // Check at the tick and at an instant between ticks, computed at the moment of the query.
            for instant in [pair.now, pair.now.advanced(by: .milliseconds(37))] {
                let phone = pair.phone.screen(now: instant)
                let watch = pair.watch.screen(now: instant)
                guard pair.phone.staging.entries.isEmpty else {
                    if phone.map(\.phase) != watch.map(\.phase) { staleWhileStaged += 1 }
                    continue
                }
                #expect(phone.count == watch.count, "at \(instant)")
                if let p = phone.first, let w = watch.first {
                    #expect(p.role == .driving)
                    #expect(w.role == .following)
                    #expect(
                        [p.phase, p.setIndex, p.setCount, p.remaining, p.phaseAnchor, p.version, p.logID]
                            as [AnyHashable]
                            == [w.phase, w.setIndex, w.setCount, w.remaining, w.phaseAnchor, w.version, w.logID],
                        "at \(instant)")
                }
                agreed += 1
            }
        }
        // 4,000 checks, less the 10.8 s the phone held a staged frame (the partition, the failed sends).
        #expect(agreed == 4_000 - 216)
        // The partition (70–80 s) and the failed sends (162–162.8 s) left the watch briefly behind.
        #expect(staleWhileStaged > 0)
        #expect(pair.phone.screen(now: at(200)).isEmpty)
        #expect(pair.watch.screen(now: at(200)).isEmpty)
        // The failed skip was retried twice, on the backoff schedule, before it got through.
        let skipSends = pair.trace.compactMap { side, action -> Int? in
            guard side == .phone, case .send(.progress(let frame), let attempt) = action, frame.phase == .work
            else { return nil }
            return attempt
        }
        #expect(skipSends == [1, 2, 3])
    }

    @Test("a lost frame is repaired from the durable document on the follower, and a later frame takes over")
    func durableRepairAfterLostFrame() {
        var pair = Pair()
        let run = newRun()
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        pair.advance(to: at(10))
        // Every send of the completion fails while reachable: the retries are spent.
        pair.dropping = true
        pair.feed(.phone, .setCompleted(runID: run.id, now: at(10)))
        for ms in stride(from: 10_100, through: 20_000, by: 100) { pair.advance(to: atMs(ms)) }
        #expect(pair.phone.staging[run.id]?.retriesExhausted == true)
        #expect(pair.watch.screen(for: run.id, now: at(20))?.phase == .work)
        // The durable write reaches the watch through the context: it jumps forward, never sends.
        pair.dropping = false
        pair.feed(.watch, .documentAbsorbed(run.withSetsDone(1, at: at(10)), now: at(21)))
        let watch = pair.watch.screen(for: run.id, now: at(21))
        #expect(watch?.phase == .work)
        #expect(watch?.setIndex == 1)
        // The phone's next human action is newer than anything the watch has: it follows again exactly.
        pair.now = at(30)
        pair.feed(.phone, .restSkipped(runID: run.id, now: at(30)))
        #expect(pair.watch.screen(for: run.id, now: at(31))?.phase == .ready)
        #expect(
            pair.watch.screen(for: run.id, now: at(31))?.phaseAnchor
                == pair.phone.screen(for: run.id, now: at(31))?.phaseAnchor)
    }

    /// Found by the simulator (seed 159, docs/SIMULATION.md): covers live in memory only, so a
    /// follower that restarted showed nothing until the driver's next human action.
    @Test("a follower that restarted gets the driver's open flow back when the link returns")
    func followerRestart() throws {
        var pair = Pair()
        let run = newRun()
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        pair.advance(to: at(1))
        #expect(pair.watch.covers[run.id] != nil)
        #expect(pair.phone.staging.entries.isEmpty)
        // The watch restarts: the link drops, a fresh mirror, the link comes back.
        pair.setPartitioned(true)
        pair.watch = LiveMirror(versionFloor: 0)
        pair.setPartitioned(false)
        let cover = try #require(pair.watch.covers[run.id], "the restarted watch shows nothing")
        #expect(cover.basis.version == pair.phone.flows[run.id]?.basis.version)
    }

    /// Found by the simulator (seed 1000147, docs/SIMULATION.md): the watch, whose clock ran ahead,
    /// opened and closed the flow while the phone was down; the phone came back with lower versions and
    /// opened it. At the heal each side arbitrated the other's frame against its own staged one of the
    /// other kind: the watch ignored the phone's flow, the phone dropped its frame, and the phone drove
    /// the run with nothing on the watch.
    @Test("a flow opened on one side while the other closed it shows on both once the link returns")
    func concurrentOpenAndClose() throws {
        var pair = Pair()
        pair.watch = LiveMirror(versionFloor: 900)
        let run = newRun()
        pair.setPartitioned(true)
        pair.feed(.watch, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        pair.feed(.watch, .flowClosed(runID: run.id, now: at(1)))
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: at(2)))
        pair.setPartitioned(false)
        let flow = try #require(pair.phone.flows[run.id])
        #expect(pair.phone.staging.entries.isEmpty && pair.watch.staging.entries.isEmpty)
        let cover = try #require(pair.watch.covers[run.id], "the phone drives the run, the watch shows nothing")
        #expect(cover.basis == flow.basis)
    }

    /// Found by the simulator (seed 1006472, docs/SIMULATION.md): both sides drove the run, and the
    /// watch closed its flow (the phone locked the run for editing, S8). The phone kept driving, and
    /// the watch showed nothing until the phone's next human action.
    @Test("when one of two sides driving a run closes its flow, it follows the other's")
    func closeWhileBothDrive() throws {
        var pair = Pair()
        let run = newRun()
        pair.feed(.watch, .flowOpened(run: run, logID: nil, settings: settings, now: t0))
        pair.feed(.phone, .flowOpened(run: run, logID: nil, settings: settings, now: at(1)))
        #expect(pair.watch.flows[run.id]?.basis == pair.phone.flows[run.id]?.basis, "the watch adopted")
        pair.feed(.watch, .flowClosed(runID: run.id, now: at(2)))
        let flow = try #require(pair.phone.flows[run.id])
        #expect(pair.phone.staging.entries.isEmpty && pair.watch.staging.entries.isEmpty)
        let cover = try #require(pair.watch.covers[run.id], "the phone drives the run, the watch shows nothing")
        #expect(cover.basis == flow.basis)
    }
}
