import Foundation
import TestSupport
import Testing
import WorkoutModel

/// A daemon's state directory restored from an older backup while the other side kept going.
@Suite("A state directory restored from an older backup")
struct RestoredBackupTests {
    /// Copies `source` to `target` (a backup, or a restore over what is there), daemon stopped.
    static func copyTree(_ source: String, to target: String) throws {
        if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
        try FileManager.default.copyItem(atPath: source, toPath: target)
    }

    @Test(
        "the watch's state and cache restored from before two delivered edits: its next queued edit is not taken for a duplicate"
    )
    func watchRestored() async throws {
        let system = try SyncSystem("restore-watch")
        try await system.startBoth()
        let split = try await system.createSplit("Curls", ["Curl:6x10@12"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        // Two edits queued while the phone is away, then delivered: the phone's mark for the
        // watch's queue is past them.
        try await system.stopPhoned()
        try await system.waitForWatchStatus("the phone is gone") { !$0.linked }
        #expect(try await system.stopWatchd() == 0)
        let backup = system.directory.appending("backup")
        try Self.copyTree(system.watchStateDirectory, to: "\(backup)/state")
        try Self.copyTree(system.watchCacheDirectory, to: "\(backup)/cache")
        try await system.startWatchd()
        _ = try await system.watch("complete", run, "1", "1")
        _ = try await system.watch("complete", run, "1", "2")
        try await system.waitForQueue(2)
        try await system.startPhoned()
        try await system.waitForPhoneRun(run, "has both sets") { $0.logs[0].sets[1].isDone }
        try await system.waitForWatchStatus("the queue drained") { $0.outboxDepth == 0 && $0.linked }

        // The watch's state goes back to the backup; the phone is away again when it edits.
        try await system.stopPhoned()
        #expect(try await system.stopWatchd() == 0)
        try Self.copyTree("\(backup)/state", to: system.watchStateDirectory)
        try Self.copyTree("\(backup)/cache", to: system.watchCacheDirectory)
        try await system.startWatchd()
        _ = try await system.watch("complete", run, "1", "3")
        try await system.waitForQueue(1)
        try await system.startPhoned()
        let landed = try await system.waitForPhoneRun(run, "has the restored watch's edit") {
            $0.logs[0].sets[2].isDone
        }
        #expect(landed.logs[0].sets[0].isDone && landed.logs[0].sets[1].isDone, "nothing the phone held is lost")
        try await system.waitForWatchRun(run, "has all three sets back") {
            $0.logs[0].sets.prefix(3).allSatisfy(\.isDone)
        }
        #expect(system.phonedLog.contains("the sender went back"), "phoned says what it found")
    }

    @Test(
        "the phone's state restored from before two pushes: its next edit reaches the watch, and a daemon says what it found"
    )
    func phoneRestored() async throws {
        let system = try SyncSystem("restore-phone")
        try await system.startBoth()
        let split = try await system.createSplit("Rows", ["Row:4x10@40"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        #expect(try await system.stopPhoned() == 0)
        let backup = system.directory.appending("phone-backup")
        try Self.copyTree(system.phoneStateDirectory, to: backup)
        // Two pushes the watch applies after the backup: its context generation passes the backup's.
        try await system.startPhoned()
        _ = try await system.phone("complete", run, "1", "1")
        try await system.waitForWatchRun(run, "has set 1") { $0.logs[0].sets[0].isDone }
        _ = try await system.phone("complete", run, "1", "2")
        try await system.waitForWatchRun(run, "has set 2") { $0.logs[0].sets[1].isDone }

        // The phone's state (not its documents) goes back to the backup.
        #expect(try await system.stopPhoned() == 0)
        try Self.copyTree(backup, to: system.phoneStateDirectory)
        try await system.startPhoned()
        _ = try await system.phone("complete", run, "1", "3")
        try await system.waitForWatchRun(run, "has the restored phone's edit") {
            $0.logs[0].sets.prefix(3).allSatisfy(\.isDone)
        }
        // Whichever side meets it first says so: phoned when the watch acknowledges a generation
        // past its own, watchd when the phone reuses the generation it holds.
        #expect(
            system.phonedLog.contains("state went back") || system.watchdLog.contains("state went back"),
            "a daemon says what it found")
    }
}
