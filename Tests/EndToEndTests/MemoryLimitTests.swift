import Foundation
import Glibc
import PhoneStore
import TestSupport
import Testing
import WorkoutModel

/// phoned in a memory cgroup at the units' `MemoryMax` (256 MiB), as systemd would run it, under
/// hostile but valid load: a first start over a history of 10,000 runs (every file decoded; the
/// long form, `WATCHSYNC_MEMORY_LIMIT_RUNS=100000`, 100,000), a push filled to the 256 KiB context
/// limit by 120 live runs, the whole history listed. It must never be killed (the kernel reclaims
/// the page cache its reads leave, charged to the group, at the limit), and its peak RSS must stay
/// under a third of the limit. Needs root and the cgroup v1 memory controller; skipped without.
@Suite("A daemon under its memory limit", .enabled(if: MemoryCgroup.isAvailable))
struct MemoryLimitTests {
    static let limit = 256 << 20
    static let runs = ProcessInfo.processInfo.environment["WATCHSYNC_MEMORY_LIMIT_RUNS"].flatMap { Int($0) } ?? 10_000

    @Test(
        "phoned at MemoryMax=256M: a first start over 10,000 runs, a full context, the history listed; never killed, peak RSS under a third of it"
    )
    func phonedUnderItsLimit() async throws {
        let system = try SyncSystem("mem-limit")
        let now = Timestamp.current
        let split = try Self.writeHistory(runs: Self.runs, into: system.documentsDirectory, now: now)
        let group = try MemoryCgroup(limit: Self.limit)
        defer { group.remove() }
        // The shell joins the group, then becomes phoned: everything phoned does is charged to it.
        let phoned = try DaemonProcess(
            executable: "/bin/sh",
            arguments: [
                "-c",
                "echo $$ > \(group.path)/cgroup.procs && exec \(BuildProducts.executable("phoned")) --config \(system.phonedConfigPath)",
            ])
        // A first start decodes every file: minutes at 100,000 on a loaded machine (a hang guard only).
        _ = try await phoned.waitForLine(
            containing: "phoned ready port=", timeout: max(hangGuard, .seconds(Self.runs / 100)))
        #expect(try String(contentsOfFile: "\(group.path)/cgroup.procs", encoding: .utf8).contains("\(phoned.pid)"))

        // A push as large as the link carries: 120 runs live at once.
        for _ in 0..<120 { _ = try await system.phone("start", split.id.rawValue) }
        let status = try await system.phonectl("status", "--json").succeeded().standardOutput
        #expect(status.contains("\"activeRuns\":120"), "\(status.prefix(400))")
        let listed = try await system.phonectl("workouts", "--all", "--json").succeeded().standardOutput
        #expect(listed.count > Self.runs * 100)

        let peak = try Self.peakResidentBytes(phoned.pid)
        #expect(phoned.isRunning)
        #expect(group.oomKills == 0)
        // The units keep MemoryMax at three times the largest peak measured or more.
        #expect(peak * 3 <= Self.limit, "peak RSS \(peak >> 20) MiB")
        print(
            "memory-limit: \(Self.runs) runs: phoned peak RSS \(peak >> 20) MiB, the group's peak "
                + "\(group.peakBytes >> 20) MiB of \(Self.limit >> 20) MiB")
    }

    /// Writes a split and `runs` completed runs into `root` as phoned lays them out, without a sync.
    static func writeHistory(runs: Int, into root: String, now: Timestamp) throws -> SplitDocument {
        let directory = try DocumentDirectory(root: root)
        let split = SplitDocument(
            id: DocumentID(bytes: Array(repeating: 0x5A, count: 16)), name: "Heavy",
            exercises: (0..<8).map {
                ExerciseTemplate(
                    name: "Lift \($0)", equipment: "barbell", targetSets: 5, targetReps: 5, targetWeight: 100)
            }, updatedAt: now.advanced(by: .seconds(-400 * 86_400)))
        try Data(DocumentCoder.encodeForDisk(split)).write(to: URL(fileURLWithPath: directory.path(ofSplit: split.id)))
        var random = SystemRandomNumberGenerator()
        for index in 0..<runs {
            let start = now.advanced(by: .seconds(-Int64(2 * 86_400 + index * 1_500)))
            let stamp = Stamp(time: start, counter: 0, origin: .phone)
            var run = try WorkoutDocument.start(
                from: split, id: DocumentID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }),
                at: stamp)
            try run.endKeepingProgress(at: Stamp(time: start.advanced(by: .seconds(3_600)), counter: 0, origin: .phone))
            let path = directory.path(ofWorkout: run.id, startedAt: run.startedAt)
            try FileManager.default.createDirectory(
                atPath: String(path[..<path.lastIndex(of: "/")!]), withIntermediateDirectories: true)
            try Data(DocumentCoder.encodeForDisk(run)).write(to: URL(fileURLWithPath: path))
        }
        return split
    }

    /// `VmHWM` of process `pid`, in bytes.
    static func peakResidentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw HarnessError("no VmHWM in /proc/\(pid)/status") }
        return kib << 10
    }
}

/// A cgroup (v1 memory controller) with a memory limit, removed when done.
struct MemoryCgroup {
    static let root = "/sys/fs/cgroup/memory"
    static let isAvailable: Bool = {
        geteuid() == 0 && FileManager.default.fileExists(atPath: "\(root)/memory.limit_in_bytes")
    }()

    let path: String

    init(limit: Int) throws {
        path = "\(Self.root)/watchsync-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try "\(limit)".write(toFile: "\(path)/memory.limit_in_bytes", atomically: false, encoding: .utf8)
    }

    /// Times the kernel's OOM killer struck in the group.
    var oomKills: Int {
        let control = (try? String(contentsOfFile: "\(path)/memory.oom_control", encoding: .utf8)) ?? ""
        return control.split(separator: "\n").first { $0.hasPrefix("oom_kill ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// The most the group was charged (RSS and page cache).
    var peakBytes: Int {
        Int(
            ((try? String(contentsOfFile: "\(path)/memory.max_usage_in_bytes", encoding: .utf8)) ?? "0")
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Removes the group once its processes are gone (a live one keeps it: retried briefly).
    func remove() {
        for _ in 0..<50 {
            if rmdir(path) == 0 || errno == ENOENT { return }
            usleep(100_000)
        }
    }
}
