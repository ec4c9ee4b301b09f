import Foundation
import SyncEngine
import WorkoutModel

extension BenchSuite {
    /// Figure 4: building and encoding one forced push (`requestSyncReceived` → `pushContext`, then
    /// `DocumentCoder.encodeCompact`) with 1k vs 100k runs in history, in process.
    func pushCost() throws {
        let section = "4. push cost vs history (build + encode one pushAll, in process)"
        Progress.say("[\(section)]")
        let now = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
        var perSize: [Int: [Double]] = [:]
        var payloadBytes: [Int: Int] = [:]
        for count in plan.pushSizes {
            var engine = SyncEngine(settings: nil)
            let split = History.split(now: now)
            _ = engine.handle(.documentScanned(.split(split), now: now))
            let fill = try timed {
                try History.forEachRun(count: count, now: now) { run in
                    _ = engine.handle(.documentScanned(.workout(run), now: now))
                }
                _ = engine.handle(.gatherFinished(now: now))
                _ = engine.handle(.linkActivated(now: now))
            }
            Progress.say("  \(count) runs fed to the engine in \(Report.format(fill)) s")
            var samples: [Double] = []
            for repetition in 1...plan.repetitions {
                var times: [Double] = []
                for _ in 0..<plan.pushesPerRepetition {
                    var bytes = 0
                    times.append(
                        timed {
                            for action in engine.handle(.requestSyncReceived(now: now)) {
                                if case .pushContext(let context, _) = action {
                                    bytes = DocumentCoder.encodeCompact(context).count
                                }
                            }
                        })
                    guard bytes > 0 else { throw BenchError("a forced push produced no context") }
                    payloadBytes[count] = bytes
                }
                samples.append(Report.median(times) * 1e6)
                Progress.say("  \(count) runs, repetition \(repetition)/\(plan.repetitions)")
            }
            perSize[count] = samples
            report.measurement(
                section, "push build+encode, \(count / 1000)k runs in history (\(payloadBytes[count] ?? 0) B context)",
                samples, unit: "µs")
        }
        if let small = plan.pushSizes.min(), let large = plan.pushSizes.max(), small != large {
            report.ratio(
                section, "push cost \(large / 1000)k / \(small / 1000)k", perSize[large]!, perSize[small]!,
                definition: "\(large / 1000)k / \(small / 1000)k", target: .atMost(1.2))
        }
    }
}
