import Foundation
import Glibc
import TestSupport

struct BenchOptions {
    var quick = false
    var json = false
    var keep = false
    var only: Set<Int>?
    var sqliteHelper: String?
    /// The compiled scripts/bench-floor.c: figure 2's hops with none of the daemons' logic.
    var floorHelper: String?
    /// `--plot DIR`: draw the figures there with gnuplot after the run (`BenchPlots`).
    var plotDirectory: String?
    /// `--from FILE.json`: with `--plot`, draw a recorded `--json` output instead of running.
    var recordedJSON: String?
}

/// How much each figure does; quick mode trades repetitions and sizes for time.
struct Plan {
    var repetitions: Int
    var payloadSizes: [Int]
    var singleProducerCount: Int
    var multiProducerCount: Int
    var roundTripEdits: Int
    var coldStartSizes: [Int]
    var pushSizes: [Int]
    var pushesPerRepetition: Int
    /// Figure 7: person operations per engine and repetition.
    var operationsPerRepetition: Int
    var drainTransfers: Int
    /// Drain and memory repeat less: a drain repetition takes about a minute at 10,000 transfers,
    /// and resident memory hardly varies between runs.
    var slowRepetitions: Int
    /// Figures 3, 6 and 8 at a million runs (full mode only): the history is generated once, phoned
    /// started once without a run index (minutes), then restarted with it.
    var millionRuns: Int?

    static let full = Plan(
        repetitions: 5, payloadSizes: [1024, 16384], singleProducerCount: 1500, multiProducerCount: 6000,
        roundTripEdits: 1000, coldStartSizes: [1_000, 10_000, 100_000], pushSizes: [1_000, 100_000],
        pushesPerRepetition: 200, operationsPerRepetition: 200, drainTransfers: 10_000, slowRepetitions: 3,
        millionRuns: 1_000_000)
    static let quick = Plan(
        repetitions: 3, payloadSizes: [1024, 16384], singleProducerCount: 500, multiProducerCount: 2000,
        roundTripEdits: 1000, coldStartSizes: [1_000, 10_000], pushSizes: [1_000, 100_000],
        pushesPerRepetition: 100, operationsPerRepetition: 100, drainTransfers: 1_000, slowRepetitions: 3,
        millionRuns: nil)
}

final class BenchSuite {
    let options: BenchOptions
    let plan: Plan
    let report: Report
    let scratch: TemporaryDirectory
    /// Where phoned and watchd are: next to this executable (the same build).
    let binaries: String
    /// Seconds each generated history took to write, by run count (`history(_:now:)`).
    var generationSeconds: [Int: Double] = [:]

    init(options: BenchOptions) throws {
        self.options = options
        plan = options.quick ? .quick : .full
        report = Report(mode: options.quick ? "quick" : "full")
        scratch = try TemporaryDirectory("watchsync-bench")
        binaries = BuildProducts.directory
    }

    func wants(_ figure: Int) -> Bool { options.only?.contains(figure) ?? true }

    func run() throws {
        report.environment = Self.describeMachine(scratch: scratch.path)
        Progress.say("bench: \(report.mode) mode, \(plan.repetitions) repetitions; scratch \(scratch.path)")
        if wants(1) { try enqueue() }
        if wants(2) { try roundTrip() }
        if wants(3) || wants(6) { try coldStartAndMemory() }
        if wants(4) { try pushCost() }
        if wants(5) { try drain() }
        if wants(7) { try personOperation() }
        if wants(8) { try historyQuery() }
        if wants(9) { try detection() }
        if wants(10) { try streaming() }
        if options.keep {
            let kept = scratch.path + "-kept"
            try? FileManager.default.moveItem(atPath: scratch.path, toPath: kept)
            Progress.say("bench: kept \(kept)")
        }
        if options.json { report.printJSON() } else { report.printTable() }
    }

    // MARK: 1. Durable enqueue

    func enqueue() throws {
        let section = "1. durable enqueue (transfers/s, fdatasync-durable)"
        Progress.say("[\(section)]")
        let directory = scratch.appending("enqueue")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let helper = options.sqliteHelper
        if helper == nil { Progress.say("  no --sqlite-helper: SQLite rows are skipped (scripts/bench builds it)") }
        for size in plan.payloadSizes {
            let label = size >= 1024 ? "\(size / 1024) KiB" : "\(size) B"
            var ours1: [Double] = []
            var ours16: [Double] = []
            var log16: [Double] = []
            var sqlite1: [Double] = []
            var sqlite16: [Double] = []
            var raw: [Double] = []
            let single = plan.singleProducerCount
            let multi = plan.multiProducerCount
            for repetition in 1...plan.repetitions {
                Progress.say("  \(label) repetition \(repetition)/\(plan.repetitions)")
                raw.append(try Baselines.rawAppendRate(directory: directory, payloadBytes: size, count: single))
                ours1.append(
                    try EnqueueBench.linkRate(directory: directory, payloadBytes: size, count: single, producers: 1))
                ours16.append(
                    try EnqueueBench.linkRate(directory: directory, payloadBytes: size, count: multi, producers: 16))
                log16.append(
                    try EnqueueBench.logRate(directory: directory, payloadBytes: size, count: multi, producers: 16))
                if let helper {
                    sqlite1.append(
                        try EnqueueBench.sqliteRate(
                            helper: helper, directory: directory, payloadBytes: size, count: single, producers: 1))
                    sqlite16.append(
                        try EnqueueBench.sqliteRate(
                            helper: helper, directory: directory, payloadBytes: size, count: single, producers: 16))
                }
            }
            report.measurement(section, "transferUserInfo, 1 producer, \(label)", ours1, unit: "ops/s")
            report.measurement(section, "transferUserInfo, 16 producers, \(label)", ours16, unit: "ops/s")
            report.measurement(
                section, "TransferLog.append alone, 16 threads, \(label)", log16, unit: "ops/s",
                note: "diagnostic: the log's group commit without the event-loop hand-offs")
            if helper != nil {
                report.measurement(section, "SQLite WAL sync=FULL, 1 producer, \(label)", sqlite1, unit: "ops/s")
                report.measurement(section, "SQLite WAL sync=FULL, 16 producers, \(label)", sqlite16, unit: "ops/s")
            }
            report.measurement(section, "raw append+fdatasync loop, \(label)", raw, unit: "ops/s")
            if helper != nil {
                report.ratio(
                    section, "ours/SQLite, 1 producer, \(label)", ours1, sqlite1, definition: "ours-1 / SQLite-1")
                report.ratio(
                    section, "ours/SQLite, 16 producers, \(label)", ours16, sqlite16, definition: "ours-16 / SQLite-16")
                report.ratio(
                    section, "ours 16 producers / SQLite single insert, \(label)", ours16, sqlite1,
                    definition: "ours-16 / SQLite-1", target: .atLeast(10))
            }
            report.ratio(section, "ours/raw, 1 producer, \(label)", ours1, raw, definition: "ours-1 / raw")
            report.ratio(section, "ours/raw, 16 producers, \(label)", ours16, raw, definition: "ours-16 / raw")
        }
    }

    // MARK: Machine

    static func describeMachine(scratch: String) -> [String: String] {
        var environment: [String: String] = [:]
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let model = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") })
        {
            environment["cpu"] =
                "\(ProcessInfo.processInfo.activeProcessorCount) × "
                + (model.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?")
        }
        environment["memory"] = "\(ProcessInfo.processInfo.physicalMemory / 1_048_576) MiB"
        environment["kernel"] = ProcessInfo.processInfo.operatingSystemVersionString
        if let type = try? runTool("/usr/bin/stat", ["-f", "-c", "%T", scratch]) {
            environment["scratch filesystem"] =
                type.trimmingCharacters(in: .whitespacesAndNewlines) + ext4Journal(of: scratch)
        }
        return environment
    }

    /// ", ext4 with a journal" or ", ext4 without a journal" for a path on ext4 (`stat -f` names every
    /// ext family alike), else "". Without one, each `fdatasync` also writes the file's inode-table
    /// block when a neighbouring inode changed (docs/PERFORMANCE.md, "The development machine's disk").
    static func ext4Journal(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return "" }
        // A line: id parent major:minor root mount-point options [optional…] - type source super-options.
        var best: (point: String, type: Substring, source: Substring)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, let dash = fields.firstIndex(of: "-"), dash + 2 < fields.count else { continue }
            let point = String(fields[4])
            guard path == point || path.hasPrefix(point == "/" ? "/" : point + "/"),
                point.count >= best?.point.count ?? 0
            else { continue }
            best = (point, fields[dash + 1], fields[dash + 2])
        }
        guard let best, best.type == "ext4", let device = best.source.split(separator: "/").last,
            let task = try? String(contentsOfFile: "/sys/fs/ext4/\(device)/journal_task", encoding: .utf8)
        else { return "" }
        return task.contains("<none>") ? ", ext4 without a journal" : ", ext4 with a journal"
    }
}
