import Foundation
import Glibc
import WorkoutModel

/// Two network namespaces joined by a veth pair: the phone's end 10.231.0.1/30, the watch's
/// 10.231.0.2/30. Nothing is configured outside the namespaces, so no packet leaves them.
struct NetworkLab: Sendable {
    static let phoneAddress = "10.231.0.1"
    static let watchAddress = "10.231.0.2"
    static let port = 7420

    let phoneNamespace: String
    let watchNamespace: String
    let phoneDevice: String
    let watchDevice: String
    let scratch: String

    /// Names unique to this process (a veth name has at most 15 characters).
    init(scratch: String) {
        let id = getpid() % 1_000_000
        phoneNamespace = "chaos-phone-\(id)"
        watchNamespace = "chaos-watch-\(id)"
        phoneDevice = "wscp\(id)"
        watchDevice = "wscw\(id)"
        self.scratch = scratch
    }

    /// Why the lab cannot be built here, or nil.
    static func missingPrerequisite() -> String? {
        guard geteuid() == 0 else { return "needs root for network namespaces (run as root)" }
        guard Subprocess.isAvailable("ip") else { return "needs `ip` from iproute2 for network namespaces" }
        return nil
    }

    /// Creates both namespaces and the link; on failure removes what it made and says why.
    func create() async throws(DaemonError) {
        for namespace in [phoneNamespace, watchNamespace] {
            let result = await ip(["netns", "add", namespace])
            guard result.status == 0 else {
                await destroy()
                throw DaemonError(description: "ip netns add failed: \(result.transcript)")
            }
            CleanupRegistry.shared.register(namespace: namespace)
        }
        let steps: [[String]] = [
            [
                "link", "add", phoneDevice, "netns", phoneNamespace, "type", "veth", "peer", "name", watchDevice,
                "netns",
                watchNamespace,
            ],
            ["-n", phoneNamespace, "addr", "add", "\(Self.phoneAddress)/30", "dev", phoneDevice],
            ["-n", watchNamespace, "addr", "add", "\(Self.watchAddress)/30", "dev", watchDevice],
            ["-n", phoneNamespace, "link", "set", "lo", "up"],
            ["-n", watchNamespace, "link", "set", "lo", "up"],
            ["-n", phoneNamespace, "link", "set", phoneDevice, "up"],
            ["-n", watchNamespace, "link", "set", watchDevice, "up"],
        ]
        for step in steps {
            let result = await ip(step)
            guard result.status == 0 else {
                await destroy()
                throw DaemonError(description: "ip \(step.joined(separator: " ")) failed: \(result.transcript)")
            }
        }
    }

    /// Deletes both namespaces (the veth pair goes with them).
    func destroy() async {
        for namespace in [phoneNamespace, watchNamespace] {
            _ = await ip(["netns", "delete", namespace])
            CleanupRegistry.shared.forget(namespace: namespace)
        }
    }

    /// The command prefix that runs a program in a namespace.
    func exec(in namespace: String) -> [String] { ["ip", "netns", "exec", namespace] }

    /// Whether iptables works inside the phone's namespace (for one-way drops).
    func iptablesWorks() async -> Bool {
        guard Subprocess.isAvailable("iptables") else { return false }
        return await Subprocess.succeeds(
            exec(in: phoneNamespace) + ["iptables", "-w", "-n", "-L", "INPUT"], scratch: scratch)
    }

    /// Cuts the link: `link-down` takes the veth end in `side`'s namespace down (both directions
    /// blackholed, TCP stays open); `drop-inbound` makes `side` drop every packet arriving on its end.
    func partition(method: String, side: String) async throws(DaemonError) {
        try await run(command(method: method, side: side, cut: true))
    }

    func heal(method: String, side: String) async throws(DaemonError) {
        try await run(command(method: method, side: side, cut: false))
    }

    private func command(method: String, side: String, cut: Bool) -> [String] {
        let namespace = side == "phone" ? phoneNamespace : watchNamespace
        let device = side == "phone" ? phoneDevice : watchDevice
        if method == "link-down" {
            return ["ip", "-n", namespace, "link", "set", device, cut ? "down" : "up"]
        }
        return exec(in: namespace) + ["iptables", "-w", cut ? "-I" : "-D", "INPUT", "-i", device, "-j", "DROP"]
    }

    private func run(_ argv: [String]) async throws(DaemonError) {
        let result = await Subprocess.run(argv, scratch: scratch)
        guard result.status == 0 else {
            throw DaemonError(description: "\(argv.joined(separator: " ")) failed: \(result.transcript)")
        }
    }

    private func ip(_ arguments: [String]) async -> CommandResult {
        await Subprocess.run(["ip"] + arguments, scratch: scratch)
    }
}

/// The network-partition test: cycles of partition and heal with seeded random durations while
/// both edit streams run; measures detection, reconnect and convergence per cycle, then checks.
enum PartitionTest {
    static func run(_ options: Options, work: String, binaries: Binaries, progress: Progress) async throws -> Report {
        let clock = ContinuousClock()
        let began = clock.now
        var report = Report(
            test: "partition", mode: options.soak ? "soak" : "quick", seed: options.seed, workDirectory: work)
        if let missing = NetworkLab.missingPrerequisite() {
            report.skipped = missing
            return report
        }
        try FileManager.default.createDirectory(atPath: "\(work)/scratch", withIntermediateDirectories: true)
        let lab = NetworkLab(scratch: "\(work)/scratch")
        do {
            try await lab.create()
        } catch {
            report.skipped = "cannot create network namespaces here: \(error.description)"
            return report
        }
        defer { CleanupRegistry.shared.cleanUp() }  // the daemons, then the namespaces, even on a throw
        let iptablesWorks = await lab.iptablesWorks()
        let useDrops = !options.noDrop && iptablesWorks
        report.dropCyclesNote =
            useDrops
            ? nil
            : (options.noDrop ? "one-way drops off (--no-drop)" : "iptables not available: link-down cycles only")

        let address = "\(NetworkLab.phoneAddress):\(NetworkLab.port)"
        let harness = try Harness(
            work: work, binaries: binaries, listen: address, dial: address,
            phonePrefix: lab.exec(in: lab.phoneNamespace), watchPrefix: lab.exec(in: lab.watchNamespace))
        progress.say("starting phoned in \(lab.phoneNamespace) (\(address)) and watchd in \(lab.watchNamespace)")
        try await harness.startBoth()
        let ledger = Ledger()
        let stop = StopFlag()
        let workload = try await Workload.prepare(harness: harness, ledger: ledger, stop: stop, seed: options.seed)
        let watchStream = Task { await workload.runWatchStream() }
        let phoneStream = Task { await workload.runPhoneStream() }
        // Quick runs stay under the 32 files `file received` lists, so its listing covers every one.
        let files = FileTraffic(harness: harness, stop: stop, seed: options.seed, limit: options.soak ? nil : 24)
        let fileStreams = files.runBothWays()

        var random = SeededGenerator(seed: options.seed, stream: 4)
        let cycles = options.cycles ?? (options.soak ? 200 : 20)
        var checkedRecords = 0
        do {
            for cycle in 1...cycles {
                try await Task.sleep(for: random.duration(0.5...1.5))
                let method = useDrops && random.chance(1.0 / 3) ? "drop-inbound" : "link-down"
                let side = random.chance(0.5) ? "phone" : "watch"
                let length = random.duration(1.0...4.0)
                let timing = try await measureCycle(
                    cycle, method: method, side: side, length: length, lab: lab, harness: harness, ledger: ledger,
                    checkedRecords: &checkedRecords)
                report.cycles.append(timing)
                progress.say(
                    "cycle \(cycle): \(method) on \(side) for \(format(length.seconds)); detection phone "
                        + "\(format(timing.phoneDetectionSeconds)) watch \(format(timing.watchDetectionSeconds)), "
                        + "reconnect \(format(timing.reconnectSeconds)), convergence \(format(timing.convergenceSeconds))"
                )
                for daemon in [harness.phone, harness.watch] {
                    if let status = await daemon.exitedUnexpectedly() {
                        report.crashes.append("\(daemon.name) exited with status \(status) on its own (cycle \(cycle))")
                        try await daemon.start()
                    }
                }
            }
        } catch {
            stop.set()
            _ = await (watchStream.value, phoneStream.value, fileStreams.value)
            throw error
        }
        stop.set()
        let (_, _, sent) = await (watchStream.value, phoneStream.value, fileStreams.value)
        progress.say("streams stopped after \(cycles) cycles; waiting for convergence")
        await Finale.finish(harness: harness, ledger: ledger, report: &report, deadline: .seconds(60))
        report.files = await FileTraffic.check(sent, harness: harness, deadline: .seconds(60))
        await harness.stopBoth()
        await lab.destroy()
        report.durationSeconds = (clock.now - began).seconds
        return report
    }

    /// One partition: cut, poll both statuses until the heal, heal, then time the reconnect and the
    /// convergence of what was acknowledged before the heal and after the previous one (records
    /// before `checkedRecords` were an earlier cycle's; the final checks cover every edit).
    private static func measureCycle(
        _ cycle: Int, method: String, side: String, length: Duration, lab: NetworkLab, harness: Harness, ledger: Ledger,
        checkedRecords: inout Int
    ) async throws -> CycleTiming {
        let clock = ContinuousClock()
        var timing = CycleTiming(cycle: cycle, method: method, side: side, partitionSeconds: length.seconds)
        let phoneLogOffset = fileSize(harness.phoneLog)
        let watchLogOffset = fileSize(harness.watchLog)
        try await lab.partition(method: method, side: side)
        let cut = clock.now
        let cutDate = Date()
        while clock.now - cut < length {
            async let phone = harness.phoneStatus()
            async let watch = harness.watchStatus()
            let (phoneStatus, watchStatus) = await (phone, watch)
            let elapsed = (clock.now - cut).seconds
            if timing.phoneDetectionSeconds == nil, phoneStatus?.linked == false {
                timing.phoneDetectionSeconds = elapsed
            }
            if timing.watchDetectionSeconds == nil, watchStatus?.linked == false {
                timing.watchDetectionSeconds = elapsed
            }
            let left = length - (clock.now - cut)
            if left > .zero { try? await Task.sleep(for: min(.milliseconds(100), left)) }
        }
        try await lab.heal(method: method, side: side)
        let healed = clock.now
        let healDate = Date()

        // What convergence means for this cycle, fixed at the heal.
        let pushGeneration = await harness.phoneStatus()?.contextGenerationSent ?? 0
        // Only this cycle's edits: checking every run ever edited made each cycle's wait (one
        // `phonectl show` per run) grow with the soak's history.
        var pending: [String: EditRecord] = [:]
        let records = await ledger.records
        for record in records[min(checkedRecords, records.count)...]
        where record.side == .watch && record.kind == .complete && record.outcome == .acknowledged {
            if let run = record.run { pending[run] = record }  // the newest per run (records are in order)
        }
        checkedRecords = records.count

        let dropped = timing.phoneDetectionSeconds != nil || timing.watchDetectionSeconds != nil
        if dropped {
            let took = await waitUntil(timeout: .seconds(30), interval: .milliseconds(100)) {
                async let phone = harness.phoneStatus()
                async let watch = harness.watchStatus()
                let (phoneStatus, watchStatus) = await (phone, watch)
                return phoneStatus?.linked == true && watchStatus?.linked == true
            }
            timing.reconnectSeconds = took.map { _ in (clock.now - healed).seconds }
        }
        let converged = await waitUntil(timeout: .seconds(30), interval: .milliseconds(100)) {
            guard let watch = await harness.watchStatus(), watch.contextGenerationApplied >= pushGeneration else {
                return false
            }
            for (run, record) in pending {
                if await ledger.isDiscarded(run) {
                    pending[run] = nil
                    continue
                }
                let result = await harness.phonectl(["show", run, "--json"])
                if result.status == 1,
                    result.standardOutput.contains("deleted") || result.standardError.contains("deleted")
                {
                    pending[run] = nil
                    continue
                }
                guard result.status == 0,
                    let document = try? JSONDecoder().decode(
                        WorkoutDocument.self, from: Data(result.standardOutput.utf8)),
                    document.logs.indices.contains(record.log),
                    document.logs[record.log].sets.indices.contains(record.set)
                else { return false }
                let set = document.logs[record.log].sets[record.set]
                guard set.isDone, set.reps == record.reps, set.weight == record.weight else { return false }
                pending[run] = nil
            }
            return true
        }
        timing.convergenceSeconds = converged.map { _ in (clock.now - healed).seconds }

        let phoneLines = LogTimeline(path: harness.phoneLog, from: phoneLogOffset)
        let watchLines = LogTimeline(path: harness.watchLog, from: watchLogOffset)
        timing.phoneDetectionLogSeconds = phoneLines.first("msg=\"watch unlinked\"", notBefore: cutDate)
            .flatMap { $0 <= healDate ? $0.timeIntervalSince(cutDate) : nil }
        timing.watchDetectionLogSeconds = watchLines.first("msg=\"phone unlinked\"", notBefore: cutDate)
            .flatMap { $0 <= healDate ? $0.timeIntervalSince(cutDate) : nil }
        if dropped {
            timing.reconnectLogSeconds = watchLines.first("msg=\"phone linked\"", notBefore: healDate)
                .map { $0.timeIntervalSince(healDate) }
        }
        return timing
    }
}

/// The lines a daemon logged from a byte offset on, with their `ts=` times.
struct LogTimeline {
    private var lines: [(Date, Substring)] = []

    init(path: String, from offset: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in text.split(separator: "\n") {
            guard let stamp = Checker.field("ts", in: line), let date = parser.date(from: stamp) else { continue }
            lines.append((date, line))
        }
    }

    /// When the first line containing `text` at or after `notBefore` (to the millisecond) was logged.
    func first(_ text: String, notBefore: Date) -> Date? {
        let floor = notBefore.addingTimeInterval(-0.001)
        return lines.first { $0.0 >= floor && $0.1.contains(text) }?.0
    }
}
