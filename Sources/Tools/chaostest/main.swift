// chaostest: the kill/restart (queued delivery) and network-partition testers behind
// scripts/kill-test and scripts/partition-test. `chaostest --help` explains the workload and every
// figure it reports; docs/CHAOS.md is the longer version.
import ChildProcesses
import Dispatch
import Foundation
import Glibc

/// Parses, runs the chosen test, prints its report and returns the exit status.
enum Runner {
    static func main(_ arguments: [String]) async -> Int32 {
        let options: Options
        do {
            guard let parsed = try CommandLineParser.parse(arguments) else {
                print(CommandLineParser.help)
                return 0
            }
            options = parsed
        } catch {
            FileHandle.standardError.write(Data("Error: \(error.message)\n\(CommandLineParser.usage)\n".utf8))
            return 64
        }
        if options.plotDirectory != nil {
            // Said before the test runs, not after minutes of it.
            do {
                _ = try ExternalRenderer.gnuplot.locate()
            } catch {
                FileHandle.standardError.write(Data("chaostest: --plot: \(error)\n".utf8))
                return 2
            }
        }
        let progress = Progress(enabled: options.verbose)
        let binaries: Binaries
        let work: String
        do {
            binaries = try Binaries(directory: options.buildDirectory)
            work = try makeWorkDirectory(options)
        } catch {
            FileHandle.standardError.write(Data("chaostest: \(error)\n".utf8))
            return 2
        }
        progress.say("\(options.kind) test, seed \(options.seed), work directory \(work)")
        let report: Report
        do {
            switch options.kind {
            case .kill: report = try await KillTest.run(options, work: work, binaries: binaries, progress: progress)
            case .partition:
                report = try await PartitionTest.run(options, work: work, binaries: binaries, progress: progress)
            case .endurance:
                report = try await EnduranceTest.run(options, work: work, binaries: binaries, progress: progress)
            }
        } catch {
            CleanupRegistry.shared.cleanUp()
            FileHandle.standardError.write(
                Data("chaostest: the \(options.kind) test could not run: \(error)\nlogs kept in \(work)\n".utf8))
            return 2
        }
        CleanupRegistry.shared.cleanUp()
        print(options.json ? report.json : report.text)
        try? (report.text + "\n").write(toFile: "\(work)/report.txt", atomically: true, encoding: .utf8)
        try? (report.json + "\n").write(toFile: "\(work)/report.json", atomically: true, encoding: .utf8)
        if let directory = options.plotDirectory, report.skipped == nil {
            do {
                let (drawn, skipped) = try await ExternalRenderer.gnuplot.plot(report.figures, into: directory)
                for path in drawn { FileHandle.standardError.write(Data("chaostest: drew \(path)\n".utf8)) }
                for name in skipped {
                    FileHandle.standardError.write(Data("chaostest: \(name) not drawn: no samples\n".utf8))
                }
            } catch {
                FileHandle.standardError.write(Data("chaostest: --plot: \(error)\n".utf8))
                return 2
            }
        }
        if report.passed, !options.keep {
            try? FileManager.default.removeItem(atPath: work)
        } else if !report.passed {
            FileHandle.standardError.write(Data("chaostest: logs kept in \(work)\n".utf8))
        }
        return report.passed ? 0 : 1
    }

    /// `--work-dir`, or a fresh `chaostest-<kind>-XXXXXX` under $TMPDIR.
    static func makeWorkDirectory(_ options: Options) throws -> String {
        if let given = options.workDirectory {
            // Never reuse one: old documents, state and logs would be taken for this run's.
            let existing = (try? FileManager.default.contentsOfDirectory(atPath: given)) ?? []
            guard existing.isEmpty else {
                throw DaemonError(description: "--work-dir \(given) is not empty; give a new or empty directory")
            }
            try FileManager.default.createDirectory(atPath: given, withIntermediateDirectories: true)
            return URL(fileURLWithPath: given).standardizedFileURL.path
        }
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/chaostest-\(options.kind.rawValue)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw DaemonError(
                description: "cannot create a work directory under \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// SIGINT, SIGTERM, SIGHUP: kill what we started, delete the namespaces, exit 130.
    static func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(Data("chaostest: interrupted; cleaning up\n".utf8))
                CleanupRegistry.shared.cleanUp()
                exit(130)
            }
            source.resume()
            return source
        }
    }
}

let signalSources = Runner.installSignalHandlers()
let status = await Runner.main(Array(CommandLine.arguments.dropFirst()))
withExtendedLifetime(signalSources) {}
exit(status)
