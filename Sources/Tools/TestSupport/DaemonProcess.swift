import ChildProcesses
import Foundation
import Glibc

/// A child process a test started: its stdout is captured so the test can wait for a readiness
/// line (never a fixed sleep), and it is killed when the value goes away.
package final class DaemonProcess: Sendable {
    /// Why waiting on a child process failed.
    package enum Failure: Error, CustomStringConvertible {
        case timedOut(waitingFor: String, output: String)
        case exited(status: Int32, waitingFor: String, output: String)

        package var description: String {
            switch self {
            case .timedOut(let what, let output):
                return "timed out waiting for \(what); output so far:\n\(output)"
            case .exited(let status, let what, let output):
                return "process exited with \(status) while waiting for \(what); output:\n\(output)"
            }
        }
    }

    private let child: ChildProcess
    /// The executable's path, for messages.
    package let executable: String

    /// Starts `executable` with `arguments`; `environment` entries are added to (or override) the
    /// test's own environment.
    package init(executable: String, arguments: [String], environment: [String: String] = [:]) throws {
        self.executable = executable
        child = try ChildProcess(
            [executable] + arguments, environment: environment, standardOutput: .captured, standardError: .captured)
    }

    deinit {
        guard child.isRunning else { return }
        child.send(SIGKILL)
        // Bounded, never an unbounded wait: a SIGKILLed child is gone within milliseconds, and a
        // deinit that never returns would block a cooperative thread for good.
        _ = child.waitForExitBlocking(timeout: .seconds(5))
    }

    /// The process ID.
    package var pid: Int32 { child.pid }

    /// Everything the process printed on stdout so far.
    package var standardOutput: String { child.standardOutput }
    /// Everything the process printed on stderr so far.
    package var standardError: String { child.standardError }

    /// Whether the process is still running.
    package var isRunning: Bool { child.isRunning }

    /// Waits until a whole stdout line contains `text` and returns that line; fails if the process
    /// exits first or `timeout` passes (a guard against hangs, not a timing assertion).
    package func waitForLine(containing text: String, timeout: Duration = hangGuard) async throws -> String {
        try await poll(what: "a line containing \(text.debugDescription)", timeout: timeout) {
            let lines = self.standardOutput.split(separator: "\n", omittingEmptySubsequences: true)
            return lines.first { $0.contains(text) }.map(String.init)
        }
    }

    /// Sends `signal` (e.g. `SIGTERM`, `SIGKILL`).
    package func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for the process to exit and returns its status (the signal number if it was killed).
    package func waitForExit(timeout: Duration = hangGuard) async throws -> Int32 {
        guard let termination = try await child.waitForExit(timeout: timeout) else {
            throw Failure.timedOut(waitingFor: "exit", output: transcript)
        }
        return termination.status
    }

    private func poll<T>(what: String, timeout: Duration, _ check: @escaping () -> T?) async throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let value = check() { return value }
            if let termination = child.termination {
                // One more look once the pipes are drained: the line may have come just before the exit.
                _ = try await child.waitForOutputEnd(timeout: .seconds(1))
                if let value = check() { return value }
                throw Failure.exited(status: termination.status, waitingFor: what, output: transcript)
            }
            if clock.now >= deadline { throw Failure.timedOut(waitingFor: what, output: transcript) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private var transcript: String {
        "--- stdout ---\n\(standardOutput)\n--- stderr ---\n\(standardError)"
    }
}

/// Where the build put the project's executables: next to the test bundle that is running.
package enum BuildProducts {
    /// The directory holding the test bundle (and `phoned`, `watchd`, … once built).
    package static var directory: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().path
    }

    /// The absolute path of the built executable `name`.
    package static func executable(_ name: String) -> String {
        "\(directory)/\(name)"
    }
}

/// The project's source tree, found from this file's own path.
package enum SourceTree {
    /// The repository root: the nearest directory above this file that holds Package.swift (so it
    /// does not depend on how deep under Sources/ this module's folder sits).
    package static let root: String = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory.path
            }
            directory = directory.deletingLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath)")
    }()
}
