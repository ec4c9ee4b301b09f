import AdminCommands
import DaemonRuntime
import Foundation
import Glibc

extension BenchSuite {
    /// Figure 5: transfers queued on the watch while phoned is down, then drained when it returns.
    ///
    /// Set-up (once): link the pair, start a run, stop phoned, make N edits on the watch (each one
    /// falls back to a durable `transferUserInfo`), stop watchd and snapshot all four directories.
    /// Each repetition restores the snapshot, starts watchd (it re-queues its one undelivered run on
    /// start), starts phoned and times from phoned's readiness line until phoned's ingest counters
    /// sum to the watch's outbox depth and the outbox is empty (every transfer applied — merged and
    /// written durably, or found unchanged — and acknowledged). Polls phoned's status every 2 ms and
    /// times each poll: the admin latency while the phone drains.
    func drain() throws {
        try drain(transfers: plan.drainTransfers, repetitions: plan.slowRepetitions)
        // Full mode only: the set-up alone queues 100,000 edits through the admin socket.
        if !options.quick { try drain(transfers: 100_000, repetitions: 1) }
    }

    private func drain(transfers: Int, repetitions: Int) throws {
        let section = "5. drain after a partition"
        Progress.say("[\(section)]")
        let root = scratch.appending("drain-\(transfers)")
        let pair = try DaemonPair(root: "\(root)/live", binaries: binaries)
        defer { pair.stop() }
        try pair.startPhoned().waitUntilReady()
        try pair.startWatchd().waitUntilReady()
        try pair.waitUntilLinked()
        let run = try startRun(pair)
        pair.phoned?.stop()
        try Admin.waitFor(pair.watch.admin, "watchd to see the phone gone") { !$0.bool("linked") }
        Progress.say("  queueing \(transfers) edits on the watch with phoned down …")
        let queueing = try timed {
            for index in 0..<transfers {
                try Admin.send(
                    pair.watch.admin,
                    index % 2 == 0
                        ? WatchCommand.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil))
                        : .set(.undo(run: run, exercise: 1, set: 1)))
            }
            try Admin.waitFor(pair.watch.admin, "\(transfers) transfers in the outbox") {
                $0.int("outboxDepth") >= transfers
            }
        }
        pair.watchd?.stop()
        let snapshot = "\(root)/snapshot"
        _ = try runTool("/bin/cp", ["-a", "\(root)/live", snapshot])

        var seconds: [Double] = []
        var rates: [Double] = []
        var replaceRates: [Double] = []
        var statusP99: [Double] = []
        let baselines = "\(root)/baselines"
        try FileManager.default.createDirectory(atPath: baselines, withIntermediateDirectories: true)
        let document = Array(String(repeating: "x", count: 2_500).utf8)
        for repetition in 1...repetitions {
            Progress.say("  repetition \(repetition)/\(repetitions)")
            try FileManager.default.removeItem(atPath: "\(root)/live")
            _ = try runTool("/bin/cp", ["-a", snapshot, "\(root)/live"])
            sync()
            let replaces = try Baselines.atomicReplaceLatencies(directory: baselines, bytes: document, count: 200)
            replaceRates.append(1 / Report.median(replaces))
            try pair.startWatchd().waitUntilReady()
            // watchd re-queues its undelivered run at start (an fdatasync on the outbox thread).
            usleep(300_000)
            let depth = try Admin.status(pair.watch.admin).int("outboxDepth")
            guard depth >= transfers else {
                throw BenchError("the restored outbox holds \(depth) transfers, expected \(transfers)")
            }
            let phoned = try pair.startPhoned()
            let readyAfter = try phoned.waitUntilReady()
            let readyAt = phoned.spawnedAt + readyAfter
            var applied = 0
            var latencies: [Double] = []
            while applied < depth {
                let asked = monotonicSeconds()
                if let status = try? Admin.status(pair.phone.admin), let ingest = status["ingest"] as? [String: Any] {
                    latencies.append((monotonicSeconds() - asked) * 1_000)
                    applied = ingest.values.reduce(0) { $0 + ((($1 as? NSNumber)?.intValue) ?? 0) }
                }
                if applied < depth { usleep(2_000) }
                if monotonicSeconds() - readyAt > 900 { throw BenchError("drain did not finish in 15 minutes") }
            }
            // Counted is not yet acknowledged: the end is the watch's outbox empty.
            while try Admin.status(pair.watch.admin).int("outboxDepth") > 0 {
                usleep(2_000)
                if monotonicSeconds() - readyAt > 900 { throw BenchError("drain did not finish in 15 minutes") }
            }
            let elapsed = monotonicSeconds() - readyAt
            statusP99.append(Report.percentile(latencies, 0.99))
            seconds.append(elapsed)
            rates.append(Double(depth) / elapsed)
            pair.stop()
        }
        let note = options.quick ? "quick mode: \(transfers) transfers, not 10,000 (run scripts/bench for 10,000)" : nil
        report.measurement(
            section, "queueing \(transfers) watch edits with phoned down (set-up, once)",
            [Double(transfers) / queueing],
            unit: "edits/s",
            note: "each edit: the run in the watch's pending record (its file then replaced without a sync) + durable "
                + "transferUserInfo, via the admin socket")
        report.measurement(
            section, "drain \(transfers) transfers: phoned ready → all applied", seconds, unit: "s", note: note)
        report.measurement(section, "drain rate, \(transfers) transfers", rates, unit: "transfers/s")
        report.measurement(
            section, "phoned admin status p99 while draining \(transfers)", statusP99, unit: "ms", target: .atMost(20),
            note: "one status request every 2 ms through the drain; p99 per repetition")
        report.measurement(
            section, "atomic replace rate (2.5 KB, one writer), \(transfers)-transfer run", replaceRates, unit: "ops/s")
        report.ratio(
            section, "drain rate / atomic replace rate, \(transfers) transfers", rates, replaceRates,
            definition: "drain / AR rate",
            target: .atLeast(2.0),
            note: "a batch (the transfers one burst delivers) writes each run once, persists one mark and "
                + "one push, and the watch resolves its acks in one write; see docs/PERFORMANCE.md")
    }
}
