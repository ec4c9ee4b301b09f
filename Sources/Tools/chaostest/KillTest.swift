import ChildProcesses
import Foundation
import Glibc
import TestSupport

/// The queued-delivery kill test: both daemons on loopback; while the edit streams run, SIGKILL
/// phoned and watchd alternately at seeded random instants, restarting each at once; then let it
/// converge and check the ledger against the phone's final state.
enum KillTest {
    static func run(_ options: Options, work: String, binaries: Binaries, progress: Progress) async throws -> Report {
        let clock = ContinuousClock()
        let began = clock.now
        var report = Report(
            test: "kill", mode: options.soak ? "soak" : "quick", seed: options.seed, workDirectory: work)
        let minimumKills = options.kills ?? (options.soak ? 1000 : 100)
        let minimumWatchEdits = options.transfers ?? (options.soak ? 10_000 : 0)

        let port = try freeLoopbackPort()
        let harness = try Harness(
            work: work, binaries: binaries, listen: "127.0.0.1:\(port)", dial: "127.0.0.1:\(port)")
        progress.say("starting phoned (127.0.0.1:\(port)) and watchd in \(work)")
        try await harness.startBoth()
        let ledger = Ledger()
        let stop = StopFlag()
        let workload = try await Workload.prepare(harness: harness, ledger: ledger, stop: stop, seed: options.seed)
        progress.say("workload ready; killing until \(minimumKills) kills and \(minimumWatchEdits) watch edits")

        let watchStream = Task { await workload.runWatchStream() }
        let phoneStream = Task { await workload.runPhoneStream() }
        var random = SeededGenerator(seed: options.seed, stream: 3)
        var killPhone = random.chance(0.5)
        do {
            while true {
                let watchEdits = await ledger.watchEditCount()
                if report.kills >= minimumKills, watchEdits >= minimumWatchEdits { break }
                try await Task.sleep(for: random.duration(0.05...1.5))
                for daemon in [harness.phone, harness.watch] {
                    if let status = await daemon.exitedUnexpectedly() {
                        report.crashes.append("\(daemon.name) exited with status \(status) on its own")
                        try await daemon.start()
                    }
                }
                let daemon = killPhone ? harness.phone : harness.watch
                if await daemon.kill9() {
                    report.kills += 1
                    if killPhone { report.phoneKills += 1 } else { report.watchKills += 1 }
                    report.killSeconds.append(KillInstant(daemon: daemon.name, seconds: ledger.secondsSinceStart()))
                }
                try await daemon.start()
                killPhone.toggle()
                if report.kills % 20 == 0 {
                    let edits = await ledger.records.count
                    progress.say("\(report.kills) kills, \(edits) edits attempted")
                }
            }
        } catch {
            stop.set()
            _ = await (watchStream.value, phoneStream.value)
            throw error
        }
        stop.set()
        _ = await (watchStream.value, phoneStream.value)
        for daemon in [harness.phone, harness.watch] {
            if let status = await daemon.exitedUnexpectedly() {
                report.crashes.append("\(daemon.name) exited with status \(status) on its own")
            }
            try await daemon.start()  // no-op when running
        }
        progress.say("streams stopped after \(report.kills) kills; waiting for convergence")
        await Finale.finish(
            harness: harness, ledger: ledger, report: &report, deadline: options.soak ? .seconds(120) : .seconds(60))
        await harness.stopBoth()
        report.durationSeconds = (clock.now - began).seconds
        return report
    }
}

/// What both testers do at the end: wait for convergence, gather the final state, run the checks.
enum Finale {
    static func finish(harness: Harness, ledger: Ledger, report: inout Report, deadline: Duration) async {
        var last = Agreement(agreed: false, reason: "never checked")
        let took = await waitUntil(timeout: deadline, interval: .milliseconds(200)) {
            last = await checkAgreement(harness)
            return last.agreed
        }
        report.converged = took != nil
        report.finalConvergenceSeconds = took?.seconds
        if took == nil { report.notConvergedReason = "after \(deadline): \(last.reason)" }

        let phoneRuns = await harness.phoneWorkouts(all: true)
        let watchRuns = await harness.watchWorkouts()
        let records = await ledger.records
        saveLedger(records, to: "\(harness.work)/edits.tsv")
        report.acknowledged = records.filter { $0.outcome == .acknowledged }.map {
            AcknowledgedEdit(side: $0.side.rawValue, seconds: $0.finishedSeconds)
        }
        report.checks = Checker.check(
            Checker.Inputs(
                records: records, phoneRuns: phoneRuns, watchRuns: watchRuns ?? [],
                stubs: harness.stubIDs(), workoutFiles: harness.workoutFileIDs(),
                phoneLog: ChildProcess.readText(harness.phoneLog)))
        if watchRuns == nil {
            report.converged = false
            report.notConvergedReason = "could not read the watch's cache (watchctl workouts --json failed)"
        }
    }
}

/// The ledger as tab-separated lines (number, side, kind, run, exercise, set, reps, weight, outcome,
/// stamp, detail), for reading a failure after the fact.
func saveLedger(_ records: [EditRecord], to path: String) {
    var text = "number\tside\tkind\trun\texercise\tset\treps\tweight\toutcome\tstamp\tdetail\n"
    for r in records {
        let detail = r.detail.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ")
        text +=
            "\(r.number)\t\(r.side.rawValue)\t\(r.kind.rawValue)\t\(r.run ?? "-")\t\(r.log + 1)\t\(r.set + 1)\t"
            + "\(r.reps)\t\(r.weight)\t\(r.outcome.rawValue)\t\(r.finishedStamp)\t\(detail)\n"
    }
    try? text.write(toFile: path, atomically: true, encoding: .utf8)
}
