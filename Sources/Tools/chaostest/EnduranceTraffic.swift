import Foundation

/// How the calls of one CLI verb ended.
struct VerbTally: Codable, Sendable, Equatable {
    var attempted = 0
    var acknowledged = 0
    var refused = 0
    var unavailable = 0
    var indeterminate = 0
    /// The CLI refused the call's command line: the tester's own mistake, which fails the run.
    var malformed = 0

    mutating func count(_ outcome: EditOutcome) {
        attempted += 1
        switch outcome {
        case .acknowledged: acknowledged += 1
        case .refused: refused += 1
        case .unavailable: unavailable += 1
        case .indeterminate: indeterminate += 1
        case .malformed: malformed += 1
        }
    }
}

/// The endurance run's traffic beside the edit streams and the files: every other kind the CLIs
/// offer, seeded — a split of its own renamed and reshaped, runs of it started, driven through a
/// live flow (opened, advanced, paused and resumed on the watch, closed) and ended, data messages
/// both ways, complications, settings. Nothing here is checked beyond its outcome tally: the
/// delivery checks are the edit ledger's and the files'; this keeps every path busy for hours.
struct EnduranceTraffic: Sendable {
    let harness: Harness
    let stop: StopFlag
    let seed: UInt64
    /// Seconds between two calls, drawn uniformly.
    let pause: ClosedRange<Double>

    /// Runs until stopped; returns the tally per verb.
    func run() async -> [String: VerbTally] {
        var random = SeededGenerator(seed: seed, stream: 7)
        var tallies: [String: VerbTally] = [:]
        var split: String?
        var run: String?
        var steps = 0
        var number = 0
        func call(_ side: Side, _ verb: String, _ arguments: [String]) async -> CommandResult {
            let result =
                side == .phone ? await harness.phonectl(arguments) : await harness.watchctl(arguments)
            tallies["\(side == .phone ? "phonectl" : "watchctl") \(verb)", default: VerbTally()]
                .count(EditOutcome(result))
            return result
        }
        while !stop.isSet {
            number += 1
            if split == nil {
                let result = await call(
                    .phone, "split create", ["split", "create", "--name", "extra", "--exercise", "extra1:3x5@20"])
                split = result.status == 0 ? result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) : nil
            } else if let current = run {
                steps += 1
                switch steps {
                case 1: _ = await call(.phone, "live open", ["live", "open", current])
                case 2, 3, 5: _ = await call(.phone, "live advance", ["live", "advance", current])
                case 4: _ = await call(.watch, "pause", ["pause", current])
                case 6: _ = await call(.watch, "resume", ["resume", current])
                case 7: _ = await call(.phone, "live close", ["live", "close", current])
                default:
                    let result = await call(.phone, "end", ["end", current])
                    if result.status != 69 { run = nil }
                }
            } else if let split {
                switch Int.random(in: 0..<6, using: &random) {
                case 0:
                    let result = await call(.phone, "start", ["start", split])
                    if result.status == 0 {
                        run = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
                        steps = 0
                    }
                case 1:
                    let sets = Int.random(in: 2...4, using: &random)
                    _ = await call(
                        .phone, "split edit",
                        ["split", "edit", split, "--name", "extra \(number)", "--exercise", "extra1:\(sets)x5@20"])
                case 2: _ = await call(.phone, "data send", ["data", "send", "endurance \(number)", "--reply"])
                case 3: _ = await call(.watch, "data send", ["data", "send", "endurance \(number)"])
                case 4: _ = await call(.phone, "complication push", ["complication", "push", "endurance \(number)"])
                default:
                    let rest = Int.random(in: 30...120, using: &random)
                    _ = await call(.phone, "settings set", ["settings", "set", "--rest", "\(rest)"])
                }
            }
            let clock = ContinuousClock()
            let end = clock.now + random.duration(pause)
            while !stop.isSet, clock.now < end { try? await Task.sleep(for: .milliseconds(100)) }
        }
        return tallies
    }
}

extension FileTraffic {
    /// Files both ways at once, until stopped (or at the limit): every send of either direction.
    func runBothWays() -> Task<[SentFile], Never> {
        Task {
            async let toWatch = run(.phoneToWatch)
            async let toPhone = run(.watchToPhone)
            return await toWatch + toPhone
        }
    }
}
