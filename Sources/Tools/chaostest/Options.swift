import Foundation
import Glibc

/// Which tester to run.
enum TestKind: String, Sendable {
    case kill
    case partition
    case endurance
}

/// The command line, parsed.
struct Options: Sendable {
    var kind: TestKind
    var soak = false
    var seed: UInt64
    var json = false
    /// Where phoned, watchd, phonectl and watchctl are (default: next to chaostest).
    var buildDirectory: String
    /// Where configs, state and logs go (default: a fresh directory under $TMPDIR).
    var workDirectory: String?
    /// Keep the work directory even when the test passes.
    var keep = false
    /// Kill test: how many kills at least.
    var kills: Int?
    /// Kill test: how many watch edits at least (soak: 10,000).
    var transfers: Int?
    /// Partition test: how many partition/heal cycles.
    var cycles: Int?
    /// Partition test: never use iptables one-way drops, only link down.
    var noDrop = false
    /// Endurance test: how long (nil: the quick run, about 2 minutes).
    var hours: Double?
    /// Endurance test: where the samples go as JSON (and CSV beside it); default in the work directory.
    var samplesPath: String?
    /// Print progress lines on stderr.
    var verbose = false
    /// `--plot DIR`: draw the report's samples there with gnuplot (`Report.figures`).
    var plotDirectory: String?
}

/// A usage error: printed with the usage, exit 64.
struct UsageFailure: Error {
    var message: String
}

enum CommandLineParser {
    static func parse(_ arguments: [String]) throws(UsageFailure) -> Options? {
        var rest = arguments[...]
        guard let first = rest.popFirst() else {
            throw UsageFailure(message: "name a test: kill, partition or endurance")
        }
        if first == "-h" || first == "--help" || first == "help" { return nil }
        guard let kind = TestKind(rawValue: first) else {
            throw UsageFailure(
                message: "unknown test \(first.debugDescription); the tests are kill, partition and endurance")
        }
        var options = Options(
            kind: kind, seed: UInt64(truncatingIfNeeded: Int(Date().timeIntervalSince1970 * 1000)) % 1_000_000,
            buildDirectory: defaultBuildDirectory())
        func value(_ name: String) throws(UsageFailure) -> String {
            guard let value = rest.popFirst() else { throw UsageFailure(message: "\(name) needs a value") }
            return value
        }
        func number(_ name: String) throws(UsageFailure) -> Int {
            let text = try value(name)
            guard let number = Int(text), number > 0 else {
                throw UsageFailure(message: "\(name) must be a positive whole number, got \(text.debugDescription)")
            }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help": return nil
            case "--soak": options.soak = true
            case "--quick": options.soak = false
            case "--json": options.json = true
            case "--keep": options.keep = true
            case "--verbose", "-v": options.verbose = true
            case "--no-drop": options.noDrop = true
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else {
                    throw UsageFailure(message: "--seed must be a whole number, got \(text.debugDescription)")
                }
                options.seed = seed
            case "--build-dir": options.buildDirectory = try value(argument)
            case "--work-dir": options.workDirectory = try value(argument)
            case "--plot": options.plotDirectory = try value(argument)
            case "--kills" where kind == .kill: options.kills = try number(argument)
            case "--transfers" where kind == .kill: options.transfers = try number(argument)
            case "--cycles" where kind == .partition: options.cycles = try number(argument)
            case "--hours" where kind == .endurance:
                let text = try value(argument)
                guard let hours = Double(text), hours > 0, hours <= 24 * 30 else {
                    throw UsageFailure(
                        message: "--hours must be a number of hours above 0, got \(text.debugDescription)")
                }
                options.hours = hours
            case "--samples" where kind == .endurance: options.samplesPath = try value(argument)
            default: throw UsageFailure(message: "unknown option \(argument.debugDescription) for the \(kind) test")
            }
        }
        return options
    }

    /// The directory holding this executable (the build's products directory).
    static func defaultBuildDirectory() -> String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().path
    }

    static let usage = """
        Usage: chaostest kill      [--soak] [--kills N] [--transfers N] [options]
               chaostest partition [--soak] [--cycles N] [--no-drop] [options]
               chaostest endurance [--quick | --hours H] [--samples FILE] [options]

        Options:
          --seed N         seed for every random choice (printed; re-run with it to repeat the schedule)
          --json           print the report as one JSON object on stdout
          --soak           the long run (kill: >= 1,000 kills and >= 10,000 watch edits; partition: 200 cycles)
          --build-dir DIR  where phoned, watchd, phonectl, watchctl are (default: next to chaostest)
          --work-dir DIR   where configs, state and logs go (default: a new directory under $TMPDIR)
          --keep           keep the work directory even when the test passes
          --plot DIR       draw the samples as SVGs into DIR with gnuplot (Debian gnuplot-nox): kill, edits
                           acknowledged and kills over time; partition, the distributions of detection,
                           reconnect and convergence; endurance, each daemon's memory, descriptors and
                           threads and each directory's bytes over the run (each with its .csv data and
                           .gp script)
          -v, --verbose    progress lines on stderr
          -h, --help       this help
        """

    static let help = """
        chaostest: the kill/restart (queued delivery) and network-partition testers.

        \(usage)

        kill       Runs phoned and watchd on loopback. While a stream of watch edits and one of phone
                   edits run, kills phoned and watchd with SIGKILL at seeded random instants
                   (alternating, each restarted at once). Quick: 100 kills. Soak: 1,000 kills and
                   10,000 watch edits.
        partition  Runs phoned and watchd in two network namespaces joined by a veth pair
                   (10.231.0.1/30 and .2, inside the namespaces only). Cycles of partition (the link
                   taken down in one namespace, or, when iptables is present, a one-way DROP) and heal,
                   with seeded random durations, while edits flow on both sides and files stream
                   both ways (`file send`, 64 B to 1 MiB, a seeded 3-8 s apart; quick: at most 24
                   each way). Reports dead-peer detection, reconnect and convergence times, and the
                   files delivered. Quick: 20 cycles. Soak: 200. Needs root and `ip netns`; without
                   them it prints "skipped: ..." and exits 0.
        endurance  Both daemons (in the partition test's namespaces when it can make them, else on
                   loopback with kills only) under the kill test's edit streams, the partition
                   test's files both ways and every other kind of CLI traffic (a split edited, runs
                   started, driven through a live flow and ended, data messages, complications,
                   settings), with a kill or a partition at seeded random intervals (kills in
                   the first half only). Samples each daemon's RSS, descriptors and threads and the
                   bytes of each state and document directory (--samples FILE: JSON, CSV beside
                   it), then reports each one's slope per hour, fitted over the second half (RSS
                   after each life's first 15 minutes), against its bound (docs/CHAOS.md).
                   Quick: 2 minutes, a sample every 2 s. --hours H: a sample a minute.

        The workload. The phone creates two splits: "watch" (8 exercises x 10 sets) and "phone"
        (4 x 5). It starts runs of "watch" for the watch and runs of "phone" for itself. The watch
        completes the first 9 sets of each exercise of its runs, one after another; the phone
        completes sets of its own runs and, meanwhile, the 10th set of each exercise of the run the
        watch is on: both sides edit one run at once, and runs merge per set, so neither edit may be
        lost. Every edit completes one distinct set and writes the edit's number into it
        (watch: reps 1 + n mod 50, weight n mod 100000; phone: that weight + 0.5), so each is checkable at the
        end. The phone now and then discards the run the watch is editing (the watch keeps editing
        it until it learns) and some of its own runs, and ends each run a stream is done with
        (phonectl end), so the active runs stay a handful.

        Definitions.
          attempted        every edit command run (watchctl/phonectl complete, phonectl start/discard/end).
          acknowledged     the CLI exited 0: for a watch edit, it is in the watch's cache and either
                           sent as a message or durably queued; for a phone edit, it is written to the
                           document directory. Exit 69 "not running" is attempted, not acknowledged,
                           and certainly not applied; a daemon killed mid-request leaves the edit
                           indeterminate (it may or may not have been applied; never counted as lost).
          lost             an acknowledged edit whose set is not done with its value in the phone's
                           final document (or an acknowledged end whose run is not completed there,
                           or an acknowledged discard without its tombstone), even
                           when a newer edit of another set of the run came from the other side.
                           Only edits to runs the phone discarded are excused (the discard wins).
          applied twice    phoned merged the same (run, version) twice: its engine's
                           "ingest <run>: merged (..., version S)" line, logged after the document
                           write, appears more than once for one pair. A redelivery must merge to
                           unchanged, never be applied again.
          out of order     for one run, the versions phoned merged (in log order, across restarts)
                           do not strictly increase (by stamp): an older copy applied after a newer one.
          resurrected      a discarded run (a stub in Stubs/) that has a file under Workouts/, is in
                           `phonectl workouts --all` or the watch's cache at the end, or that phoned
                           merged an update for after the discard was acknowledged.
          phantom          a done set in a tracked run whose value no attempted edit wrote.
          converged        after the last restart/heal, within a deadline and with nobody acting:
                           `watchctl workouts --json` equals `phonectl workouts --json` by value,
                           both sides are linked, the watch's outbox is empty and no edit is undelivered.
          files            (partition) each way: a file whose `file send` exited 0 must be in the
                           receiver's received-files/ exactly once with the size and SHA-256 sent
                           (else lost, duplicate or corrupt), handed to its app once (its log's
                           "file received" lines), and listed by `file received --json` with its own
                           metadata; no file nobody sent (unknown), nothing left in the inbox.
          detection        from the link going down until `status --json` shows linked=false (per side).
          reconnect        from the heal until both sides show linked=true.
          convergence      from the heal until every watch edit acknowledged before the heal is on the
                           phone and the watch has applied the phone's push generation of the heal.

        Exit status: 0 passed (or skipped), 1 a check failed or no convergence, 2 the test could not
        run (a daemon would not start, say), 64 usage error. See docs/CHAOS.md.
        """
}

/// SplitMix64: small, fast and good enough to drive a test schedule from one seed.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64, stream: UInt64) {
        state = seed &* 0x9E37_79B9_7F4A_7C15 &+ stream &* 0xD1B5_4A32_D192_ED69 &+ 1
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A duration drawn uniformly from `range` (in seconds).
    mutating func duration(_ range: ClosedRange<Double>) -> Duration {
        .milliseconds(Int(Double.random(in: range, using: &self) * 1000))
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
}

/// Progress lines on stderr, when asked for.
struct Progress: Sendable {
    var enabled: Bool
    let start = ContinuousClock.now

    func say(_ text: String) {
        guard enabled else { return }
        let elapsed = String(format: "%7.2f", (ContinuousClock.now - start).seconds)
        FileHandle.standardError.write(Data("[chaostest \(elapsed)s] \(text)\n".utf8))
    }
}
