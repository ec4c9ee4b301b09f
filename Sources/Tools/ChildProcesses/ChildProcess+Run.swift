import Foundation
import Glibc

/// A program run to completion: how it ended and what it printed.
package struct CompletedCommand: Sendable {
    package var termination: Termination
    package var standardOutput: String
    package var standardError: String
}

extension ChildProcess {
    /// Runs `arguments` to completion (in `workingDirectory` when given), waiting without blocking a
    /// thread, and returns what it printed.
    ///
    /// stdout and stderr go to the files `<scratch>.out` and `<scratch>.err`, read and removed once
    /// it exits: a file cannot fill up and block the program, and needs no reader thread. After
    /// `timeout` it is killed with SIGKILL (and reported as killed by that signal); without one it may
    /// run for ever. Should the task be cancelled, the program is killed and reaped first.
    package static func run(
        _ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil, scratch: String,
        timeout: Duration? = nil
    ) async throws -> CompletedCommand {
        let outPath = scratch + ".out"
        let errPath = scratch + ".err"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let child = try ChildProcess(
            arguments, environment: environment, workingDirectory: workingDirectory,
            standardOutput: .file(outPath, append: false),
            standardError: .file(errPath, append: false))
        let termination: Termination
        do {
            if let timeout, try await child.waitForExit(timeout: timeout) == nil {
                child.send(SIGKILL)
            }
            termination = try await child.waitForExit()
        } catch {
            child.send(SIGKILL)
            _ = child.waitForExitBlocking(timeout: .seconds(5))
            throw error
        }
        return CompletedCommand(
            termination: termination, standardOutput: readText(outPath), standardError: readText(errPath))
    }

    /// A whole file as text, invalid UTF-8 repaired ("" when missing).
    package static func readText(_ path: String) -> String {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
