import Foundation
import Glibc
import WorkoutModel

extension BenchSuite {
    /// Figure 8: `phonectl workouts --all` over the largest generated history (and 1M runs in full
    /// mode), as a person runs it — a process spawned, its stdout read as it comes: the time to the
    /// first line and to the last, and phoned's resident memory before and while it streams.
    func historyQuery() throws {
        let section = "8. history query (phonectl workouts --all, process spawn included)"
        Progress.say("[\(section)]")
        let now = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
        let largest = plan.coldStartSizes.max() ?? 0
        var sizes = [largest]
        if let million = plan.millionRuns { sizes.append(million) }
        for count in sizes {
            let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
            let documents = try history(count, now: now)
            let files = DaemonFiles(root: scratch.appending("history-query-\(label)"))
            try? FileManager.default.removeItem(atPath: files.root)
            let key = "\(files.root)/pairing.key"
            try FileManager.default.createDirectory(atPath: files.root, withIntermediateDirectories: true)
            try DaemonConfig.pairingKey(at: key)
            try DaemonConfig.writePhoned(files, documents: documents, key: key, port: 0)
            try seedRunIndex(count, state: files.state)
            let phoned = try RunningDaemon(name: "phoned", executable: "\(binaries)/phoned", files: files)
            defer {
                phoned.stop()
                try? FileManager.default.removeItem(atPath: files.root)
            }
            try phoned.waitUntilReady(timeout: 3_600)
            // At a million runs a whole listing takes minutes: the first 10,000 lines show the start
            // and the memory while streaming; 100k runs are listed whole, text and JSON.
            let stopAfter = count >= 1_000_000 ? 10_000 : nil
            var first: [Double] = []
            var total: [Double] = []
            var jsonFirst: [Double] = []
            var jsonTotal: [Double] = []
            var before: [Double] = []
            var during: [Double] = []
            for repetition in 1...plan.slowRepetitions {
                Progress.say("  \(label) runs, repetition \(repetition)/\(plan.slowRepetitions)")
                before.append(try phoned.memory().rss / 1_048_576)
                let text = try listing(phoned, json: false, stopAfterLines: stopAfter)
                guard stopAfter != nil || text.lines == count else {
                    throw BenchError("workouts --all printed \(text.lines) lines for \(count) runs")
                }
                first.append(text.firstLine * 1000)
                total.append(text.seconds)
                var peak = text.peakRSS
                if stopAfter == nil {
                    let json = try listing(phoned, json: true, stopAfterLines: nil)
                    jsonFirst.append(json.firstLine * 1000)
                    jsonTotal.append(json.seconds)
                    peak = max(peak, json.peakRSS)
                }
                during.append(peak / 1_048_576)
            }
            // The target is at 100k runs; at 1M the row is a figure only.
            report.measurement(
                section, "first line of workouts --all, \(label) runs", first, unit: "ms",
                target: stopAfter == nil ? .atMost(100) : nil)
            if stopAfter == nil {
                report.measurement(section, "all \(label) lines of workouts --all", total, unit: "s")
                report.measurement(
                    section, "first bytes of workouts --all --json, \(label) runs", jsonFirst, unit: "ms")
                report.measurement(section, "all of workouts --all --json, \(label) runs", jsonTotal, unit: "s")
            }
            report.measurement(section, "phoned RSS before the listing, \(label) runs", before, unit: "MiB")
            report.measurement(
                section, "phoned RSS while listing (highest sample), \(label) runs", during, unit: "MiB",
                note: stopAfter.map { "\(label): the first \($0) lines of each listing, then phonectl is stopped" })
            report.ratio(
                section, "phoned RSS while listing / before, \(label) runs", during, before,
                definition: "during / before"
            )
        }
    }

    /// Runs `phonectl workouts --all [--json]` against `phoned`, reading its stdout as it comes
    /// (closing it after `stopAfterLines` lines, if given) while phoned's VmRSS is sampled every 10 ms.
    private func listing(
        _ phoned: RunningDaemon, json: Bool, stopAfterLines: Int?
    ) throws -> (firstLine: Double, seconds: Double, lines: Int, peakRSS: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(binaries)/phonectl")
        process.arguments = ["--socket", phoned.files.admin, "workouts", "--all"] + (json ? ["--json"] : [])
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let sampling = SamplingFlag()
        let sampler = Thread {
            while !sampling.isDone {
                if let rss = try? phoned.memory().rss { sampling.record(rss) }
                usleep(10_000)
            }
        }
        sampler.start()
        defer { sampling.finish() }
        let started = monotonicSeconds()
        try process.run()
        let reader = stdout.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var firstLine: Double?
        var lines = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if got <= 0 { break }
            let newlines = buffer[0..<got].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            // With --json the document has one line: the first bytes stand for the first line.
            if firstLine == nil, newlines > 0 || json { firstLine = monotonicSeconds() - started }
            lines += newlines
            if let stopAfterLines, lines >= stopAfterLines { break }
        }
        let seconds = monotonicSeconds() - started
        try? stdout.fileHandleForReading.close()
        process.waitUntilExit()
        guard stopAfterLines != nil || process.terminationStatus == 0 else {
            throw BenchError("phonectl workouts --all exited \(process.terminationStatus)")
        }
        guard let firstLine else { throw BenchError("phonectl workouts --all printed nothing") }
        sampling.finish()
        return (firstLine, seconds, lines, sampling.peak)
    }
}

/// The memory sampler's shared cell: the highest sample, and when to stop.
private final class SamplingFlag: @unchecked Sendable {
    // @unchecked: every member is read and written under `lock`.
    private let lock = NSLock()
    private var done = false
    private var highest = 0.0

    var isDone: Bool { lock.withLock { done } }
    var peak: Double { lock.withLock { highest } }
    func record(_ value: Double) { lock.withLock { highest = max(highest, value) } }
    func finish() { lock.withLock { done = true } }
}
