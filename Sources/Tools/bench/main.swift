// bench: the benchmark suite behind scripts/bench (docs/PERFORMANCE.md). Prints medians with min/max
// over several repetitions, each next to the machine's limit measured in the same run, and the
// ratios the benchmark issue asks for. Figures only: nothing here asserts a speed.
import ChildProcesses
import Foundation
import Glibc
import TestSupport
import WorkoutModel

let usage = """
    Usage: bench [--quick] [--json] [--only LIST] [--sqlite-helper PATH] [--floor-helper PATH] [--keep]
                 [--journal-off] [--plot DIR]
           bench --plot DIR --from FILE.json
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
      --plot DIR            also draw each figure next to its anchors as SVGs in DIR, with gnuplot (Debian
                            gnuplot-nox): one chart per section and unit, medians with min–max bars, the
                            ratios in a chart of their own (each with its .csv data and .gp script)
      --from FILE.json      with --plot: draw a recorded `bench --json` output instead of running
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
    case "--plot", "--from":
        guard let path = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: \(argument) needs a path\n\(usage)\n".utf8))
            exit(64)
        }
        if argument == "--plot" { options.plotDirectory = path } else { options.recordedJSON = path }
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

/// Draws `rows` into `directory` with gnuplot, or exits saying why not.
func plot(_ rows: [PlottedRow], mode: String, into directory: String) async {
    do {
        let (drawn, skipped) = try await ExternalRenderer.gnuplot.plot(
            BenchPlots.figures(rows, mode: mode), into: directory)
        for path in drawn { Progress.say("bench: drew \(path)") }
        for name in skipped { Progress.say("bench: \(name) not drawn: no samples") }
    } catch {
        FileHandle.standardError.write(Data("bench --plot: \(error)\n".utf8))
        exit(error.isMissing ? 69 : 1)
    }
}

if let directory = options.plotDirectory {
    // Said before a run of minutes, not after it.
    do {
        _ = try ExternalRenderer.gnuplot.locate()
    } catch {
        FileHandle.standardError.write(Data("bench --plot: \(error)\n".utf8))
        exit(69)
    }
    if let recorded = options.recordedJSON {
        let mode: String
        let rows: [PlottedRow]
        do {
            (mode, rows) = try BenchPlots.recorded(fromJSON: try Data(contentsOf: URL(fileURLWithPath: recorded)))
        } catch {
            FileHandle.standardError.write(
                Data("Error: --from \(recorded): not a bench --json output: \(error)\n".utf8))
            exit(65)
        }
        await plot(rows, mode: "\(mode) mode, recorded", into: directory)
        exit(0)
    }
} else if options.recordedJSON != nil {
    FileHandle.standardError.write(Data("Error: --from needs --plot DIR\n\(usage)\n".utf8))
    exit(64)
}

do {
    let suite = try BenchSuite(options: options)
    try suite.run()
    if let directory = options.plotDirectory {
        await plot(suite.report.rows.map(PlottedRow.init), mode: "\(suite.report.mode) mode", into: directory)
    }
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}
