/// Runs seeds: the batch `scripts/simulate` and the tests use.
package enum Simulation {
    /// One seed, run to its final checks.
    package static func run(seed: UInt64, options: SimulationOptions = SimulationOptions()) -> SimulationResult {
        Simulator(seed: seed, options: options).run()
    }

    /// The shortest reproduction of a failing seed: the shortest prefix of its activity that still
    /// fails (everything before the cut is the same run, draw for draw), then without faults if it
    /// fails that way too. Nil when the seed does not fail.
    package static func shrink(
        seed: UInt64, options: SimulationOptions = SimulationOptions()
    ) -> (options: SimulationOptions, result: SimulationResult)? {
        var best = run(seed: seed, options: options)
        guard !best.violations.isEmpty else { return nil }
        var failing = options
        var low = 0
        var high = Int(options.activity.components.seconds * 1_000)
        while high - low > 20 {
            let middle = (low + high) / 2
            var shorter = options
            shorter.activity = .milliseconds(middle)
            let result = run(seed: seed, options: shorter)
            if result.violations.isEmpty {
                low = middle
            } else {
                high = middle
                failing = shorter
                best = result
            }
        }
        var calm = failing
        calm.faults = false
        let withoutFaults = run(seed: seed, options: calm)
        if !withoutFaults.violations.isEmpty { return (calm, withoutFaults) }
        return (failing, best)
    }
}
