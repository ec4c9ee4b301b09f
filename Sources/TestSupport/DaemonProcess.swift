import Foundation
import Synchronization

/// A child process a test started: its stdout is captured line by line so the test can wait for a
/// readiness line (never a fixed sleep), and it is killed when the value goes away.
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

    private struct Output {
        var stdout = ""
        var stderr = ""
    }

    /// Shared with the pipes' readability handlers, which append from Foundation's reader threads
    /// (hence the Mutex).
    private final class OutputBuffer: Sendable {
        let text = Mutex(Output())
    }

    private let process: Process
    private let buffer = OutputBuffer()
    /// The executable's path, for messages.
    package let executable: String

    /// Starts `executable` with `arguments`; `environment` entries are added to (or override) the
    /// test's own environment.
    package init(executable: String, arguments: [String], environment: [String: String] = [:]) throws {
        self.executable = executable
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        stdoutPipe.fileHandleForReading.readabilityHandler = { [buffer] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            buffer.text.withLock { $0.stdout += text }
        }
        stderrPipe.fileHandleForReading.readabilityHandler = { [buffer] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            buffer.text.withLock { $0.stderr += text }
        }
        try ProcessLaunch.serialized { try process.run() }
    }

    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        // Not `waitUntilExit()`: it hung the whole test run once, blocking a cooperative thread for
        // good when Foundation missed the child's exit. A SIGKILLed child is gone within milliseconds,
        // so poll for a bounded while (5 s) instead.
        var waited = 0
        while process.isRunning && waited < 5_000 {
            usleep(1_000)
            waited += 1
        }
    }

    /// The process ID.
    package var pid: Int32 { process.processIdentifier }

    /// Everything the process printed on stdout so far.
    package var standardOutput: String { buffer.text.withLock { $0.stdout } }
    /// Everything the process printed on stderr so far.
    package var standardError: String { buffer.text.withLock { $0.stderr } }

    /// Whether the process is still running.
    package var isRunning: Bool { process.isRunning }

    /// Waits until a whole stdout line contains `text` and returns that line; fails if the process
    /// exits first or `timeout` passes (a guard against hangs, not a timing assertion).
    package func waitForLine(containing text: String, timeout: Duration = .seconds(30)) async throws -> String {
        try await poll(what: "a line containing \(text.debugDescription)", timeout: timeout) {
            let lines = self.standardOutput.split(separator: "\n", omittingEmptySubsequences: true)
            return lines.first { $0.contains(text) }.map(String.init)
        }
    }

    /// Sends `signal` (e.g. `SIGTERM`, `SIGKILL`).
    package func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to exit and returns its status (the signal number if it was killed).
    package func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await poll(what: "exit", timeout: timeout, allowExit: true) {
            self.process.isRunning ? nil : self.process.terminationStatus
        }
    }

    private func poll<T>(
        what: String, timeout: Duration, allowExit: Bool = false, _ check: @escaping () -> T?
    ) async throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let value = check() { return value }
            if !allowExit, !process.isRunning {
                // One more look: the line may have arrived just before the exit.
                try await Task.sleep(for: .milliseconds(50))
                if let value = check() { return value }
                throw Failure.exited(status: process.terminationStatus, waitingFor: what, output: transcript)
            }
            if clock.now >= deadline { throw Failure.timedOut(waitingFor: what, output: transcript) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private var transcript: String {
        buffer.text.withLock { "--- stdout ---\n\($0.stdout)\n--- stderr ---\n\($0.stderr)" }
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
    /// The repository root (the directory holding Package.swift).
    package static var root: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}
