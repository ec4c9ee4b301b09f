import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// Seed 002's "a reset carries an epoch that wins wholesale", both ways, between the real daemons.
@Suite("phone epochs end to end")
struct PhoneEpochEndToEndTests {
    @Test(
        "a reset phone never writes the watch's edits of its old state; an older state restored from a backup never beats the newer one"
    )
    func resetWinsWholesale() async throws {
        let (system, oldRun) = try await SyncSystem.withRunAndPhoneAway("epoch")
        let backup = try Backup(of: system)

        // The watch edits the old run while the phone is reset (state and documents wiped).
        _ = try await system.watch("complete", oldRun, "1", "1")
        try await system.waitForQueue(1)
        try backup.wipe()
        try await system.startPhoned()
        let newSplit = try await system.createSplit("New", ["Press:2x5@40"])
        try await system.waitForWatchStatus("the watch follows the reset phone wholesale") {
            $0.workouts == 0 && $0.splits == 1 && $0.outboxDepth == 0 && $0.undeliveredEdits == 0
        }
        #expect(try await system.watchctl("show", newSplit).exitCode == 0)
        #expect(system.filesNamed(oldRun).isEmpty, "the old state's edit was not written by the new phone")
        #expect(system.ingestLines.filter { $0.run == oldRun }.map(\.outcome) == ["vetoedEpoch"])

        // The old state comes back from the backup: it must not beat the newer one on the watch.
        let newRun = try await system.startRun(newSplit)
        try await system.waitForWatchRun(newRun)
        try await system.stopPhoned()
        try backup.restore()
        try await system.startPhoned()
        _ = try await system.phone("settings", "set", "--rest", "99")  // the restored phone pushes
        let skipped = try await system.waitForWatchStatus("the watch skipped the older state") {
            $0.linked && ($0.lastSkippedContext ?? "").contains("older than")
        }
        #expect(skipped.workouts == 1 && skipped.splits == 1)
        let kept = try await system.watchRun(newRun)
        let gone = try await system.watchRun(oldRun)
        #expect(kept != nil && gone == nil)
        #expect(try await system.watchctl("settings", "--json").decode(Settings.self).restSeconds != 99)

        // And the watch's edit of the newer state is not written by the older phone.
        _ = try await system.watch("complete", newRun, "1", "1")
        try await system.eventually("the restored phone vetoed the newer state's edit") {
            system.ingestLines.contains { $0.run == newRun && $0.outcome == "vetoedEpoch" }
        }
        #expect(system.filesNamed(newRun).isEmpty)
        #expect(!system.ingestLines.contains { $0.outcome == "merged" && ($0.run == newRun || $0.run == oldRun) })
    }
}

/// A copy of the phone's document and state directories, taken with phoned stopped.
private struct Backup {
    let system: SyncSystem
    let documents: String
    let state: String

    init(of system: SyncSystem) throws {
        self.system = system
        documents = system.documentsDirectory + ".backup"
        state = system.phoneStateDirectory + ".backup"
        try FileManager.default.copyItem(atPath: system.documentsDirectory, toPath: documents)
        try FileManager.default.copyItem(atPath: system.phoneStateDirectory, toPath: state)
    }

    func wipe() throws {
        try FileManager.default.removeItem(atPath: system.documentsDirectory)
        try FileManager.default.removeItem(atPath: system.phoneStateDirectory)
    }

    func restore() throws {
        try wipe()
        try FileManager.default.copyItem(atPath: documents, toPath: system.documentsDirectory)
        try FileManager.default.copyItem(atPath: state, toPath: system.phoneStateDirectory)
    }
}
