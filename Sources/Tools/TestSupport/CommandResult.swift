import ChildProcesses
import Foundation

/// What a CLI run produced.
package struct CommandResult: Sendable, CustomStringConvertible {
    package var command: [String]
    package var exitCode: Int32
    package var standardOutput: String
    package var standardError: String

    /// stdout without surrounding whitespace.
    package var trimmedOutput: String { standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) }

    package var description: String {
        "\(command.joined(separator: " ")) → exit \(exitCode)\n--- stdout ---\n\(standardOutput)--- stderr ---\n\(standardError)"
    }

    /// Self, or an error describing the run unless it exited 0.
    package func succeeded() throws -> CommandResult {
        guard exitCode == 0 else { throw HarnessError("command failed: \(self)") }
        return self
    }

    /// stdout decoded as JSON (after checking the exit code is 0).
    package func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let output = try succeeded().standardOutput
        do {
            return try JSONDecoder().decode(T.self, from: Data(output.utf8))
        } catch {
            throw HarnessError("\(command.joined(separator: " ")): stdout is not a \(T.self): \(error)\n\(output)")
        }
    }

    /// Runs `executable` to completion with stdout and stderr in the files `<scratch>.out` and
    /// `<scratch>.err` (no pipe can fill up), waiting without blocking a thread.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        workingDirectory: String? = nil, scratch: String
    ) async throws -> CommandResult {
        let completed = try await ChildProcess.run(
            [executable] + arguments, environment: environment, workingDirectory: workingDirectory, scratch: scratch)
        return CommandResult(
            command: [URL(fileURLWithPath: executable).lastPathComponent] + arguments,
            exitCode: completed.termination.status, standardOutput: completed.standardOutput,
            standardError: completed.standardError)
    }
}

/// A harness failure with a message for the test report.
package struct HarnessError: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
