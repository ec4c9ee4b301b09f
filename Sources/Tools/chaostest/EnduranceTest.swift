import Foundation
import Glibc
import TestSupport

/// What an endurance run adds to the report: the samples' verdicts, the faults made, the tally of
/// the extra traffic.
struct EnduranceFigures: Codable, Sendable {
    var hours: Double
    var sampleIntervalSeconds: Double
    var samples = 0
    /// Where the samples are, as JSON (`.csv` beside it).
    var samplesPath = ""
    var partitions = 0
    /// Why there were no partitions, when there were none by design.
    var partitionNote: String?
    var traffic: [String: VerbTally] = [:]
    var verdicts: [TrendVerdict] = []
    /// The samples themselves, for `--plot` (not in the report's JSON: they are in `samplesPath`).
    var series: [ResourceSample] = []

    private enum CodingKeys: String, CodingKey {
        case hours, sampleIntervalSeconds, samples, samplesPath, partitions, partitionNote, traffic, verdicts
    }

    var passed: Bool { !verdicts.contains(where: \.failed) && !traffic.values.contains { $0.malformed > 0 } }

    var lines: [String] {
        var lines = ["endurance: \(samples) samples every \(format(sampleIntervalSeconds)) in \(samplesPath)"]
        if let partitionNote { lines.append("  \(partitionNote)") }
        let calls = traffic.values.reduce(VerbTally()) { total, tally in
            var total = total
            total.attempted += tally.attempted
            total.acknowledged += tally.acknowledged
            total.refused += tally.refused
            total.unavailable += tally.unavailable
            total.indeterminate += tally.indeterminate
            total.malformed += tally.malformed
            return total
        }
        lines.append(
            "other traffic: \(calls.attempted) calls of \(traffic.count) verbs, \(calls.acknowledged) acknowledged, "
                + "\(calls.refused) refused, \(calls.unavailable) daemon down, \(calls.indeterminate) indeterminate"
                + (calls.malformed > 0 ? ", \(calls.malformed) malformed (the tester's mistake: fails the run)" : ""))
        lines.append("slopes (least squares over the second half):")
        lines += verdicts.map { "  \($0.text)" }
        return lines
    }
}

/// The endurance test: both daemons under the kill and partition testers' workload (edit streams
/// and files) plus every other kind of traffic, killed and partitioned at seeded random intervals,
/// their resources sampled throughout; then the usual delivery checks and the slopes' verdicts.
enum EnduranceTest {
    /// The run's pace: quick (about 2 minutes, for scripts/test) or `--hours H`.
    struct Plan: Sendable, Equatable {
        var length: Duration
        var sampleInterval: Duration
        /// Seconds between two faults (a kill or a partition), drawn uniformly.
        var faultInterval: ClosedRange<Double>
        /// Until which fraction of the run daemons are killed, and partitions made. A long run kills
        /// only in its first half: the second half, the part fitted, is then one long life of each
        /// daemon, whose warm-up is left out (`ResourceBound.lifeWarmUpHours`), partitioned
        /// throughout. The quick run's second half (one minute) has no fault at all, as a restart's
        /// first seconds (the link coming up, its descriptors and threads) would otherwise outweigh
        /// a minute's trend.
        var killsUntil: Double
        var partitionsUntil: Double
        /// Seconds between two calls of the extra traffic.
        var trafficPause: ClosedRange<Double>
        /// The receivers' `receivedFilesQuotaBytes`: small, so the quota is reached and holds.
        var receivedFilesQuotaBytes: Int

        init(hours: Double?) {
            if let hours {
                length = .seconds(hours * 3600)
                sampleInterval = .seconds(60)
                faultInterval = 60...300
                (killsUntil, partitionsUntil) = (0.5, 1)
                trafficPause = 0.5...2
                receivedFilesQuotaBytes = 16 << 20
            } else {
                length = .seconds(120)
                sampleInterval = .seconds(2)
                faultInterval = 8...15
                (killsUntil, partitionsUntil) = (0.5, 0.5)
                trafficPause = 0.3...1
                receivedFilesQuotaBytes = 2 << 20
            }
        }
    }

    static func run(_ options: Options, work: String, binaries: Binaries, progress: Progress) async throws -> Report {
        let clock = ContinuousClock()
        let began = clock.now
        let plan = Plan(hours: options.hours)
        var report = Report(
            test: "endurance", mode: options.hours.map { "\($0) h" } ?? "quick", seed: options.seed,
            workDirectory: work)
        var figures = EnduranceFigures(
            hours: plan.length.seconds / 3600, sampleIntervalSeconds: plan.sampleInterval.seconds)

        try FileManager.default.createDirectory(atPath: "\(work)/scratch", withIntermediateDirectories: true)
        var lab: NetworkLab?
        if let missing = NetworkLab.missingPrerequisite() {
            figures.partitionNote = "no partitions: \(missing); kills only, on loopback"
        } else {
            let made = NetworkLab(scratch: "\(work)/scratch")
            do {
                try await made.create()
                lab = made
            } catch {
                figures.partitionNote = "no partitions: \(error.description); kills only, on loopback"
            }
        }
        defer { CleanupRegistry.shared.cleanUp() }  // the daemons, then the namespaces, even on a throw
        let harness: Harness
        if let lab {
            let address = "\(NetworkLab.phoneAddress):\(NetworkLab.port)"
            harness = try Harness(
                work: work, binaries: binaries, listen: address, dial: address,
                phonePrefix: lab.exec(in: lab.phoneNamespace), watchPrefix: lab.exec(in: lab.watchNamespace))
        } else {
            let port = try freeLoopbackPort()
            harness = try Harness(
                work: work, binaries: binaries, listen: "127.0.0.1:\(port)", dial: "127.0.0.1:\(port)")
        }
        for config in ["phoned.json", "watchd.json"] {
            try setConfigKey("receivedFilesQuotaBytes", to: plan.receivedFilesQuotaBytes, in: "\(work)/\(config)")
        }
        progress.say(
            "starting both daemons for \(format(plan.length.seconds)), sampling every \(format(plan.sampleInterval.seconds))"
        )
        try await harness.startBoth()

        let ledger = Ledger()
        let stop = StopFlag()
        let workload = try await Workload.prepare(harness: harness, ledger: ledger, stop: stop, seed: options.seed)
        let watchStream = Task { await workload.runWatchStream() }
        let phoneStream = Task { await workload.runPhoneStream() }
        let files = FileTraffic(harness: harness, stop: stop, seed: options.seed, limit: nil)
        let fileStreams = files.runBothWays()
        let traffic = EnduranceTraffic(harness: harness, stop: stop, seed: options.seed, pause: plan.trafficPause)
        let trafficStream = Task { await traffic.run() }
        let sampler = ResourceSampler(harness: harness, began: clock.now)
        let sampling = Task {
            var samples: [ResourceSample] = []
            while !stop.isSet {
                samples.append(sampler.sample())
                let next = clock.now + plan.sampleInterval
                while !stop.isSet, clock.now < next { try? await Task.sleep(for: .milliseconds(100)) }
            }
            return samples
        }

        var random = SeededGenerator(seed: options.seed, stream: 8)
        let end = clock.now + plan.length
        let killsEnd = clock.now + plan.length * plan.killsUntil
        let partitionsEnd = clock.now + plan.length * plan.partitionsUntil
        do {
            while clock.now < end {
                let wait = min(random.duration(plan.faultInterval), end - clock.now)
                try await Task.sleep(for: wait)
                for daemon in [harness.phone, harness.watch] {
                    if let status = await daemon.exitedUnexpectedly() {
                        report.crashes.append("\(daemon.name) exited with status \(status) on its own")
                        try await daemon.start()
                    }
                }
                let (killing, partitioning) = (clock.now < killsEnd, lab != nil && clock.now < partitionsEnd)
                guard killing || partitioning else { continue }
                let side = random.chance(0.5) ? "phone" : "watch"
                if let lab, partitioning, random.chance(0.5) || !killing {
                    try await lab.partition(method: "link-down", side: side)
                    try await Task.sleep(for: random.duration(1...4))
                    try await lab.heal(method: "link-down", side: side)
                    figures.partitions += 1
                    progress.say("partition \(figures.partitions) on \(side), healed")
                } else {
                    let daemon = side == "phone" ? harness.phone : harness.watch
                    if await daemon.kill9() {
                        report.kills += 1
                        if side == "phone" { report.phoneKills += 1 } else { report.watchKills += 1 }
                    }
                    try await daemon.start()
                    progress.say("killed and restarted \(daemon.name) (\(report.kills) kills)")
                }
            }
        } catch {
            stop.set()
            _ = await (watchStream.value, phoneStream.value, fileStreams.value, trafficStream.value, sampling.value)
            throw error
        }
        stop.set()
        let (_, _, sent, tallies, samples) = await (
            watchStream.value, phoneStream.value, fileStreams.value, trafficStream.value, sampling.value
        )
        for daemon in [harness.phone, harness.watch] {
            if let status = await daemon.exitedUnexpectedly() {
                report.crashes.append("\(daemon.name) exited with status \(status) on its own")
            }
            try await daemon.start()  // no-op when running
        }
        progress.say("workload stopped after \(samples.count) samples; waiting for convergence")
        await Finale.finish(harness: harness, ledger: ledger, report: &report, deadline: .seconds(120))
        report.files = await FileTraffic.check(sent, harness: harness, deadline: .seconds(120))
        await harness.stopBoth()
        await lab?.destroy()

        figures.traffic = tallies
        figures.samples = samples.count
        figures.samplesPath = options.samplesPath ?? "\(work)/samples.json"
        figures.verdicts = EnduranceVerdicts.judge(samples)
        figures.series = samples
        try write(samples, to: figures.samplesPath)
        report.endurance = figures
        report.durationSeconds = (clock.now - began).seconds
        return report
    }

    /// The samples as JSON at `path`, and as CSV beside it (`.csv` for `.json`).
    static func write(_ samples: [ResourceSample], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(samples).write(to: URL(fileURLWithPath: path))
        let csv = (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".csv"
        try EnduranceVerdicts.csv(samples).write(toFile: csv, atomically: true, encoding: .utf8)
    }

    /// Sets one key of a daemon's config file (written by `Harness`) to a whole number.
    static func setConfigKey(_ key: String, to value: Int, in path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw DaemonError(description: "\(path) is not a JSON object")
        }
        object[key] = value
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
    }
}
