import Foundation
import Glibc
import TestSupport
import Testing
import WorkoutModel

/// The phone side of issue 14 (Defects): the push, the working set, operations on old runs and the
/// admin transport, against the real daemons.
@Suite("phone defects")
struct PhoneDefectsTests {
    @Test("a run whose start moves to another month stays on the phone and the watch; its session runs on")
    func runMovingMonthsIsNotPruned() async throws {
        let system = try SyncSystem("month")
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchStatus("the session follows the run") {
            $0.session == "running" && $0.sessionRun == runID
        }
        let run = try await system.phoneRun(runID)
        // Another device moved the run's start back 40 days and wrote it to its new folder, then
        // removed the old file.
        var moved = run
        moved.startedAt = run.startedAt.advanced(by: .seconds(-40 * 24 * 3_600))
        try moved.pause(at: Timestamp.current)
        try system.dropDocument(DocumentCoder.encodeForDisk(moved), at: SyncSystem.workoutPath(moved))
        try await system.waitForPhoneRun(runID, "is the moved copy") { $0.startedAt == moved.startedAt }
        try FileManager.default.removeItem(atPath: "\(system.documentsDirectory)/\(SyncSystem.workoutPath(run))")
        try await system.eventually("phoned saw the old file go") {
            system.phonedLog.contains("old file of run \(runID)") || system.phonedLog.contains("run \(runID) vanished")
        }
        #expect(try await system.phoneRun(runID) == moved)
        let watch = try await system.watchStatus()
        #expect(watch.session == "running" && watch.sessionRun == runID, "\(watch)")
        #expect(try await system.watchRun(runID) == moved)
    }

    @Test("symlinks and FIFOs created while phoned runs are reported; skipped entries clear when fixed or removed")
    func strayEntriesAreReportedAndCleared() async throws {
        let system = try SyncSystem("stray")
        try await system.startPhoned()
        let folder = "\(system.documentsDirectory)/Splits"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let link = UUID().uuidString.uppercased()
        let fifo = UUID().uuidString.uppercased()
        #expect(symlink("/etc/hostname", "\(folder)/\(link).json") == 0)
        #expect(mkfifo("\(folder)/\(fifo).json", 0o600) == 0)
        let reported = try await system.waitForPhoneStatus("both are reported") { $0.skippedFiles.count == 2 }
        #expect(reported.skippedFiles.allSatisfy { $0.contains("not a regular file") }, "\(reported.skippedFiles)")

        // Removed: forgotten. A garbage file later fixed in place: forgotten too.
        #expect(unlink("\(folder)/\(link).json") == 0 && unlink("\(folder)/\(fifo).json") == 0)
        try await system.waitForPhoneStatus("removed entries are forgotten") { $0.skippedFiles.isEmpty }
        let split = try await system.createSplit("Fixed", ["Row:1x1@1"])
        let good = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(split).json"))
        try system.dropDocument(Array("{not json".utf8), at: "Splits/\(split).json")
        try await system.waitForPhoneStatus("the broken file is reported") { $0.skippedFiles.count == 1 }
        try system.dropDocument(Array(good), at: "Splits/\(split).json")
        try await system.waitForPhoneStatus("the fixed file is forgotten") { $0.skippedFiles.isEmpty }
    }
}
