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

    /// Mounts a fresh tmpfs on `point` (created if missing); unmount with `umount2(point, MNT_DETACH)`.
    static func mountTmpfs(_ point: String) throws {
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        guard mount("tmpfs", point, "tmpfs", 0, "size=64m") == 0 else {
            throw HarnessError("mount of a tmpfs on \(point) failed: errno \(errno)")
        }
    }

    @Test(
        "phone edits refused naming the directory, reads served, a watch edit kept; writable again, all lands, same process"
    )
    func documentsReadOnly() async throws {
        let system = try SyncSystem("read-only")
        let documents = system.documentsDirectory
        try Self.mountTmpfs(documents)
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

/// watchd's cache directory on a file system remounted read-only while the phone edits, then
/// read-write. The cache holds no file open, so the remount goes through: watchd holds the link
/// (everything the phone sends would be written there), refuses watch edits naming the directory,
/// still answers status and reads, and takes the link again once it is writable, with no restart.
@Suite("A read-only watch cache", .enabled(if: Mounting.isPossible))
struct ReadOnlyWatchCacheTests {
    @Test("the link held while the cache is read-only, the phone's edit waits; writable, it lands, same process")
    func cacheReadOnly() async throws {
        let system = try SyncSystem("read-only-cache")
        let cache = system.watchCacheDirectory
        try ReadOnlyFileSystemTests.mountTmpfs(cache)
        defer { umount2(cache, Int32(MNT_DETACH)) }
        let (_, run) = try await system.startBothWithRun()
        let watchd = try #require(system.watchd)

        try ReadOnlyFileSystemTests.remount(cache, readOnly: true)
        // The phone's edit is the phone's to acknowledge; the watch does not take it while it cannot
        // write it.
        try await system.phonectl("complete", run, "1", "1", "--reps", "5", "--weight", "100").succeeded()
        try await system.eventually("watchd holds the link") {
            system.watchdLog.contains("link held: a directory it writes to is on a read-only file system")
        }
        let refused = try await system.watchctl("complete", run, "1", "2")
        #expect(refused.exitCode == 1)
        #expect(refused.standardError.contains("the cache directory \(cache) is on a read-only file system"))
        #expect(try await system.watchctl("status").succeeded().standardOutput.contains("READ-ONLY"))
        #expect(try await system.watchctl("show", run).exitCode == 0)
        #expect(try await system.watchRun(run)?.logs[0].sets[0].isDone == false)

        try ReadOnlyFileSystemTests.remount(cache, readOnly: false)
        try await system.eventually("the phone's edit reaches the watch") {
            try await system.watchRun(run)?.logs[0].sets[0].isDone == true
        }
        try await system.watchctl("complete", run, "1", "2", "--reps", "6", "--weight", "90").succeeded()
        try await system.eventually("the watch's edit reaches the phone") {
            try await system.phoneRun(run).logs[0].sets[1].isDone
        }
        #expect(watchd.isRunning)
        #expect(!system.watchdLog.contains("durable write failed"))
        #expect(system.watchdLog.contains("link taken again"))
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

/// phoned's state directory on its own file system. Linux refuses to remount a file system
/// read-only while a file on it is open for writing (`EBUSY`), and a running daemon always holds its
/// journal and its outbox segments open, so an administrator cannot make a live state directory
/// read-only; only the kernel can, after an I/O error (`errors=remount-ro`), and then the write that
/// failed makes the daemon exit 75 as any failed write does (docs/OPERATIONS.md). What is left to
/// test is that the daemon keeps working through the refused remount, and that starting on a state
/// directory that is read-only says so and exits 78 (configuration), so systemd does not spin.
@Suite("A read-only state file system", .enabled(if: Mounting.isPossible))
struct ReadOnlyStateDirectoryTests {
    @Test("no remount under a running phoned; a start on a read-only state directory names it and exits 78")
    func stateReadOnly() async throws {
        let system = try SyncSystem("read-only-state")
        let state = system.phoneStateDirectory
        try ReadOnlyFileSystemTests.mountTmpfs(state)
        defer { umount2(state, Int32(MNT_DETACH)) }
        let (_, run) = try await system.startBothWithRun()

        // The kernel refuses: phoned holds files on it open for writing.
        let flags = UInt(MS_REMOUNT) | UInt(MS_RDONLY)
        #expect(mount("tmpfs", state, "tmpfs", flags, "size=64m") == -1 && errno == EBUSY)
        try await system.phonectl("complete", run, "1", "1", "--reps", "5", "--weight", "100").succeeded()
        try await system.watchctl("complete", run, "1", "2", "--reps", "6", "--weight", "90").succeeded()
        try await system.eventually("the phone holds the watch's edit") {
            try await system.phoneRun(run).logs[0].sets[1].isDone
        }

        // Stopped, the file system can be made read-only; a start on it fails at once and says why.
        #expect(try await system.stopWatchd() == 0)
        #expect(try await system.stopPhoned() == 0)
        try ReadOnlyFileSystemTests.remount(state, readOnly: true)
        let refused = try system.spawnPhoned()
        #expect(try await refused.waitForExit() == 78)
        #expect(refused.standardError.contains("\(state)/lock"))
        #expect(refused.standardError.contains("Read-only file system"))

        // Writable again: phoned starts on it with nothing lost.
        try ReadOnlyFileSystemTests.remount(state, readOnly: false)
        try await system.startPhoned()
        let document = try await system.phoneRun(run)
        #expect(document.logs[0].sets[0].isDone && document.logs[0].sets[1].isDone)
    }
}
