import Foundation

/// A program from a Debian package that turns a text file into a picture (PlantUML, gnuplot): found
/// in `PATH`, or at the path an environment variable names; when missing, an error that names the
/// package to install rather than a failed spawn.
package struct ExternalRenderer: Sendable {
    /// The program's name, looked up in `PATH`.
    package var program: String
    /// The Debian package that installs it (scripts/install-deps installs it when missing).
    package var debianPackage: String
    /// An environment variable naming the program's path instead (tests point it at a missing file).
    package var environmentVariable: String

    /// PlantUML: `scripts/trace --svg` and `--html` (pulls in a Java runtime).
    package static let plantUML = ExternalRenderer(
        program: "plantuml", debianPackage: "plantuml", environmentVariable: "PLANTUML")
    /// gnuplot without X: the testers' and the bench's `--plot`.
    package static let gnuplot = ExternalRenderer(
        program: "gnuplot", debianPackage: "gnuplot-nox", environmentVariable: "GNUPLOT")

    /// The program's path: `environment[environmentVariable]` when set, else the first executable
    /// `program` in `environment["PATH"]`.
    package func locate(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(RendererError) -> String
    {
        let manager = FileManager.default
        if let given = environment[environmentVariable], !given.isEmpty {
            guard manager.isExecutableFile(atPath: given) else {
                throw .missing(
                    program: program, debianPackage: debianPackage, looked: "\(environmentVariable)=\(given)")
            }
            return given
        }
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if manager.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .missing(program: program, debianPackage: debianPackage, looked: "PATH")
    }

    /// Runs the program with `arguments` in `workingDirectory` to completion; anything but exit 0 is
    /// `RendererError.failed` with what it printed.
    package func run(_ arguments: [String], workingDirectory: String, scratch: String) async throws(RendererError)
        -> CompletedCommand
    {
        let path = try locate()
        let completed: CompletedCommand
        do {
            completed = try await ChildProcess.run(
                [path] + arguments, workingDirectory: workingDirectory, scratch: scratch)
        } catch {
            throw .failed(program: program, outcome: "could not run: \(error)", output: "")
        }
        guard completed.termination == .exited(0) else {
            throw .failed(
                program: program, outcome: "\(completed.termination)",
                output: (completed.standardError + completed.standardOutput).trimmingCharacters(
                    in: .whitespacesAndNewlines))
        }
        return completed
    }
}

/// Why a picture was not made: what a person reads, with what to do.
package enum RendererError: Error, Equatable, CustomStringConvertible {
    /// The program is not installed (or not where the environment variable says).
    case missing(program: String, debianPackage: String, looked: String)
    /// It ran and failed.
    case failed(program: String, outcome: String, output: String)

    package var description: String {
        switch self {
        case .missing(let program, let debianPackage, let looked):
            "\(program) not found (looked in \(looked)): install the Debian package \(debianPackage) "
                + "(scripts/install-deps installs it, or: apt-get install \(debianPackage))"
        case .failed(let program, let outcome, let output):
            "\(program) failed (\(outcome))" + (output.isEmpty ? "" : ":\n\(output)")
        }
    }
}

extension RendererError {
    /// Whether the program is missing (a CLI exits 69, unavailable, rather than 1).
    package var isMissing: Bool {
        if case .missing = self { return true }
        return false
    }
}
