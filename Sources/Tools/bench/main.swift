// bench: the benchmark suite behind scripts/bench (docs/PERFORMANCE.md). Prints medians with min/max
// over several repetitions, each next to the machine's limit measured in the same run, and the
// ratios the benchmark issue asks for. Figures only: nothing here asserts a speed.
import Foundation
import Glibc
import TestSupport
import WorkoutModel

let usage = """
    Usage: bench [--quick] [--json] [--only LIST] [--sqlite-helper PATH] [--floor-helper PATH] [--keep]
                 [--journal-off]
           bench --generate COUNT DIR

    Runs the benchmark suite (scripts/bench builds everything and calls this).
      --quick               about 2 minutes: fewer repetitions and smaller sizes (the table says which)
      --json                print the table as JSON on stdout
      --only LIST           run only these figures, e.g. --only 1,4 (1 enqueue, 2 round trip,
                            3 cold start, 4 push cost, 5 drain, 6 memory,
                            7 person operation, 8 history query, 9 blackhole detection,
                            10 latency while files stream)
      --sqlite-helper PATH  the compiled scripts/bench-sqlite.c (figure 1's SQLite peer)
      --floor-helper PATH   the compiled scripts/bench-floor.c (figure 2's hops with no logic)
      --keep                keep the temporary directory (daemon logs, generated documents)
      --journal-off         run the daemons with the event journal off (docs/TRACE.md's cost figure)
      --generate COUNT DIR  only write the figures' generated history of COUNT runs into the document
                            directory DIR (for experiments by hand) and say how long it took
      --read-decode DIR     only run figure 3's plain peer (read and decode every run file of the
                            document directory DIR) and print its wall and CPU seconds
    Progress goes to stderr; the table (or JSON) to stdout.
    """

var options = BenchOptions()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "-h", "--help":
        print(usage)
        exit(0)
    case "--quick": options.quick = true
    case "--json": options.json = true
    case "--keep": options.keep = true
    case "--journal-off": DaemonConfig.journalOff = true
    case "--only":
        guard let list = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --only needs a list\n\(usage)\n".utf8))
            exit(64)
        }
        options.only = Set(list.split(separator: ",").compactMap { Int($0) })
    case "--generate":
        guard let count = arguments.popFirst().flatMap({ Int($0) }), count > 0, let root = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --generate needs a run count and a directory\n\(usage)\n".utf8))
            exit(64)
        }
        let started = monotonicSeconds()
        do {
            try FileManager.default.createDirectory(
                atPath: (root as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try History.write(count: count, to: root, now: Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970))
        } catch {
            FileHandle.standardError.write(Data("bench --generate failed: \(error)\n".utf8))
            exit(1)
        }
        print("generated \(count) runs in \(Report.format(monotonicSeconds() - started)) s into \(root)")
        exit(0)
    case "--read-decode":
        guard let root = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --read-decode needs a directory\n\(usage)\n".utf8))
            exit(64)
        }
        let started = monotonicSeconds()
        do {
            let count = try History.readAndDecode(root: root)
            let cpu = BenchSuite.ownCPUSeconds()
            print(
                "read and decoded \(count) runs in \(Report.format(monotonicSeconds() - started)) s, "
                    + "\(Report.format(cpu)) s of CPU")
        } catch {
            FileHandle.standardError.write(Data("bench --read-decode failed: \(error)\n".utf8))
            exit(1)
        }
        exit(0)
    case "--sqlite-helper":
        guard let path = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --sqlite-helper needs a path\n\(usage)\n".utf8))
            exit(64)
        }
        options.sqliteHelper = path
    case "--floor-helper":
        guard let path = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --floor-helper needs a path\n\(usage)\n".utf8))
            exit(64)
        }
        options.floorHelper = path
    default:
        FileHandle.standardError.write(Data("Error: unknown argument \(argument)\n\(usage)\n".utf8))
        exit(64)
    }
}

do {
    try BenchSuite(options: options).run()
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}
