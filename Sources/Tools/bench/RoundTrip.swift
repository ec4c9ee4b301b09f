import AdminCommands
import DaemonRuntime
import Foundation
import WorkoutModel

extension BenchSuite {
    /// Figure 2: a watch edit → phone ingest (document written durably) → authoritative context
    /// applied in the watch cache, over real release daemons on loopback.
    ///
    /// Each edit is a `complete` or `undo` of set 1 (alternating) sent to watchd's admin socket in
    /// process; the clock stops when watchd answers `wait` (`watchctl wait`), which happens only once
    /// a pushed context carrying the run at the edit's stamp (or newer) is on disk and applied. Not
    /// `status`: a query's reply does not wait for writes, so it may show the context applied before
    /// it is on disk, and polling it keeps one of the two cores busy (docs/PERFORMANCE.md, "2. Round
    /// trip").
    func roundTrip() throws {
        let section = "2. round trip (watch edit → phone ingest → context applied on the watch)"
        Progress.say("[\(section)]")
        let pair = try DaemonPair(root: scratch.appending("roundtrip"), binaries: binaries)
        defer { pair.stop() }
        let phoned = try pair.startPhoned()
        try phoned.waitUntilReady()
        let watchd = try pair.startWatchd()
        try watchd.waitUntilReady()
        try pair.waitUntilLinked()
        let run = try startRun(pair)
        let show = try Admin.send(pair.watch.admin, WatchCommand.show(id: run))
        let document = Array((show.text ?? "").utf8)
        let scratchFiles = scratch.appending("roundtrip/baselines")
        try FileManager.default.createDirectory(atPath: scratchFiles, withIntermediateDirectories: true)

        var editNumber = 0
        func edit() throws -> Double {
            let command =
                editNumber % 2 == 0
                ? WatchCommand.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil))
                : .set(.undo(run: run, exercise: 1, set: 1))
            editNumber += 1
            let start = monotonicSeconds()
            try Admin.send(pair.watch.admin, command)
            try Admin.send(pair.watch.admin, WatchCommand.waitSynced(milliseconds: 10_000))
            return monotonicSeconds() - start
        }
        // Warm-up: connections, page cache, the first pushes.
        for _ in 0..<20 { _ = try edit() }

        var p50: [Double] = []
        var p99: [Double] = []
        var rtt: [Double] = []
        var atomic: [Double] = []
        var denominators: [Double] = []
        var (phoneCPU, watchCPU, benchCPU): ([Double], [Double], [Double]) = ([], [], [])
        var (floor50, floor99): ([Double], [Double]) = ([], [])
        // The floor again with a little work at each loop event, flushed and not: what the disk charges
        // a path whose loops do anything between its flushes (docs/PERFORMANCE.md, "The development
        // machine's disk").
        var (worked50, worked99, workedUnflushed50): ([Double], [Double], [Double]) = ([], [], [])
        var floorWorks = true
        var (idleAtomic, idleDenominators): ([Double], [Double]) = ([], [])
        if options.floorHelper == nil {
            Progress.say("  no --floor-helper: the floor rows are skipped (scripts/bench builds it)")
        }
        for repetition in 1...plan.repetitions {
            Progress.say("  repetition \(repetition)/\(plan.repetitions): \(plan.roundTripEdits) edits")
            let pings = try Baselines.loopbackRoundTrips(count: 2_000)
            if let helper = options.floorHelper, floorWorks {
                do {
                    let floor = try Self.floorRoundTrips(
                        helper: helper, directory: scratchFiles, count: plan.roundTripEdits)
                    let worked = try Self.floorRoundTrips(
                        helper: helper, directory: scratchFiles, count: plan.roundTripEdits,
                        workMicroseconds: Self.floorWork)
                    let unflushed = try Self.floorRoundTrips(
                        helper: helper, directory: scratchFiles, count: plan.roundTripEdits,
                        workMicroseconds: Self.floorWork, flushes: false)
                    floor50.append(floor.p50)
                    floor99.append(floor.p99)
                    worked50.append(worked.p50)
                    worked99.append(worked.p99)
                    workedUnflushed50.append(unflushed.p50)
                } catch {
                    Progress.say("  bench-floor failed (\(error)): the floor rows are skipped")
                    (floorWorks, floor50, floor99) = (false, [], [])
                    (worked50, worked99, workedUnflushed50) = ([], [], [])
                }
            }
            let replaces = try Baselines.atomicReplaceLatencies(directory: scratchFiles, bytes: document, count: 200)
            let idleReplaces = try Baselines.atomicReplaceLatencies(
                directory: scratchFiles, bytes: document, count: 200, idleBefore: .microseconds(400))
            var latencies: [Double] = []
            let cpuBefore = try (phoned.cpuSeconds(), watchd.cpuSeconds(), Self.ownCPUSeconds())
            for _ in 0..<plan.roundTripEdits { latencies.append(try edit()) }
            let cpuAfter = try (phoned.cpuSeconds(), watchd.cpuSeconds(), Self.ownCPUSeconds())
            let perEdit = 1e6 / Double(plan.roundTripEdits)
            phoneCPU.append((cpuAfter.0 - cpuBefore.0) * perEdit)
            watchCPU.append((cpuAfter.1 - cpuBefore.1) * perEdit)
            benchCPU.append((cpuAfter.2 - cpuBefore.2) * perEdit)
            p50.append(Report.percentile(latencies, 0.5) * 1e3)
            p99.append(Report.percentile(latencies, 0.99) * 1e3)
            let pingMedian = Report.median(pings) * 1e3
            let replaceMedian = Report.median(replaces) * 1e3
            rtt.append(pingMedian)
            atomic.append(replaceMedian)
            denominators.append(2 * pingMedian + 2 * replaceMedian)
            idleAtomic.append(Report.median(idleReplaces) * 1e3)
            idleDenominators.append(2 * pingMedian + 2 * Report.median(idleReplaces) * 1e3)
        }
        let edits = plan.roundTripEdits
        report.measurement(section, "round trip p50 (\(edits) edits per repetition)", p50, unit: "ms")
        report.measurement(section, "round trip p99 (\(edits) edits per repetition)", p99, unit: "ms")
        report.measurement(section, "loopback TCP round trip p50 (64 B, NODELAY)", rtt, unit: "ms")
        report.measurement(
            section, "atomic replace p50 (\(document.count) B: temp+fsync+rename+dir fsync)", atomic, unit: "ms")
        report.measurement(section, "2 RTT + 2 atomic replaces", denominators, unit: "ms")
        report.measurement(section, "atomic replace p50, the disk idle 400 µs before each", idleAtomic, unit: "ms")
        // CPU time per edit: the work on the path, which the disk's slow spells do not stretch.
        report.measurement(section, "phoned CPU per edit (all threads)", phoneCPU, unit: "µs")
        report.measurement(section, "watchd CPU per edit (all threads)", watchCPU, unit: "µs")
        report.measurement(section, "bench CPU per edit (the admin client)", benchCPU, unit: "µs")
        report.ratio(
            section, "round trip p50 / (2 RTT + 2 atomic replaces)", p50, denominators,
            definition: "ours p50 / (2 RTT + 2 AR)", target: .atMost(1.5),
            note: "the path holds 2 in-place writes in series, each one fdatasync (the phone's pending run, the "
                + "watch's received context; the watch's pending run is written beside the message's trip), the "
                + "phone's context slot written without one after its send, 2 files published off it, and 1 RTT "
                + "(message out, context back); see docs/PERFORMANCE.md")
        report.ratio(
            section, "round trip p99 / (2 RTT + 2 atomic replaces)", p99, denominators,
            definition: "ours p99 / (2 RTT + 2 AR)", target: .atMost(3))
        report.ratio(
            section, "round trip p50 / (2 RTT + 2 atomic replaces after 400 µs idle)", p50, idleDenominators,
            definition: "ours p50 / (2 RTT + 2 idle AR)",
            note: "the atomic replaces above run back to back; on some virtual disks a flush after an idle "
                + "spell costs far more (docs/PERFORMANCE.md, \"The development machine's disk\"), and the round "
                + "trip's flushes follow the loops' work, not one another")
        guard !floor50.isEmpty else { return }
        report.measurement(section, "floor p50: the same hops, no logic (bench-floor)", floor50, unit: "ms")
        report.measurement(section, "floor p99: the same hops, no logic (bench-floor)", floor99, unit: "ms")
        report.ratio(
            section, "round trip p50 / floor p50", p50, floor50, definition: "ours p50 / floor p50",
            note: "the floor runs figure 2's processes, threads, sockets and flushes with none of the daemons' "
                + "logic (scripts/bench-floor.c): what the daemons add to the path")
        let work = "\(Self.floorWork) µs of work at each loop event"
        report.measurement(section, "floor p50, \(work)", worked50, unit: "ms")
        report.measurement(section, "floor p99, \(work)", worked99, unit: "ms")
        report.measurement(section, "floor p50, \(work), no flushes", workedUnflushed50, unit: "ms")
        report.ratio(
            section, "floor p50 with \(work) / (2 RTT + 2 atomic replaces)", worked50, denominators,
            definition: "floor+work p50 / (2 RTT + 2 AR)",
            note: "the target's ratio for a path whose loops only spin \(Self.floorWork) µs at each event (the "
                + "daemons' loops spend as much or more); against the floor and the no-flush row: what this disk "
                + "charges for flushes that follow any work (docs/PERFORMANCE.md, \"The development machine's "
                + "disk\")")
    }

    /// The work, in µs, the floor's worked rows spin at each loop event.
    static let floorWork = 50

    /// p50 and p99 (ms) of `count` round trips through scripts/bench-floor.c's three processes.
    /// `workMicroseconds`: spun at each loop event; `flushes` false leaves out the fdatasyncs.
    static func floorRoundTrips(
        helper: String, directory: String, count: Int, workMicroseconds: Int = 0, flushes: Bool = true
    ) throws -> (p50: Double, p99: Double) {
        let output = try runTool(helper, [directory, "\(count)", "\(workMicroseconds)", flushes ? "1" : "0"])
        func value(_ name: String) -> Double? {
            output.split(separator: " ").first { $0.hasPrefix(name + "=") }.flatMap {
                Double($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        guard let p50 = value("p50_ms"), let p99 = value("p99_ms") else {
            throw BenchError("bench-floor printed no latencies: \(output)")
        }
        return (p50, p99)
    }

    /// CPU seconds this process has used so far (user + system).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return [usage.ru_utime, usage.ru_stime].reduce(0.0) { $0 + Double($1.tv_sec) + Double($1.tv_usec) / 1e6 }
    }

    /// Creates a split and starts a run on the phone; returns the run's ID once the watch has it.
    func startRun(_ pair: DaemonPair) throws -> DocumentID {
        let split = try Admin.json(
            Admin.send(
                pair.phone.admin,
                PhoneCommand.createSplit(
                    name: "Bench",
                    exercises: [
                        ExerciseTemplate(name: "Squat", equipment: "", targetSets: 5, targetReps: 5, targetWeight: 100),
                        ExerciseTemplate(
                            name: "Bench press", equipment: "", targetSets: 5, targetReps: 5, targetWeight: 80),
                        ExerciseTemplate(name: "Row", equipment: "", targetSets: 5, targetReps: 8, targetWeight: 30),
                    ])))
        guard let splitID = (split["id"] as? String).flatMap({ DocumentID($0) }) else {
            throw BenchError("split create returned no id")
        }
        let started = try Admin.json(
            Admin.send(pair.phone.admin, PhoneCommand.start(split: splitID, endingOthers: false)))
        guard let runID = (started["id"] as? String).flatMap({ DocumentID($0) }) else {
            throw BenchError("start returned no id")
        }
        try Admin.waitFor(pair.watch.admin, "the run on the watch") { $0.int("workouts") >= 1 }
        return runID
    }
}
