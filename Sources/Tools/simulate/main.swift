// simulate: both daemons' real nodes and link engines under a seeded, deterministic simulator with
// faults and invariant checks (docs/SIMULATION.md).
import Foundation
import Simulation

let usage = """
    Usage: simulate [--seeds N] [--from S] [--jobs J] [--seed S [--trace] [--shrink]] [--soak]
                    [--no-faults] [--activity-ms MS]

    Runs N seeds (default 200) from S (default 1) on J threads (default: the cores); --seed S runs one
    seed, --trace prints its record, --shrink finds its shortest failing prefix. --activity-ms cuts the
    workload and faults after MS milliseconds (a shrunk reproduction).
    --soak runs seeds until stopped, printing the rate and the last seed every 10 seconds.
    Exits 1 if any seed violates an invariant, naming the seed and the invariant.
    """

var seeds = 200
var from: UInt64 = 1
var single: UInt64?
var trace = false
var shrink = false
var soak = false
var jobs = ProcessInfo.processInfo.activeProcessorCount
var options = SimulationOptions()
var arguments = CommandLine.arguments.dropFirst()
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("simulate: \(message)\n\(usage)\n".utf8))
    exit(64)
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--seeds": seeds = Int(arguments.popFirst() ?? "") ?? { fail("--seeds needs a number") }()
    case "--from": from = UInt64(arguments.popFirst() ?? "") ?? { fail("--from needs a seed") }()
    case "--seed": single = UInt64(arguments.popFirst() ?? "") ?? { fail("--seed needs a seed") }()
    case "--trace": trace = true
    case "--shrink": shrink = true
    case "--activity-ms":
        options.activity = .milliseconds(Int(arguments.popFirst() ?? "") ?? { fail("--activity-ms needs a number") }())
    case "--soak": soak = true
    case "--jobs": jobs = max(1, Int(arguments.popFirst() ?? "") ?? { fail("--jobs needs a number") }())
    case "--no-faults": options.faults = false
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unknown argument \(argument)")
    }
}

if let single {
    options.keepTrace = trace
    let result = Simulation.run(seed: single, options: options)
    if let lines = result.trace { print(lines.joined(separator: "\n")) }
    print(
        "seed \(single): \(result.steps) steps, \(result.operations) operations, \(result.faults) faults, "
            + "\(result.simulated.components.seconds) s simulated, trace \(String(result.traceHash, radix: 16))")
    for violation in result.violations { print("VIOLATION seed \(single): \(violation)") }
    if shrink, let (shrunk, reproduction) = Simulation.shrink(seed: single, options: options) {
        let milliseconds =
            shrunk.activity.components.seconds * 1_000 + shrunk.activity.components.attoseconds / 1_000_000_000_000_000
        print(
            "shrunk: fails with \(milliseconds) ms of activity (\(reproduction.operations) operations, "
                + "\(reproduction.faults) faults)\(shrunk.faults ? "" : ", without faults"): "
                + "scripts/simulate --seed \(single) --activity-ms \(milliseconds)\(shrunk.faults ? "" : " --no-faults") --trace"
        )
        for violation in reproduction.violations { print("  \(violation)") }
    }
    exit(result.violations.isEmpty ? 0 : 1)
}

/// The batch's shared progress; every member is used under `lock`.
final class Batch: @unchecked Sendable {
    let lock = NSLock()
    let from: UInt64
    let seeds: Int
    let soak: Bool
    let options: SimulationOptions
    let started = ContinuousClock.now
    var lastReport = ContinuousClock.now
    var nextSeed: UInt64
    var ran = 0
    var failed: [UInt64] = []
    var simulatedSeconds: Int64 = 0

    init(from: UInt64, seeds: Int, soak: Bool, options: SimulationOptions) {
        self.from = from
        self.seeds = seeds
        self.soak = soak
        self.options = options
        nextSeed = from
    }

    /// The next seed to run, or nil when the batch is done.
    func take() -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        guard soak || nextSeed < from + UInt64(seeds) else { return nil }
        defer { nextSeed += 1 }
        return nextSeed
    }

    func finished(_ seed: UInt64, _ result: SimulationResult) {
        lock.lock()
        defer { lock.unlock() }
        ran += 1
        simulatedSeconds += result.simulated.components.seconds
        if !result.violations.isEmpty {
            failed.append(seed)
            for violation in result.violations { print("VIOLATION seed \(seed): \(violation)") }
            print("replay: scripts/simulate --seed \(seed) --shrink --trace")
        }
        if soak, ContinuousClock.now - lastReport > .seconds(10) {
            lastReport = ContinuousClock.now
            let wall = Double((ContinuousClock.now - started).components.seconds)
            print(
                "soak: \(ran) seeds, \(failed.count) failed, \(simulatedSeconds / 3600) h simulated, "
                    + "\(Int(Double(ran) / max(wall, 1))) seeds/s, last seed \(seed)")
            fflush(nil)
        }
    }
}

// A batch reads no record: only a single seed prints its trace and hash.
options.recordTrace = false
let batch = Batch(from: from, seeds: seeds, soak: soak, options: options)
DispatchQueue.concurrentPerform(iterations: jobs) { _ in
    while let seed = batch.take() { batch.finished(seed, Simulation.run(seed: seed, options: batch.options)) }
}
let wall = ContinuousClock.now - batch.started
let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
print(
    "seeds \(from)…\(from + UInt64(batch.ran) - 1): \(batch.ran) run, \(batch.failed.count) failed, "
        + "\(batch.simulatedSeconds / 3600) h \(batch.simulatedSeconds % 3600 / 60) min simulated, "
        + "\(String(format: "%.1f", wallSeconds)) s wall, \(Int(Double(batch.ran) / max(wallSeconds, 0.001))) seeds/s "
        + "on \(jobs) threads")
exit(batch.failed.isEmpty ? 0 : 1)
