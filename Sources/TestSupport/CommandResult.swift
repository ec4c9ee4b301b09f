import Foundation
import Glibc
import Synchronization

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

    /// Runs `executable` to completion with stdout and stderr in files (no pipe can fill up), waiting
    /// without blocking a thread.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], scratch: String
    ) async throws -> CommandResult {
        let outPath = "\(scratch).out"
        let errPath = "\(scratch).err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try ProcessLaunch.serialized { try process.run() }
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try out.close()
        try err.close()
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
        return CommandResult(
            command: [URL(fileURLWithPath: executable).lastPathComponent] + arguments, exitCode: status,
            standardOutput: stdout, standardError: stderr)
    }
}

/// A harness failure with a message for the test report.
package struct HarnessError: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// Foundation's `Process.run()` on Linux is not safe to call from several threads at once (the
/// parallel test runner's spawns crashed in its memcpy now and then): every launch of the harness
/// takes this lock. A launch is quick; the processes still run side by side.
package enum ProcessLaunch {
    private static let lock = NSLock()

    package static func serialized<T>(_ launch: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try launch()
    }
}
