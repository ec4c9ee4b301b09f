import Foundation
import Glibc
import TestSupport
import Testing
import WorkoutModel

/// phoned's documents directory on a file system remounted read-only while edits flow, then
/// read-write: phone edits are refused naming the directory, status and reads are served, a watch
/// edit is taken durably into phoned's state directory, and after the remount everything reaches
/// the document file with no restart. Needs root (a tmpfs mount); skipped without.
@Suite("A read-only documents file system", .enabled(if: Mounting.isPossible))
struct ReadOnlyFileSystemTests {
    static func remount(_ point: String, readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard mount("tmpfs", point, "tmpfs", flags, "size=64m") == 0 else {
            throw HarnessError("remount \(readOnly ? "ro" : "rw") of \(point) failed: errno \(errno)")
        }
    }

    @Test(
        "phone edits refused naming the directory, reads served, a watch edit kept; writable again, all lands, same process"
    )
    func documentsReadOnly() async throws {
        let system = try SyncSystem("read-only")
        let documents = system.documentsDirectory
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
        guard mount("tmpfs", documents, "tmpfs", 0, "size=64m") == 0 else {
            throw HarnessError("mount of a tmpfs on \(documents) failed: errno \(errno)")
        }
        defer { umount2(documents, Int32(MNT_DETACH)) }
        let phoned = try await system.startPhoned()
        try await system.startWatchd()
        try await system.waitUntilLinked()
        let split = try await system.createSplit("Legs", ["Squat:3x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        try Self.remount(documents, readOnly: true)
        let refused = try await system.phonectl("complete", run, "1", "1", "--reps", "5", "--weight", "100")
        #expect(refused.exitCode == 1)
        #expect(refused.standardError.contains("the documents directory \(documents) is on a read-only file system"))
        #expect(try await system.phonectl("status").succeeded().standardOutput.contains("READ-ONLY"))
        #expect(try await system.phonectl("show", run).exitCode == 0)
        // The watch's edit reaches phoned, which holds it durably in its (writable) state directory.
        try await system.watchctl("complete", run, "1", "2", "--reps", "6", "--weight", "90").succeeded()
        try await system.eventually("the phone acknowledged the watch's edit") {
            try await system.watchctl("status", "--json").succeeded().standardOutput.contains(
                "\"undeliveredEdits\":0")
        }
        #expect(try await system.phoneRun(run).logs[0].sets[1].isDone)

        try Self.remount(documents, readOnly: false)
        try await system.phonectl("complete", run, "1", "3", "--reps", "5", "--weight", "100").succeeded()
        #expect(!(try await system.phonectl("status").succeeded().standardOutput.contains("READ-ONLY")))
        // Both edits are in the run's file itself, written by the same phoned.
        let file = try #require(system.documentFiles().first { $0.hasSuffix("\(run).json") })
        let bytes = try #require(FileManager.default.contents(atPath: "\(documents)/\(file)"))
        let document = try DocumentCoder.decode(WorkoutDocument.self, from: Array(bytes))
        #expect(document.logs[0].sets[1].isDone && document.logs[0].sets[2].isDone)
        #expect(!document.logs[0].sets[0].isDone)
        #expect(phoned.isRunning)
        #expect(!system.phonedLog.contains("durable write failed"))
    }
}

/// Whether this process may mount (root, and a tmpfs mount works here).
enum Mounting {
    static let isPossible: Bool = {
        guard geteuid() == 0, let directory = try? TemporaryDirectory("mount-probe") else { return false }
        let point = directory.appending("m")
        try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        guard mount("tmpfs", point, "tmpfs", 0, "size=1m") == 0 else { return false }
        umount2(point, Int32(MNT_DETACH))
        return true
    }()
}
