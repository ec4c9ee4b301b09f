import ChildProcesses
import Foundation
import Glibc
import Synchronization

/// What a finished command produced.
struct CommandResult: Sendable {
    /// The exit status, or 128 + the signal number when a signal ended it; -1 when it could not start
    /// (or the tester was interrupted while it ran).
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// stdout and stderr, trimmed, for messages.
    var transcript: String {
        [standardOutput, standardError].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }.joined(separator: " | ")
    }
}

/// The tester's shorthand for running programs through the shared launcher (`ChildProcess`).
enum Subprocess {
    /// Runs a command to completion (argv[0] looked up in `PATH` unless it contains a slash),
    /// killing it after `timeout`. Its output goes through two scratch files under `scratch`
    /// (removed afterwards).
    static func run(_ argv: [String], scratch: String, timeout: Duration = .seconds(30)) async -> CommandResult {
        do {
            let completed = try await ChildProcess.run(
                argv, scratch: "\(scratch)/\(ScratchCounter.shared.next())", timeout: timeout)
            return CommandResult(
                status: completed.termination.shellStatus, standardOutput: completed.standardOutput,
                standardError: completed.standardError)
        } catch {
            return CommandResult(status: -1, standardOutput: "", standardError: "\(error)")
        }
    }

    /// Runs a command and returns whether it exited 0 (its output is dropped).
    @discardableResult
    static func succeeds(_ argv: [String], scratch: String) async -> Bool {
        await run(argv, scratch: scratch).status == 0
    }

    /// Whether an executable named `name` is on `PATH` (or is a path to an executable).
    static func isAvailable(_ name: String) -> Bool {
        if name.contains("/") { return access(name, X_OK) == 0 }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
    }
}

/// Unique names for scratch files.
final class ScratchCounter: Sendable {
    static let shared = ScratchCounter()
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

extension Duration {
    /// Seconds as a `Double`.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
