import AdminCommands
import Nodes
import Simulation
import Testing
import WatchEngine
import WorkoutModel

/// The seeds' scenarios played by both real nodes and their link engines under the simulator with
/// a script: the handshake, every frame and acknowledgement as bytes over the simulated network,
/// files in maps, simulated time. The same outcomes the end-to-end tests reach against the real
/// daemons, in milliseconds; at the end of each, the soak's invariants.
@Suite("Scripted scenarios: both nodes and link engines, bytes between them")
struct ScriptedScenarioTests {
    /// A linked pair with one split of two exercises (2 sets, then 1) and a run started from it.
    static func started() throws -> (Simulator, DocumentID) {
        let pair = Simulator.scripted()
        let press = ExerciseTemplate(
            name: "Press", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 40)
        let dips = ExerciseTemplate(
            name: "Dips", equipment: "bodyweight", targetSets: 1, targetReps: 8, targetWeight: 0)
        let split = try #require(created(pair.phone(.createSplit(name: "Push", exercises: [press, dips]))))
        let run = try #require(created(pair.phone(.start(split: split, endingOthers: false))))
        return (pair, run)
    }

    static func created(_ response: AdminResponse?) -> DocumentID? {
        response?.text.flatMap { DocumentID(codedText: $0) }
    }

    static func complete(_ run: DocumentID, _ exercise: Int, _ set: Int, reps: Int? = nil) -> SetCommand {
        .complete(run: run, exercise: exercise, set: set, reps: reps, weight: nil)
    }

    @Test("S1: the phone starts a split; the watch has the run and its session runs on the launch")
    func s1() throws {
        let (pair, run) = try Self.started()
        #expect(pair.phoneRuns[run]?.status == .notStarted)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        guard case .running(let session) = pair.watchSession else {
            Issue.record("session: \(String(describing: pair.watchSession))")
            return
        }
        #expect(session.runID == run && session.origin == .phoneLaunch)
        #expect(pair.watchNode?.launchesReceived == 1)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S4: the phone completes the last set; the watch's session finishes and saves, metrics reach the phone")
    func s4() throws {
        let (pair, run) = try Self.started()
        for (exercise, set) in [(1, 1), (1, 2), (2, 1)] {
            #expect(pair.phone(.set(Self.complete(run, exercise, set)))?.status == .ok)
        }
        pair.advance(by: .seconds(5))
        guard case .ended(let ended) = pair.watchSession, case .finishedAndSaved(let metrics) = ended.outcome else {
            Issue.record("session: \(String(describing: pair.watchSession))")
            return
        }
        #expect(metrics.setsCompleted == 3)
        #expect(pair.phoneRuns[run]?.status == .completed)
        #expect(pair.phoneRuns[run]?.metrics?.setsCompleted == 3)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S5: the watch completes the last set; the completion and the metrics reach the phone")
    func s5() throws {
        let (pair, run) = try Self.started()
        for (exercise, set) in [(1, 1), (1, 2), (2, 1)] {
            #expect(pair.watch(.set(Self.complete(run, exercise, set)))?.status == .ok)
        }
        pair.advance(by: .seconds(5))
        guard case .ended(let ended) = pair.watchSession, case .finishedAndSaved = ended.outcome else {
            Issue.record("session: \(String(describing: pair.watchSession))")
            return
        }
        #expect(pair.phoneRuns[run]?.status == .completed)
        #expect(pair.phoneRuns[run]?.metrics?.setsCompleted == 3)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S5 across a partition: edits made while unlinked queue as transfers and land after the link returns")
    func queuedAcrossPartition() throws {
        let (pair, run) = try Self.started()
        pair.partition()
        pair.advance(by: .seconds(5))  // the heartbeats notice: the watch is no longer reachable
        #expect(pair.watch(.set(.complete(run: run, exercise: 1, set: 1, reps: 6, weight: 42.5)))?.status == .ok)
        #expect(pair.watch(.set(Self.complete(run, 1, 2)))?.status == .ok)
        #expect(pair.watchOutbox >= 1)
        #expect(pair.phoneRuns[run]?.logs[0].sets.allSatisfy { !$0.isDone } == true)
        pair.heal()
        pair.advance(by: .seconds(10))
        #expect(pair.watchOutbox == 0)
        let sets = try #require(pair.phoneRuns[run]?.logs[0].sets)
        #expect(sets.map(\.isDone) == [true, true])
        #expect(sets[0].reps == 6 && sets[0].weight == 42.5)
        #expect(pair.watchNode?.engine.cache.undeliveredEdits.isEmpty == true)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("the push that brings a watch edit back carries the bytes the watch sent: the run is not decoded again")
    func editComesBackUndecoded() throws {
        let (pair, run) = try Self.started()
        let before = try #require(pair.watchNode)
        let (applied, decoded) = (before.appliedContexts, before.engine.contextRunsDecoded)
        for set in [1, 2] {
            let reply = pair.watch(.set(.complete(run: run, exercise: 1, set: set, reps: 6, weight: 42.5)))
            #expect(reply?.status == .ok, "\(String(describing: reply))")
        }
        let after = try #require(pair.watchNode)
        #expect(after.appliedContexts > applied)
        #expect(after.engine.contextRunsDecoded == decoded)
        #expect(after.engine.cache.undeliveredEdits.isEmpty)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        // A run the phone changed is new to the watch and is decoded.
        pair.phone(.set(Self.complete(run, 2, 1)))
        #expect(pair.watchNode?.engine.contextRunsDecoded == decoded + 1)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S5 across a partition and a kill: queued edits survive watchd's restart and land once the link returns")
    func queuedAcrossPartitionAndKill() throws {
        let (pair, run) = try Self.started()
        pair.partition()
        pair.advance(by: .seconds(5))  // the heartbeats notice: the watch is no longer reachable
        #expect(pair.watch(.set(Self.complete(run, 1, 1, reps: 6)))?.status == .ok)
        #expect(pair.watch(.set(Self.complete(run, 1, 2)))?.status == .ok)
        #expect(pair.watchOutbox >= 1)
        pair.killWatch()
        pair.restartWatch()
        pair.advance(by: .seconds(2))
        #expect(pair.watchOutbox >= 1, "the queue is on disk")
        #expect(pair.phoneRuns[run]?.logs[0].sets.allSatisfy { !$0.isDone } == true)
        pair.heal()
        pair.advance(by: .seconds(10))
        #expect(pair.watchOutbox == 0)
        let sets = try #require(pair.phoneRuns[run]?.logs[0].sets)
        #expect(sets.map(\.isDone) == [true, true])
        #expect(sets[0].reps == 6)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S7: the phone discards; the watch prunes the run and discards its session; the stale update is vetoed")
    func s7() throws {
        let (pair, run) = try Self.started()
        pair.partition()
        pair.advance(by: .seconds(5))
        #expect(pair.watch(.set(Self.complete(run, 1, 1)))?.status == .ok)
        #expect(pair.phone(.discard(run: run))?.status == .ok)
        #expect(pair.phoneTombstones[run] != nil && pair.phoneRuns[run] == nil)
        pair.heal()
        pair.advance(by: .seconds(10))
        #expect(pair.phoneRuns[run] == nil, "the stale update must not bring the run back")
        #expect(pair.phoneIngest[.vetoedTombstoned] == 1)
        #expect(pair.watchRuns[run] == nil)
        guard case .ended(let ended) = pair.watchSession, case .discarded = ended.outcome else {
            Issue.record("session: \(String(describing: pair.watchSession))")
            return
        }
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S8: a run the phone locks is refused on the watch until the unlock")
    func s8() throws {
        let (pair, run) = try Self.started()
        #expect(pair.phone(.lockWorkout(id: run))?.status == .ok)
        let refused = pair.watch(.set(Self.complete(run, 1, 1)))
        #expect(refused?.status == .refused)
        #expect(refused?.message?.contains("being edited on the phone") == true, "\(String(describing: refused))")
        #expect(pair.phone(.unlockWorkout)?.status == .ok)
        #expect(pair.watch(.set(Self.complete(run, 1, 1)))?.status == .ok)
        #expect(pair.phoneRuns[run]?.logs[0].sets[0].isDone == true)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("S10: offline edits on both sides merge set by set, and the watch converges on the merged copy")
    func s10() throws {
        let (pair, run) = try Self.started()
        pair.partition()
        pair.advance(by: .seconds(5))
        #expect(pair.watch(.set(Self.complete(run, 1, 1)))?.status == .ok)
        pair.advance(by: .seconds(5))
        #expect(pair.phone(.set(Self.complete(run, 1, 2)))?.status == .ok)
        pair.heal()
        pair.advance(by: .seconds(10))
        let merged = try #require(pair.phoneRuns[run])
        #expect(merged.logs[0].sets.map(\.isDone) == [true, true], "both edits survive the merge")
        #expect(pair.phoneIngest[.merged, default: 0] >= 1)
        #expect(pair.watchRuns[run] == merged, "the watch converges on the merged copy")
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }
}

@Suite("Node metrics")
struct NodeMetricsTests {
    @Test("the watch's edit round trips are a histogram in its metrics, and both report the shell's restart count")
    func roundTripAndStarts() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        let before = try #require(pair.watchNode).roundTrip.count
        pair.watch(.set(ScriptedScenarioTests.complete(run, 1, 1)))
        pair.watch(.set(ScriptedScenarioTests.complete(run, 1, 2)))
        #expect(pair.watchNode?.roundTrip.count == before + 2)
        let text = try #require(pair.watch(.metrics)?.text)
        #expect(text.contains("watchsync_edit_round_trip_seconds_count \(before + 2)"), "\(text)")
        #expect(text.contains("watchsync_starts_total 0"))
        #expect(pair.phone(.metrics)?.text?.contains("watchsync_starts_total 0") == true)
    }
}

@Suite("live verbs answer with the screens they leave")
struct LiveVerbReplyTests {
    @Test("live open, advance and close each print the flow as the verb left it, as live show does")
    func repliesShowTheNewState() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        // No time passes between a verb and the show that reads its screen.
        func phonectl(_ command: PhoneCommand) throws -> AdminResponse {
            try #require(pair.phone(command, settle: .zero))
        }
        let opened = try phonectl(.live(.open(run: run, exercise: nil)))
        #expect(opened.text != "no live run", "\(opened)")
        #expect(try opened.text == phonectl(.live(.show)).text)
        let advanced = try phonectl(.live(.advance(run: run, reps: nil, weight: nil)))
        #expect(advanced.text != opened.text, "the countdown was skipped: \(advanced)")
        #expect(try advanced.text == phonectl(.live(.show)).text)
        let closed = try phonectl(.live(.close(run: run)))
        #expect(try closed.text == phonectl(.live(.show)).text, "\(closed)")
    }
}
