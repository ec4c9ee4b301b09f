import Foundation
import PhoneStore
import SyncEngine
import WorkoutModel

extension BenchSuite {
    /// Figure 7: one person operation (`SyncEngine.perform` of a set completion or undo on an active
    /// run, then the durable write of every `writeWorkout` it returns) with 1k vs 100k runs in history,
    /// in process. Both engines are filled first; operations alternate between them, so a busy moment
    /// on a shared machine slows both sides of the ratio alike. The engine's share alone is a
    /// diagnostic row: the write (an atomic replace, fsync-bound) is the same size at both sizes.
    func personOperation() throws {
        let section = "7. person operation vs history (engine + durable write, in process)"
        Progress.say("[\(section)]")
        let now = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
        let sizes = plan.pushSizes
        var engines = try Self.filledEngines(sizes: sizes, now: now)
        var runIDs: [DocumentID] = []
        var directories: [DocumentDirectory] = []
        for (engine, count) in zip(engines, sizes) {
            guard let runID = engine.index.activeIDs.min() else {
                throw BenchError("the generated history has no active run to operate on")
            }
            runIDs.append(runID)
            directories.append(try DocumentDirectory(root: scratch.appending("operation-\(count)")))
        }
        // Log 2 set 0 is not done in an active generated run (5 of 12 sets are): complete, then undo.
        let operations: [(DocumentID) -> PhoneOperation] = [
            { .completeSet(runID: $0, logIndex: 2, setIndex: 0, reps: 8, weight: 30) },
            { .undoSet(runID: $0, logIndex: 2, setIndex: 0) },
        ]
        var total = [[Double]](repeating: [], count: sizes.count)
        var engineOnly = [[Double]](repeating: [], count: sizes.count)
        var clock = now
        for repetition in 1...plan.repetitions {
            Progress.say("  repetition \(repetition)/\(plan.repetitions)")
            var times = [[Double]](repeating: [], count: sizes.count)
            var engineTimes = [[Double]](repeating: [], count: sizes.count)
            for step in 0..<plan.operationsPerRepetition {
                clock = clock.advanced(by: .milliseconds(1))
                for index in sizes.indices {
                    var actions: [SyncEngine.Action] = []
                    let operation = operations[step % operations.count](runIDs[index])
                    let engineSeconds = try timed { actions = try engines[index].perform(operation, now: clock) }
                    let writeSeconds = try timed {
                        for case .writeWorkout(let run) in actions { try directories[index].write(run) }
                    }
                    times[index].append(engineSeconds + writeSeconds)
                    engineTimes[index].append(engineSeconds)
                }
            }
            for index in sizes.indices {
                total[index].append(Report.median(times[index]) * 1e6)
                engineOnly[index].append(Report.median(engineTimes[index]) * 1e6)
            }
        }
        for (index, count) in sizes.enumerated() {
            report.measurement(section, "person operation, \(count / 1000)k runs in history", total[index], unit: "µs")
            report.measurement(
                section, "engine share (perform alone), \(count / 1000)k runs", engineOnly[index], unit: "µs",
                note: "diagnostic: SyncEngine.perform without the write")
        }
        if let small = sizes.indices.min(by: { sizes[$0] < sizes[$1] }),
            let large = sizes.indices.max(by: { sizes[$0] < sizes[$1] }), small != large
        {
            let label = "\(sizes[large] / 1000)k / \(sizes[small] / 1000)k"
            report.ratio(
                section, "person operation \(label)", total[large], total[small], definition: label,
                target: .atMost(1.1))
            report.ratio(section, "engine share \(label)", engineOnly[large], engineOnly[small], definition: label)
        }
    }
}
