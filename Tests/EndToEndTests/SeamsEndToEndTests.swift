import DaemonRuntime
import Foundation
import TestSupport
import Testing
import WorkoutModel

/// The Seams issue's defects, each as a person meets it: through the CLIs and the files, against the
/// real daemons.
@Suite("seams end to end")
struct SeamsEndToEndTests {
    @Test(
        "another device's older copy of a run is merged, not passed over as an echo: the acknowledged edit survives a restart and phoned keeps answering"
    )
    func olderExternalCopyIsMerged() async throws {
        let system = try SyncSystem("older-copy")
        try system.writePhonedConfig(["recentRunsLimit": "1"])
        try await system.startBoth()
        let split = try await system.createSplit("One", ["Squat:1x5@100"])
        let run = try await system.startRun(split)
        _ = try await system.phone("complete", run, "1", "1")
        let first = try await system.phoneRun(run)
        let relative = SyncSystem.workoutPath(first)
        try await system.eventually("set 1.1 is on disk") { try system.runOnDisk(first)?.doneSets == 1 }
        let aside = try Data(contentsOf: URL(fileURLWithPath: "\(system.documentsDirectory)/\(relative)"))

        _ = try await system.phone("reopen", run, "1")
        _ = try await system.phone("complete", run, "1", "1", "--reps", "7")
        try await system.eventually("the 7 reps are on disk") {
            try system.runOnDisk(first)?.logs[0].sets[0].reps == 7
        }
        // Another device puts its older copy back (a sync that missed the phone's last edits).
        try system.dropDocument(Array(aside), at: relative)
        try await system.eventually("phoned put its newer copy back over the older one") {
            try system.runOnDisk(first)?.logs[0].sets[0].reps == 7
        }

        // The run leaves the push (limit 1) and comes back to it: its load must not spin.
        let other = try await system.startRun(split)
        _ = try await system.phone("complete", other, "1", "1")
        _ = try await system.phone("discard", other)
        _ = try await system.phone("status")
        #expect(try await system.stopPhoned() == 0)
        try await system.startPhoned()
        #expect(try await system.phoneRun(run).logs[0].sets[0].reps == 7)
    }

    @Test(
        "a wiped document directory next to surviving settings is a new epoch: the watch's old-epoch edit is not written and nothing comes back from phoned's bookkeeping"
    )
    func wipedDocumentsWithSettingsIsNewEpoch() async throws {
        let system = try SyncSystem("wiped-docs")
        try await system.startBoth()
        _ = try await system.phone("settings", "set", "--rest", "77")
        let split = try await system.createSplit("Curls", ["Curl:3x10@12"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        #expect(try await system.stopPhoned() == 0)
        try await system.waitForWatchStatus("the phone is gone") { !$0.linked }
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForQueue(1)

        try FileManager.default.removeItem(atPath: system.documentsDirectory)
        try await system.startPhoned()
        // A new epoch: the watch follows the wiped phone wholesale (its settings, no runs), and its
        // old-epoch edit is dropped or vetoed, never written.
        try await system.waitForWatchStatus("the watch follows the wiped phone") {
            $0.linked && $0.workouts == 0 && $0.undeliveredEdits == 0 && $0.outboxDepth == 0
        }
        #expect(try await system.phonectl("show", run).exitCode == 1, "the old run is not back")
        #expect(system.filesNamed(run).isEmpty, "nothing of the old run in the wiped directory")
        #expect(!system.ingestLines.contains { $0.run == run && $0.outcome == "merged" })
        #expect(try await system.phonectl("settings", "show", "--json").decode(Settings.self).restSeconds == 77)
        #expect(try await system.watchctl("settings", "--json").decode(Settings.self).restSeconds == 77)
    }

    @Test(
        "a reinstall with the documents intact keeps the epoch: the watch's queued edit made while phoned was away is merged"
    )
    func reinstallWithDocumentsKeepsEpoch() async throws {
        let (system, run) = try await SyncSystem.withRunAndPhoneAway("reinstall")
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForQueue(1)
        // phoned's state directory is lost (a reinstall); the documents are all still there.
        try FileManager.default.removeItem(atPath: system.phoneStateDirectory)
        try await system.startPhoned()
        try await system.waitForPhoneRun(run, "has the watch's set") { $0.logs[0].sets[0].isDone }
        try await system.waitForWatchStatus("the watch's edit is confirmed") {
            $0.linked && $0.undeliveredEdits == 0 && $0.outboxDepth == 0
        }
        #expect(!system.ingestLines.contains { $0.run == run && $0.outcome == "vetoedEpoch" })
        #expect(try await system.watchRun(run)?.logs[0].sets[0].isDone == true)
    }

    @Test(
        "with the watch an hour fast, a run done on the phone records the phone's wall-clock times: its active time is never frozen at zero"
    )
    func skewedWatchNeverFreezesDurations() async throws {
        let system = try SyncSystem("skew")
        try system.writeWatchdConfig(["testClockOffsetSeconds": "3600"])
        try await system.startBoth()
        let split = try await system.createSplit("Two", ["Squat:2x5@100"])
        // The watch's edit of an earlier run pulls the phone's hybrid clock an hour ahead.
        let earlier = try await system.startRun(split)
        try await system.waitForWatchRun(earlier)
        _ = try await system.watch("complete", earlier, "1", "1")
        try await system.waitForPhoneRun(earlier, "has the watch's set") { $0.doneSets == 1 }
        _ = try await system.phone("end", earlier)

        let before = Timestamp.current
        let run = try await system.startRun(split)
        _ = try await system.phone("complete", run, "1", "1")
        // Let some wall-clock time pass between the start and the end (what is measured, not awaited).
        try await Task.sleep(for: .milliseconds(1_200))
        _ = try await system.phone("complete", run, "1", "2")
        let after = Timestamp.current
        let done = try await system.phoneRun(run)
        #expect(done.status == .completed)
        #expect(done.startedAt >= before && done.startedAt <= after, "the start is the phone's wall clock")
        let ended = try #require(done.endedAt)
        #expect(ended <= after)
        #expect(done.activeDuration() >= .milliseconds(1_200), "not frozen: \(done.activeDuration())")
    }

    @Test(
        "with the watch an hour fast, the sets it completes record the phone's clock: a run done on both sides lasts what passed"
    )
    func watchRecordsOnThePhonesClock() async throws {
        let system = try SyncSystem("skew-both")
        try system.writeWatchdConfig(["testClockOffsetSeconds": "3600"])
        try await system.startBoth()
        let split = try await system.createSplit("Three", ["Squat:3x5@100"])
        let before = Timestamp.current
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        _ = try await system.watch("complete", run, "1", "1")
        _ = try await system.watch("complete", run, "1", "2")
        try await system.waitForPhoneRun(run, "has the watch's sets") { $0.doneSets == 2 }
        _ = try await system.phone("complete", run, "1", "3")
        let after = Timestamp.current
        let done = try await system.phoneRun(run)
        #expect(done.status == .completed)
        for set in done.logs[0].sets {
            let at = try #require(set.completedAt)
            #expect(at >= before && at <= after, "recorded on the phone's clock: \(at), not the watch's hour ahead")
        }
        #expect(done.activeDuration() <= before.duration(to: after), "\(done.activeDuration())")
    }
}
