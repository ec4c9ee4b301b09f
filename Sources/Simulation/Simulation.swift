/// Runs seeds: the batch `scripts/simulate` and the tests use.
package enum Simulation {
    /// One seed, run to its final checks.
    package static func run(seed: UInt64, options: SimulationOptions = SimulationOptions()) -> SimulationResult {
        Simulator(seed: seed, options: options).run()
    }
}
