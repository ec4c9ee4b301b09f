import AdminCommands
import LinkProtocol
import Nodes
import Testing
import WatchEngine
import WorkoutModel

/// The seeds' scenarios played by a `PhoneNode` and a `WatchNode` back to back in memory (see
/// `NodePair`): the same outcomes the end-to-end tests reach against the real daemons, in
/// milliseconds.
@Suite("Back to back: both nodes in memory play the scenarios")
struct BackToBackTests {
    /// A linked pair with one split of two exercises (2 sets, then 1) and a run started from it.
    static func started(endOthers: Bool = false) throws -> (NodePair, DocumentID) {
        var pair = NodePair()
        pair.connect()
        let split = try #require(
            pair.createdID(
                pair.phonectl(
                    .createSplit(
                        name: "Push",
                        exercises: [
                            ExerciseTemplate(
                                name: "Press", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 40),
                            ExerciseTemplate(
                                name: "Dips", equipment: "bodyweight", targetSets: 1, targetReps: 8, targetWeight: 0),
                        ]))))
        let run = try #require(pair.createdID(pair.phonectl(.start(split: split, endingOthers: endOthers))))
        return (pair, run)
    }

    @Test("S1: the phone starts a split; the watch has the run and its session runs on the launch")
    func s1() throws {
        let (pair, run) = try Self.started()
        #expect(pair.phoneRuns[run]?.status == .notStarted)
        #expect(pair.watchRuns[run] != nil)
        #expect(pair.launchesDelivered == 1)
        guard case .running(let session) = pair.watch.engine.session else {
            Issue.record("session: \(pair.watch.engine.session)")
            return
        }
        #expect(session.runID == run)
        #expect(session.origin == .phoneLaunch)
    }

    @Test("S4: the phone completes the last set; the watch's session finishes and saves, metrics reach the phone")
    func s4() throws {
        var (pair, run) = try Self.started()
        for (exercise, set) in [(1, 1), (1, 2), (2, 1)] {
            let reply = pair.phonectl(.set(.complete(run: run, exercise: exercise, set: set, reps: nil, weight: nil)))
            #expect(reply.status == AdminResponse.Status.ok, "\(reply)")
        }
        #expect(pair.phoneRuns[run]?.status == .completed)
        guard case .ended(let ended) = pair.watch.engine.session, case .finishedAndSaved(let metrics) = ended.outcome
        else {
            Issue.record("session: \(pair.watch.engine.session)")
            return
        }
        #expect(metrics.setsCompleted == 3)
        #expect(pair.phoneRuns[run]?.metrics?.setsCompleted == 3)
    }

    @Test("S5: the watch completes the last set; one update carries the completion and the metrics to the phone")
    func s5() throws {
        var (pair, run) = try Self.started()
        for (exercise, set) in [(1, 1), (1, 2), (2, 1)] {
            let reply = pair.watchctl(.set(.complete(run: run, exercise: exercise, set: set, reps: nil, weight: nil)))
            #expect(reply.status == AdminResponse.Status.ok, "\(reply)")
        }
        guard case .ended(let ended) = pair.watch.engine.session, case .finishedAndSaved = ended.outcome else {
            Issue.record("session: \(pair.watch.engine.session)")
            return
        }
        #expect(pair.phoneRuns[run]?.status == .completed)
        #expect(pair.phoneRuns[run]?.metrics?.setsCompleted == 3)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
    }

    @Test("S5 across a partition: edits made while unlinked queue as transfers and land after the link returns")
    func queuedAcrossPartition() throws {
        var (pair, run) = try Self.started()
        pair.disconnect()
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: 6, weight: 42.5)))
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: nil)))
        #expect(pair.outbox.count >= 1)
        #expect(pair.phoneRuns[run]?.logs[0].sets.allSatisfy { !$0.isDone } == true)
        pair.connect()
        #expect(pair.outbox.isEmpty)
        let sets = try #require(pair.phoneRuns[run]?.logs[0].sets)
        #expect(sets.map(\.isDone) == [true, true])
        #expect(sets[0].reps == 6 && sets[0].weight == 42.5)
        #expect(pair.watch.engine.cache.undeliveredEdits.isEmpty)
    }

    @Test("the push that brings a watch edit back carries the bytes the watch sent: the run is not decoded again")
    func editComesBackUndecoded() throws {
        var (pair, run) = try Self.started()
        let (applied, decoded) = (pair.watch.appliedContexts, pair.watch.engine.contextRunsDecoded)
        for set in [1, 2] {
            let reply = pair.watchctl(.set(.complete(run: run, exercise: 1, set: set, reps: 6, weight: 42.5)))
            #expect(reply.status == AdminResponse.Status.ok, "\(reply)")
        }
        #expect(pair.watch.appliedContexts > applied)
        #expect(pair.watch.engine.contextRunsDecoded == decoded)
        #expect(pair.watch.engine.cache.undeliveredEdits.isEmpty)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        // A run the phone changed is new to the watch and is decoded.
        pair.phonectl(.set(.complete(run: run, exercise: 2, set: 1, reps: nil, weight: nil)))
        #expect(pair.watch.engine.contextRunsDecoded == decoded + 1)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
    }

    @Test("S7: the phone discards; the watch prunes the run and discards its session; a stale update is vetoed")
    func s7() throws {
        var (pair, run) = try Self.started()
        pair.disconnect()
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        // The discard happens on the phone while the watch's edit waits in its queue.
        #expect(pair.phonectl(.discard(run: run)).status == AdminResponse.Status.ok)
        #expect(pair.tombstones[run] != nil)
        #expect(pair.phoneRuns[run] == nil)
        pair.connect()
        #expect(pair.phoneRuns[run] == nil, "the stale update must not bring the run back")
        #expect(pair.phone.engine.ingestCounts[.vetoedTombstoned] == 1)
        #expect(pair.watchRuns[run] == nil)
        guard case .ended(let ended) = pair.watch.engine.session, case .discarded = ended.outcome else {
            Issue.record("session: \(pair.watch.engine.session)")
            return
        }
    }

    @Test("S8: a run the phone locks is refused on the watch until the unlock")
    func s8() throws {
        var (pair, run) = try Self.started()
        #expect(pair.phonectl(.lockWorkout(id: run)).status == AdminResponse.Status.ok)
        let refused = pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        #expect(refused.status == AdminResponse.Status.refused)
        #expect(refused.message?.contains("being edited on the phone") == true, "\(refused)")
        #expect(pair.phonectl(.unlockWorkout).status == AdminResponse.Status.ok)
        #expect(
            pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil))).status
                == AdminResponse.Status.ok)
        #expect(pair.phoneRuns[run]?.logs[0].sets[0].isDone == true)
    }

    @Test("S10: offline edits on both sides merge set by set, and the watch converges on the merged copy")
    func s10() throws {
        var (pair, run) = try Self.started()
        pair.disconnect()
        // Offline, the watch completes set 1 while the phone completes set 2.
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        pair.advance(by: .seconds(5))
        pair.phonectl(.set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: nil)))
        pair.connect()
        let merged = try #require(pair.phoneRuns[run])
        #expect(merged.logs[0].sets.map(\.isDone) == [true, true], "both edits survive the merge")
        #expect(pair.phone.engine.ingestCounts[.merged, default: 0] >= 1)
        #expect(pair.watchRuns[run] == merged, "the watch converges on the merged copy")
    }
}

@Suite("Node metrics")
struct NodeMetricsTests {
    @Test("the watch's edit round trips are a histogram in its metrics, and both report the shell's restart count")
    func roundTripAndStarts() throws {
        var (pair, run) = try BackToBackTests.started()
        let before = pair.watch.roundTrip.count
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: nil)))
        #expect(pair.watch.roundTrip.count == before + 2)
        let text = try #require(pair.watchctl(.metrics).text)
        #expect(text.contains("watchsync_edit_round_trip_seconds_count \(before + 2)"), "\(text)")
        #expect(text.contains("watchsync_starts_total 0"))
        #expect(pair.phonectl(.metrics).text?.contains("watchsync_starts_total 0") == true)
    }
}

@Suite("live verbs answer with the screens they leave")
struct LiveVerbReplyTests {
    @Test("live open, advance and close each print the flow as the verb left it, as live show does")
    func repliesShowTheNewState() throws {
        var (pair, run) = try BackToBackTests.started()
        let opened = pair.phonectl(.live(.open(run: run, exercise: nil)))
        #expect(opened.text != "no live run", "\(opened)")
        #expect(opened.text == pair.phonectl(.live(.show)).text)
        let advanced = pair.phonectl(.live(.advance(run: run, reps: nil, weight: nil)))
        #expect(advanced.text != opened.text, "the countdown was skipped: \(advanced)")
        #expect(advanced.text == pair.phonectl(.live(.show)).text)
        let closed = pair.phonectl(.live(.close(run: run)))
        #expect(closed.text == pair.phonectl(.live(.show)).text, "\(closed)")
    }
}
