import DaemonRuntime
import Foundation
import Glibc
import WorkoutModel

extension BenchSuite {
    /// A generated document directory of `count` runs, made once per bench run and reused.
    func history(_ count: Int, now: Timestamp) throws -> String {
        let root = scratch.appending("history-\(count)/Documents")
        if FileManager.default.fileExists(atPath: "\(root)/Workouts") { return root }
        Progress.say("  generating \(count) runs …")
        try FileManager.default.createDirectory(
            atPath: scratch.appending("history-\(count)"), withIntermediateDirectories: true)
        let seconds = try timed { try History.write(count: count, to: root, now: now) }
        generationSeconds[count] = seconds
        Progress.say("  generated \(count) runs in \(Report.format(seconds)) s")
        return root
    }

    /// The run index phoned wrote for the generated history of `count` runs, kept by figure 3.
    func keptRunIndex(_ count: Int) -> String { scratch.appending("run-index-\(count)") }

    /// Puts figure 3's run index for `count` runs in a new phoned's `state` directory, so it starts
    /// as a restart does rather than decoding every file (minutes at 1M). Without one it starts cold.
    func seedRunIndex(_ count: Int, state: String) throws {
        guard FileManager.default.fileExists(atPath: keptRunIndex(count)) else { return }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: keptRunIndex(count), toPath: "\(state)/run-index")
    }

    /// Figures 3 and 6: phoned's cold start over 1k/10k/100k runs next to a plain read-and-decode of
    /// the same files, phoned's memory there, and watchd's memory with a full cache.
    func coldStartAndMemory() throws {
        let now = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
        let largest = plan.coldStartSizes.max() ?? 0
        let quickNote =
            options.quick && largest < 100_000
            ? "quick mode: \(largest) runs, not 100k (run scripts/bench for 100k)" : nil
        var phonedMemory: (rss: [Double], peak: [Double]) = ([], [])
        if wants(3) {
            let section = "3. cold start and restart (phoned spawn → ready: gather done, first push built)"
            Progress.say("[\(section)]")
            for count in plan.coldStartSizes {
                let documents = try history(count, now: now)
                var ready: [Double] = []
                var restart: [Double] = []
                var plain: [Double] = []
                var rss: [Double] = []
                var peak: [Double] = []
                var restartPeak: [Double] = []
                for repetition in 1...plan.repetitions {
                    Progress.say("  \(count) runs, repetition \(repetition)/\(plan.repetitions)")
                    let starts = try coldStart(documents: documents, runs: count, check: repetition == 1)
                    ready.append(starts.first)
                    restart.append(starts.restarts[0].seconds)
                    rss.append(starts.memory.rss / 1_048_576)
                    peak.append(starts.memory.peak / 1_048_576)
                    restartPeak.append(starts.restarts[0].peak / 1_048_576)
                    var decoded = 0
                    plain.append(try timed { decoded = try History.readAndDecode(root: documents) })
                    guard decoded == count else {
                        throw BenchError("read-and-decode found \(decoded) runs, expected \(count)")
                    }
                }
                let label = count >= 1000 ? "\(count / 1000)k" : "\(count)"
                report.measurement(section, "phoned time to ready, \(label) runs", ready, unit: "s")
                report.measurement(section, "plain read+decode of the same files, \(label) runs", plain, unit: "s")
                let isTargetSize = count == largest
                report.ratio(
                    section, "cold start / read+decode, \(label) runs", ready, plain, definition: "phoned / plain",
                    target: isTargetSize ? .atMost(1.0) : nil, note: isTargetSize ? quickNote : nil)
                report.measurement(section, "phoned peak RSS (VmHWM) at ready, \(label) runs", peak, unit: "MiB")
                report.measurement(
                    section, "phoned restart to ready (run index, unchanged), \(label) runs", restart, unit: "s")
                report.ratio(
                    section, "restart with run index / read+decode, \(label) runs", restart, plain,
                    definition: "restart / plain", target: isTargetSize ? .atMost(0.25) : nil,
                    note: isTargetSize ? quickNote : nil)
                report.measurement(
                    section, "phoned peak RSS (VmHWM) at ready after restart, \(label) runs", restartPeak, unit: "MiB")
                if count == largest { phonedMemory = (rss, peak) }
            }
            if let million = plan.millionRuns { try millionRunStarts(section, runs: million, now: now) }
        }
        if wants(6) {
            let section = "6. memory"
            Progress.say("[\(section)]")
            let documents = try history(largest, now: now)
            let label = largest >= 1000 ? "\(largest / 1000)k" : "\(largest)"
            var phonedRSS: [Double] = []
            var phonedPeak: [Double] = []
            var watchRSS: [Double] = []
            var watchPeak: [Double] = []
            let expected = History.pushedRuns(count: largest)
            for repetition in 1...plan.slowRepetitions {
                Progress.say("  \(label) runs linked to watchd, repetition \(repetition)/\(plan.slowRepetitions)")
                let pair = try DaemonPair(
                    root: scratch.appending("memory-\(repetition)"), binaries: binaries, documents: documents)
                defer {
                    pair.stop()
                    try? FileManager.default.removeItem(atPath: pair.root)
                }
                let phoned = try pair.startPhoned()
                try phoned.waitUntilReady()
                let watchd = try pair.startWatchd()
                try watchd.waitUntilReady()
                try pair.waitUntilLinked()
                try Admin.waitFor(pair.watch.admin, "a full cache on the watch (\(expected) runs)") {
                    $0.int("workouts") == expected && $0.int("contextGenerationApplied") > 0
                }
                try waitUntilSettled(pair)
                let phone = try phoned.memory()
                let watch = try watchd.memory()
                phonedRSS.append(phone.rss / 1_048_576)
                phonedPeak.append(phone.peak / 1_048_576)
                watchRSS.append(watch.rss / 1_048_576)
                watchPeak.append(watch.peak / 1_048_576)
            }
            report.measurement(
                section, "phoned RSS, \(label) runs, linked, push sent", phonedRSS, unit: "MiB", target: .atMost(64),
                note: quickNote)
            report.measurement(section, "phoned peak RSS (VmHWM), \(label) runs", phonedPeak, unit: "MiB")
            if !phonedMemory.rss.isEmpty {
                report.measurement(
                    section, "phoned RSS right after cold start, \(label) runs", phonedMemory.rss, unit: "MiB")
            }
            report.measurement(
                section, "watchd RSS, full cache (\(expected) runs: \(History.activeRuns) active + 25 recent)",
                watchRSS,
                unit: "MiB")
            report.measurement(section, "watchd peak RSS (VmHWM), full cache", watchPeak, unit: "MiB")
            if let million = plan.millionRuns {
                let documents = try history(million, now: now)
                var rss: [Double] = []
                var peak: [Double] = []
                Progress.say("  1M runs linked to watchd (started with figure 3's run index when there is one)")
                let pair = try DaemonPair(
                    root: scratch.appending("memory-million"), binaries: binaries, documents: documents)
                defer {
                    pair.stop()
                    try? FileManager.default.removeItem(atPath: pair.root)
                }
                try seedRunIndex(million, state: pair.phone.state)
                let phoned = try pair.startPhoned()
                try phoned.waitUntilReady(timeout: 3_600)
                try pair.startWatchd().waitUntilReady()
                try pair.waitUntilLinked()
                let expected = History.pushedRuns(count: million)
                try Admin.waitFor(pair.watch.admin, "a full cache on the watch (\(expected) runs)") {
                    $0.int("workouts") == expected && $0.int("contextGenerationApplied") > 0
                }
                try waitUntilSettled(pair)
                let memory = try phoned.memory()
                rss.append(memory.rss / 1_048_576)
                peak.append(memory.peak / 1_048_576)
                report.measurement(
                    section, "phoned RSS, 1M runs, linked, push sent", rss, unit: "MiB", target: .atMost(64))
                report.measurement(section, "phoned peak RSS (VmHWM), 1M runs", peak, unit: "MiB")
            }
        }
    }

    /// Figure 3 at a million runs: the history's generation (once per bench run), phoned's first
    /// start over it (once: it writes the run index, kept for figures 6 and 8), then restarts.
    private func millionRunStarts(_ section: String, runs: Int, now: Timestamp) throws {
        let documents = try history(runs, now: now)
        if let seconds = generationSeconds[runs] {
            report.measurement(section, "generating the 1M-run history (once per bench run)", [seconds], unit: "s")
        }
        Progress.say("  1M runs: one first start, then \(plan.slowRepetitions) restarts")
        let starts = try coldStart(documents: documents, runs: runs, check: true, restarts: plan.slowRepetitions)
        report.measurement(section, "phoned first start (no run index), 1M runs", [starts.first], unit: "s")
        report.measurement(
            section, "phoned peak RSS (VmHWM) at ready, first start, 1M runs", [starts.memory.peak / 1_048_576],
            unit: "MiB")
        report.measurement(
            section, "phoned restart to ready (run index, unchanged), 1M runs", starts.restarts.map(\.seconds),
            unit: "s", target: .atMost(2))
        report.measurement(
            section, "phoned RSS at ready after restart, 1M runs", starts.restarts.map { $0.rss / 1_048_576 },
            unit: "MiB")
        report.measurement(
            section, "phoned peak RSS (VmHWM) at ready after restart, 1M runs",
            starts.restarts.map { $0.peak / 1_048_576 }, unit: "MiB")
    }

    /// One cold start: a phoned start without a run index (state directory with an instance ID and a
    /// known peer, so the link is activated and the first push is built before the readiness line)
    /// over `documents`; then, once it has written its run index (a copy is kept for figures 6 and 8),
    /// a stop and `restarts` restarts over the unchanged directory.
    private func coldStart(
        documents: String, runs: Int, check: Bool, restarts: Int = 1
    ) throws -> (
        first: Double, memory: (rss: Double, peak: Double), restarts: [(seconds: Double, rss: Double, peak: Double)]
    ) {
        let root = scratch.appending("coldstart")
        try? FileManager.default.removeItem(atPath: root)
        let files = DaemonFiles(root: root)
        let key = "\(root)/pairing.key"
        try FileManager.default.createDirectory(atPath: "\(files.state)/link", withIntermediateDirectories: true)
        try DaemonConfig.pairingKey(at: key)
        try DaemonConfig.writePhoned(files, documents: documents, key: key, port: 0)
        let hex = { randomBytes(16).map { String(format: "%02x", $0) }.joined() + "\n" }
        try History.writeFile(Array(hex().utf8), to: "\(files.state)/instance-id")
        try History.writeFile(Array(hex().utf8), to: "\(files.state)/link/peer")
        let phoned = try RunningDaemon(name: "phoned", executable: "\(binaries)/phoned", files: files)
        defer { phoned.stop() }
        let seconds = try phoned.waitUntilReady(timeout: 3_600)
        let memory = try phoned.memory()
        if check { try checkStarted(files, runs: runs) }
        // The index is written on the loop right after the readiness line.
        let index = "\(files.state)/run-index"
        let deadline = monotonicSeconds() + 600
        while !FileManager.default.fileExists(atPath: index) {
            guard monotonicSeconds() < deadline else { throw BenchError("phoned wrote no run index at \(index)") }
            usleep(2_000)
        }
        phoned.stop()
        if !FileManager.default.fileExists(atPath: keptRunIndex(runs)) {
            try FileManager.default.copyItem(atPath: index, toPath: keptRunIndex(runs))
        }
        var restartFigures: [(seconds: Double, rss: Double, peak: Double)] = []
        for _ in 0..<restarts {
            let restarted = try RunningDaemon(name: "phoned", executable: "\(binaries)/phoned", files: files)
            defer { restarted.stop() }
            let restartSeconds = try restarted.waitUntilReady()
            let restartMemory = try restarted.memory()
            if check { try checkStarted(files, runs: runs) }
            restartFigures.append((restartSeconds, restartMemory.rss, restartMemory.peak))
        }
        return (seconds, memory, restartFigures)
    }

    /// Waits until phoned has written its run index and taken it back (its log says so; a first
    /// start's decode is let go of then), so figure 6 is its settled memory: sampled as soon as the
    /// watch's cache was full, it caught the decode still held (74 MiB against 34 MiB a second later,
    /// at 100k).
    private func waitUntilSettled(_ pair: DaemonPair) throws {
        let deadline = monotonicSeconds() + 600
        while !((try? String(contentsOfFile: pair.phone.log, encoding: .utf8)) ?? "").contains("written and taken back")
        {
            guard monotonicSeconds() < deadline else { throw BenchError("phoned never took its run index back") }
            usleep(10_000)
        }
    }

    /// At ready the gather is done and the first push asked for. The push is built in that loop turn
    /// or, when the reads of its runs wait for a write in flight (a restart reads them from their
    /// files), a turn or two later; its context slot is written off the loop. So the push and its
    /// generation are waited for (briefly), not expected at once.
    private func checkStarted(_ files: DaemonFiles, runs: Int) throws {
        let status = try Admin.status(files.admin)
        guard status.int("runsInHistory") == runs else {
            throw BenchError("phoned start: expected \(runs) runs at ready, status: \(status)")
        }
        try Admin.waitFor(files.admin, timeout: 5, "the first push built") { $0["lastPushAt"] is String }
        try Admin.waitFor(files.admin, "the first push's context slot on disk") { $0.int("contextGenerationSent") >= 1 }
    }
}
