// simulate: both daemons' real nodes and link engines under a seeded, deterministic simulator with
// faults and invariant checks (docs/SIMULATION.md).
import Foundation
import Simulation

let usage = """
    Usage: simulate [--seeds N] [--from S] [--seed S [--trace]] [--soak] [--no-faults]

    Runs N seeds (default 200) from S (default 1); --seed S runs one seed, --trace prints its record.
    --soak runs seeds until stopped, printing the rate and the last seed every 10 seconds.
    Exits 1 if any seed violates an invariant, naming the seed and the invariant.
    """

var seeds = 200
var from: UInt64 = 1
var single: UInt64?
var trace = false
var soak = false
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
    case "--soak": soak = true
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
    exit(result.violations.isEmpty ? 0 : 1)
}

let started = ContinuousClock.now
var lastReport = started
var ran = 0
var failed: [UInt64] = []
var simulatedSeconds: Int64 = 0
var seed = from
while soak || ran < seeds {
    // Named before it runs: a trap in a seed leaves its number on stderr to replay.
    if soak, ContinuousClock.now - lastReport > .seconds(10) {
        let wall = Double((ContinuousClock.now - started).components.seconds)
        print("soak: \(ran) seeds, \(failed.count) failed, \(Int(Double(ran) / max(wall, 1))) seeds/s, last seed \(seed - 1)")
        lastReport = ContinuousClock.now
    }
    let result = Simulation.run(seed: seed, options: options)
    ran += 1
    simulatedSeconds += result.simulated.components.seconds
    if !result.violations.isEmpty {
        failed.append(seed)
        for violation in result.violations { print("VIOLATION seed \(seed): \(violation)") }
        print("replay: scripts/simulate --seed \(seed) --trace")
    }
    seed += 1
}
let wall = ContinuousClock.now - started
let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
print(
    "seeds \(from)…\(seed - 1): \(ran) run, \(failed.count) failed, \(simulatedSeconds / 3600) h \(simulatedSeconds % 3600 / 60) min simulated, "
        + "\(String(format: "%.1f", wallSeconds)) s wall, \(Int(Double(ran) / max(wallSeconds, 0.001))) seeds/s")
exit(failed.isEmpty ? 0 : 1)
