import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// Seed 001's scenarios S1–S10 and seed 002's cases, each against real phoned and watchd processes,
/// driven only through phonectl and watchctl. docs/SCENARIOS.md tells the same story for people.
@Suite("Seed scenarios end to end")
struct ScenarioTests {
    private static let legs = ["Squat:2x5@100:barbell", "Row:1x10@40:cable"]

    /// Both daemons up and linked, with one split; returns the system and the split's ID.
    private func linkedSystem(_ name: String) async throws -> (SyncSystem, String) {
        let system = try SyncSystem(name)
        try await system.startBoth()
        return (system, try await system.createSplit("Legs", Self.legs))
    }

    @Test(
        "S1 phone starts a split: the run reaches the watch, the launch starts its session; requestSync refills an empty watch; --end-others ends the others first"
    )
    func s1PhoneStartsASplit() async throws {
        let (system, split) = try await linkedSystem("s1")
        let first = try await system.startRun(split)
        try await system.waitForWatchRun(first)
        try await system.waitForWatchStatus("the launch started the session") {
            $0.session == "running" && $0.sessionRun == first
        }

        // A watch that starts with an empty list (its cache and last context gone) asks for a sync
        // once the phone is reachable, and the fresh push fills it.
        #expect(try await system.stopWatchd() == 0)
        try FileManager.default.removeItem(atPath: system.watchCacheDirectory)
        try FileManager.default.removeItem(atPath: "\(system.watchStateDirectory)/link/received-context")
        _ = try await system.startWatchd()
        try await system.waitForWatchRun(first, "is back after requestSync")
        #expect(system.phonedLog.contains("watch requestSync"))

        // Starting while a run is active can end it keeping progress first (S1 → S6).
        _ = try await system.phone("complete", first, "1", "1")
        let second = try await system.phone("start", split, "--end-others")
        let ended = try await system.waitForPhoneRun(first, "is completed keeping progress") { $0.status == .completed }
        #expect(ended.logs[0].sets[0].isDone)
        #expect(ended.logs.map(\.resolution) == [.skipped, .skipped])
        try await system.waitForWatchStatus("the new run has the session") {
            $0.session == "running" && $0.sessionRun == second && $0.activeRuns == 1
        }
    }

    @Test("S2 phone drives an exercise: the watch follows its phases and the set lands durably on the watch")
    func s2PhoneDrives() async throws {
        let (system, split) = try await linkedSystem("s2")
        _ = try await system.phone("settings", "set", "--countdown", "30", "--rest", "30")
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        _ = try await system.phone("live", "open", run)
        try await system.waitForLive(on: .watch, run, "follows the countdown") {
            $0.role == "following" && $0.phase == "ready"
        }
        _ = try await system.phone("live", "advance", run)  // skip the countdown
        try await system.waitForLive(on: .watch, run, "follows into work") { $0.phase == "work" && $0.set == 1 }
        _ = try await system.phone("live", "advance", run, "--reps", "4")  // complete set 1
        try await system.waitForLive(on: .watch, run, "follows into rest") { $0.phase == "rest" && $0.set == 1 }
        try await system.waitForWatchRun(run, "has the set") { $0.logs[0].sets[0].reps == 4 }
        let (phone, watch) = try await system.liveBoth(run)
        #expect(phone.phase == watch.phase && phone.set == watch.set)
        #expect(phone.phaseAnchor == watch.phaseAnchor)
        _ = try await system.phone("live", "close", run)
        try await system.eventually("the watch drops the cover") { try await system.live(on: .watch, run) == nil }
    }

    @Test(
        "S3 watch drives an exercise: the phone follows and the set lands through the phone (file written, echo returned)"
    )
    func s3WatchDrives() async throws {
        let (system, split) = try await linkedSystem("s3")
        _ = try await system.phone("settings", "set", "--countdown", "30", "--rest", "30")
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        _ = try await system.watch("live", "open", run)
        try await system.waitForLive(on: .phone, run, "follows the countdown") {
            $0.role == "following" && $0.phase == "ready"
        }
        _ = try await system.watch("live", "advance", run)
        _ = try await system.watch("live", "advance", run, "--weight", "105")
        try await system.waitForLive(on: .phone, run, "follows into rest") { $0.phase == "rest" && $0.set == 1 }
        let written = try await system.waitForPhoneRun(run, "has the watch's set") { $0.logs[0].sets[0].weight == 105 }
        #expect(try system.runOnDisk(written) == written)
        try await system.waitForWatchStatus("the echo returned") { $0.undeliveredEdits == 0 }
        #expect(try await system.watchRun(run) == written)
    }

    @Test(
        "S4 phone completes the last exercise: the run leaves the watch's active list and the session finishes and saves, metrics on the phone"
    )
    func s4PhoneCompletesTheRun() async throws {
        let (system, split) = try await linkedSystem("s4")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the session runs") { $0.session == "running" && $0.workouts == 1 }
        _ = try await system.watch("wrist", "down")
        for (exercise, set) in [("1", "1"), ("1", "2"), ("2", "1")] {
            _ = try await system.phone("complete", run, exercise, set)
        }
        let status = try await system.waitForWatchStatus("the session finished") { $0.session == "ended" }
        #expect(status.sessionOutcome == "finishedAndSaved" && status.activeRuns == 0)
        let saved = try await system.waitForPhoneRun(run, "has the metrics") { $0.metrics != nil }
        #expect(saved.status == .completed && saved.metrics?.setsCompleted == 3)
        #expect(saved.metrics?.totalVolume == 1_400.0)
    }

    @Test("S5 watch completes the last exercise: the same end state, originated on the watch")
    func s5WatchCompletesTheRun() async throws {
        let (system, split) = try await linkedSystem("s5")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the session runs") { $0.session == "running" && $0.workouts == 1 }
        for (exercise, set) in [("1", "1"), ("1", "2"), ("2", "1")] {
            _ = try await system.watch("complete", run, exercise, set)
        }
        let status = try await system.waitForWatchStatus("the session finished") { $0.session == "ended" }
        #expect(status.sessionOutcome == "finishedAndSaved")
        let saved = try await system.waitForPhoneRun(run, "has the metrics") { $0.metrics != nil }
        #expect(saved.status == .completed && saved.metrics?.setsCompleted == 3)
        #expect(try system.runOnDisk(saved) == saved)
    }

    @Test("S6 phone \"Save Workout\" early: unfinished exercises skipped, completed, the session finishes and saves")
    func s6SaveEarly() async throws {
        let (system, split) = try await linkedSystem("s6")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the session runs") { $0.session == "running" && $0.workouts == 1 }
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForPhoneRun(run, "has the watch's set") { $0.logs[0].sets[0].isDone }
        _ = try await system.phone("end", run)
        let status = try await system.waitForWatchStatus("the session finished") { $0.session == "ended" }
        #expect(status.sessionOutcome == "finishedAndSaved")
        let saved = try await system.waitForPhoneRun(run, "has the metrics") { $0.metrics != nil }
        #expect(saved.logs.map(\.resolution) == [.skipped, .skipped])
        #expect(saved.metrics?.setsCompleted == 1)
    }

    @Test(
        "S7 phone discards: stub written, live file removed, the watch prunes it and discards the session; a stale queued update is vetoed"
    )
    func s7Discard() async throws {
        let (system, split) = try await linkedSystem("s7")
        let run = try await system.startRun(split)
        let onPhone = try await system.phoneRun(run)
        try await system.waitForWatchStatus("the session runs") { $0.session == "running" && $0.workouts == 1 }

        // The watch edits while the phone is away: the update waits in its outbox.
        #expect(try await system.stopPhoned() == 0)
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForQueue(1)
        #expect(try await system.stopWatchd() == 0)

        // The phone discards the run before that update arrives.
        _ = try await system.startPhoned()
        _ = try await system.phone("discard", run)
        #expect(system.filesNamed(run) == ["Stubs/\(run).json"])

        _ = try await system.startWatchd()
        let status = try await system.waitForWatchStatus("the run is pruned and the session discarded") {
            $0.workouts == 0 && $0.session == "ended" && $0.outboxDepth == 0
        }
        #expect(status.sessionOutcome == "discarded")
        let phone = try await system.waitForPhoneStatus("the stale update was vetoed") {
            $0.ingested("vetoedTombstoned") >= 1
        }
        #expect(phone.ingested("merged") == 0)
        #expect(system.filesNamed(run) == ["Stubs/\(run).json"])
        #expect(try system.runOnDisk(onPhone) == nil)
    }

    @Test("S8 edit lock: pushed at once, watch edits refused, cleared → allowed; a split lock parks its runs")
    func s8EditLock() async throws {
        let (system, split) = try await linkedSystem("s8")
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        _ = try await system.phone("lock", "workout", run)
        try await system.waitForWatchStatus("the lock arrived") { $0.editingWorkoutID == run }
        let refused = try await system.watchctl("complete", run, "1", "1")
        #expect(refused.exitCode == 1)
        #expect(refused.standardError.contains("edited on the phone"))
        #expect(try await system.watchRun(run)?.doneSets == 0)
        _ = try await system.phone("unlock", "workout")
        try await system.waitForWatchStatus("the lock is gone") { $0.editingWorkoutID == nil }
        _ = try await system.watch("complete", run, "1", "1")

        _ = try await system.phone("lock", "split", split)
        try await system.waitForWatchStatus("the split lock arrived") { $0.editingSplitID == split }
        #expect(try await system.watchctl("complete", run, "1", "2").exitCode == 1)
        _ = try await system.phone("unlock", "split")
        try await system.waitForWatchStatus("the split lock is gone") { $0.editingSplitID == nil }
        _ = try await system.watch("complete", run, "1", "2")
        try await system.waitForPhoneRun(run, "has both sets") { $0.doneSets == 2 }
    }

    @Test(
        "S9 cold launch: watchd restarted with a populated cache re-applies it before the phone answers, then converges"
    )
    func s9ColdLaunch() async throws {
        let (system, split) = try await linkedSystem("s9")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the run arrived") { $0.workouts == 1 && $0.undeliveredEdits == 0 }
        #expect(try await system.stopPhoned() == 0)
        #expect(try await system.stopWatchd() == 0)

        // The phone is down: whatever the watch shows now comes from its own disk.
        _ = try await system.startWatchd()
        let cold = try await system.watchStatus()
        #expect(!cold.linked && cold.workouts == 1 && cold.contextGenerationApplied > 0)
        #expect(try await system.watchRun(run) != nil)

        // Meanwhile the phone moved on; once it answers, the watch asks for a sync and converges.
        _ = try await system.startPhoned()
        _ = try await system.phone("complete", run, "2", "1")
        try await system.waitForWatchRun(run, "converged on the phone's copy") { $0.logs[1].sets[0].isDone }
        #expect(try await system.watchRun(run) == (try await system.phoneRun(run)))
    }

    @Test(
        "S10 stale push: a twin copy is unchanged, a concurrent edit of another set is merged, not lost; tombstone vetoed"
    )
    func s10StaleVetoed() async throws {
        let (system, split) = try await linkedSystem("s10")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the run arrived") { $0.workouts == 1 }

        // Equal: the watch's edit is accepted; then watchd loses its state directory (a new watch
        // instance, no persisted context), so once its link activates it forwards every cached run
        // again — the same document arrives twice: accepted once, then a duplicate.
        _ = try await system.watch("complete", run, "1", "1", "--reps", "3")
        try await system.waitForPhoneStatus("the edit was merged") { $0.ingested("merged") == 1 }
        #expect(try await system.stopWatchd() == 0)
        try FileManager.default.removeItem(atPath: system.watchStateDirectory)
        _ = try await system.startWatchd()
        try await system.waitForPhoneStatus("the copy was accepted once and its twin ignored") {
            $0.ingested("merged") == 1 && $0.ingested("unchanged") >= 1
        }
        try await system.waitForWatchStatus("the watch is confirmed") {
            $0.undeliveredEdits == 0 && $0.outboxDepth == 0
        }

        // Concurrent: the watch's next edit waits while the phone is away, and the phone edits another
        // set of the same run meanwhile; the watch's copy arrives older, and is merged: both edits land
        // on both sides (the whole-document updatedAt gate dropped the watch's set).
        #expect(try await system.stopPhoned() == 0)
        _ = try await system.watch("complete", run, "1", "2", "--reps", "2")
        try await system.waitForQueue(1)
        #expect(try await system.stopWatchd() == 0)
        _ = try await system.startPhoned()
        _ = try await system.phone("complete", run, "2", "1")
        _ = try await system.startWatchd()
        try await system.waitForPhoneStatus("the older copy was merged") { $0.ingested("merged") >= 1 }
        let authoritative = try await system.waitForPhoneRun(run, "holds both edits") { $0.logs[0].sets[1].isDone }
        #expect(authoritative.logs[0].sets.map(\.reps) == [3, 2])
        #expect(authoritative.logs[1].sets[0].isDone)
        #expect(try system.runOnDisk(authoritative) == authoritative)
        try await system.waitForWatchRun(run, "converged on the phone's copy") { $0 == authoritative }

        // Tombstoned: a discarded run's updates are vetoed (S7 has the full story).
        _ = try await system.phone("discard", run)
        try await system.waitForWatchStatus("the run is pruned") { $0.workouts == 0 }
        #expect(system.filesNamed(run) == ["Stubs/\(run).json"])
    }

    @Test(
        "seed 002: clear history tombstones exactly the completed runs; a watch-finished run arriving after the clear survives"
    )
    func clearHistory() async throws {
        let (system, split) = try await linkedSystem("clear")
        let done = try await system.startRun(split)
        _ = try await system.phone("end", done)
        let late = try await system.startRun(split)
        try await system.waitForWatchRun(late)

        // The watch finishes `late` while the phone is away; the update waits in its outbox.
        #expect(try await system.stopPhoned() == 0)
        _ = try await system.watch("finish", late)
        try await system.waitForQueue(1)
        #expect(try await system.stopWatchd() == 0)

        _ = try await system.startPhoned()
        #expect(try await system.phone("clear-history") == "tombstoned 1 completed runs")
        #expect(system.filesNamed(done) == ["Stubs/\(done).json"])

        _ = try await system.startWatchd()
        let survivor = try await system.waitForPhoneRun(late, "is completed by the late update") {
            $0.status == .completed
        }
        #expect(try system.runOnDisk(survivor) == survivor)
        #expect(system.filesNamed(late).count == 1)
    }

    @Test("seed 002: a reset phone (wiped state and documents) replaces the watch's cache wholesale")
    func phoneReset() async throws {
        let (system, split) = try await linkedSystem("reset")
        let oldRun = try await system.startRun(split)
        try await system.waitForWatchStatus("the old state arrived") { $0.workouts == 1 && $0.splits == 1 }
        let oldPhone = try await system.phoneStatus().instance

        #expect(try await system.stopPhoned() == 0)
        try FileManager.default.removeItem(atPath: system.phoneStateDirectory)
        try FileManager.default.removeItem(atPath: system.documentsDirectory)
        _ = try await system.startPhoned()
        let newSplit = try await system.createSplit("Fresh start", ["Press:1x5@50"])
        let newPhone = try await system.phoneStatus().instance
        #expect(newPhone != oldPhone)

        let status = try await system.waitForWatchStatus("the new phone's state replaced the old") {
            $0.contextSender == newPhone && $0.splits == 1 && $0.workouts == 0
        }
        #expect(status.session == "ended" && status.sessionOutcome == "discarded")
        #expect(try await system.watchRun(oldRun) == nil)
        #expect(try await system.watch("splits").contains(newSplit))
    }

    @Test("seed 002: a fresh phoned with a slow initial scan never pushes an empty state to a populated watch")
    func freshPhoneNeverPushesPristine() async throws {
        let (system, split) = try await linkedSystem("fresh")
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the state arrived") { $0.workouts == 1 && $0.splits == 1 }

        // A reinstalled phone: new state directory (a new instance), documents still there, plus
        // enough history to make the scan take a while.
        let template = try await system.phoneRun(run)
        #expect(try await system.stopPhoned() == 0)
        try FileManager.default.removeItem(atPath: system.phoneStateDirectory)
        try system.generateHistory(like: template, count: 2_000)

        let phoned = try system.spawnPhoned()
        var emptied = false
        while !phoned.standardOutput.contains("phoned ready") {
            if let status = try? await system.watchStatus(), status.workouts == 0 || status.splits == 0 {
                emptied = true
            }
            guard phoned.isRunning else { throw HarnessError("phoned exited:\n\(system.transcript)") }
        }
        try await system.waitUntilLinked()
        let status = try await system.waitForWatchStatus("the new phone's full state arrived") {
            $0.contextSender != nil
        }
        #expect(!emptied)
        #expect(status.workouts >= 1 && status.splits == 1)
        let pushes = system.phonedLog.split(separator: "\n").filter { $0.contains("msg=\"push (") }
        #expect(!pushes.isEmpty)
        #expect(!pushes.contains { $0.contains(": 0 splits, 0 runs") })
    }
}
