import Foundation
import SyncEngine
import WorkoutModel

extension BenchSuite {
    /// Figure 4: building and encoding one forced push (`requestSyncReceived` → `pushContext`, then
    /// `DocumentCoder.encodeCompact`) with 1k vs 100k runs in history, in process. Both engines are
    /// filled first; then pushes alternate between them, so a busy moment on a shared machine
    /// slows both sides of the ratio alike.
    func pushCost() throws {
        let section = "4. push cost vs history (build + encode one pushAll, in process)"
        Progress.say("[\(section)]")
        let now = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
        let sizes = plan.pushSizes
        var engines = try Self.filledEngines(sizes: sizes, now: now)
        var samples = [[Double]](repeating: [], count: sizes.count)
        var payloadBytes = [Int](repeating: 0, count: sizes.count)
        for repetition in 1...plan.repetitions {
            Progress.say("  repetition \(repetition)/\(plan.repetitions)")
            var times = [[Double]](repeating: [], count: sizes.count)
            for _ in 0..<plan.pushesPerRepetition {
                for index in sizes.indices {
                    var bytes = 0
                    times[index].append(
                        timed {
                            for action in engines[index].handle(.requestSyncReceived(now: now)) {
                                if case .pushContext(let context, _) = action {
                                    bytes = DocumentCoder.encodeCompact(context).count
                                }
                            }
                        })
                    guard bytes > 0 else { throw BenchError("a forced push produced no context") }
                    payloadBytes[index] = bytes
                }
            }
            for index in sizes.indices { samples[index].append(Report.median(times[index]) * 1e6) }
        }
        for (index, count) in sizes.enumerated() {
            report.measurement(
                section, "push build+encode, \(count / 1000)k runs in history (\(payloadBytes[index]) B context)",
                samples[index], unit: "µs")
        }
        if let small = sizes.indices.min(by: { sizes[$0] < sizes[$1] }),
            let large = sizes.indices.max(by: { sizes[$0] < sizes[$1] }), small != large
        {
            report.ratio(
                section, "push cost \(sizes[large] / 1000)k / \(sizes[small] / 1000)k", samples[large], samples[small],
                definition: "\(sizes[large] / 1000)k / \(sizes[small] / 1000)k", target: .atMost(1.2))
        }
    }

    /// One engine per size, fed that many runs of the generated history as phoned feeds its scan,
    /// gathered and link-activated (figures 4 and 7).
    static func filledEngines(sizes: [Int], now: Timestamp) throws -> [SyncEngine] {
        try sizes.map { count in
            var engine = SyncEngine(settings: nil)
            _ = engine.handle(.documentScanned(.split(History.split(now: now)), now: now))
            let fill = try timed {
                try History.forEachRun(count: count, now: now) { run in
                    _ = engine.handle(.documentScanned(.workout(run), now: now))
                }
                _ = engine.handle(.gatherFinished(now: now))
                _ = engine.handle(.linkActivated(now: now))
            }
            Progress.say("  \(count) runs fed to the engine in \(Report.format(fill)) s")
            return engine
        }
    }
}
