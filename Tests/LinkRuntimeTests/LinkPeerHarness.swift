import Foundation
import Glibc
import TestSupport
import Testing

/// One phone/watch pair of real `linkpeer` processes sharing a pairing key, each with its own state
/// directory, for the link's process-level tests. Every child is a `DaemonProcess`, killed when the
/// test lets go of it; the directory goes with the harness.
final class LinkPeerHarness: Sendable {
    let directory: TemporaryDirectory
    let keyPath: String
    let phoneState: String
    let watchState: String
    /// Where the phone records every transfer it applies (`--applied`).
    let appliedPath: String
    let executable: String

    init(_ name: String) throws {
        executable = BuildProducts.executable("linkpeer")
        try #require(
            FileManager.default.isExecutableFile(atPath: executable),
            "linkpeer is not built next to the test bundle (\(executable)); run swift build --build-tests")
        directory = try TemporaryDirectory(name)
        keyPath = directory.appending("pairing.key")
        phoneState = directory.appending("phone")
        watchState = directory.appending("watch")
        appliedPath = directory.appending("applied.txt")
        var random = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &random)) }.joined()
        try Data("\(key)\n".utf8).write(to: URL(fileURLWithPath: keyPath))
        try #require(chmod(keyPath, 0o600) == 0)
    }

    /// Starts the phone listening on `port` (0: any) and waits for its readiness line; returns the
    /// process and the port it bound. A restart names the port the watch dials; should something
    /// else hold it for a moment (a stray client socket), the start is retried.
    func startPhone(port: UInt16 = 0, extra: [String] = []) async throws -> (DaemonProcess, UInt16) {
        let arguments =
            ["--role", "phone", "--state", phoneState, "--key", keyPath, "--listen", "127.0.0.1:\(port)"]
            + ["--applied", appliedPath] + extra
        var attempt = 0
        while true {
            attempt += 1
            let phone = try DaemonProcess(executable: executable, arguments: arguments)
            do {
                let ready = try await phone.waitForLine(containing: "ready role=phone", timeout: hangGuard)
                return (phone, try Self.port(in: ready))
            } catch DaemonProcess.Failure.exited(let status, let what, let output) {
                guard attempt < 20, phone.standardError.contains("in use") else {
                    throw DaemonProcess.Failure.exited(status: status, waitingFor: what, output: output)
                }
                try await Task.sleep(for: .milliseconds(100))  // let the other holder go, then bind again
            }
        }
    }

    /// Starts the watch dialling the phone's `port` and waits for its readiness line.
    func startWatch(port: UInt16, enqueue: Int = 0) async throws -> DaemonProcess {
        let watch = try DaemonProcess(
            executable: executable,
            arguments: [
                "--role", "watch", "--state", watchState, "--key", keyPath, "--connect", "127.0.0.1:\(port)",
                "--enqueue", "\(enqueue)",
            ])
        _ = try await watch.waitForLine(containing: "ready role=watch", timeout: hangGuard)
        return watch
    }

    /// Links the watch to the running phone once, so both are activated (a never-linked watch
    /// refuses to enqueue), then stops the watch with SIGTERM.
    func linkOnce(phone: DaemonProcess, port: UInt16) async throws {
        let watch = try await startWatch(port: port)
        _ = try await watch.waitForLine(containing: "linked peer=", timeout: hangGuard)
        _ = try await phone.waitForLine(containing: "linked peer=", timeout: hangGuard)
        watch.send(SIGTERM)
        #expect(try await watch.waitForExit(timeout: hangGuard) == 0)
    }

    /// Kills `process` with SIGKILL and waits until it is gone.
    func kill9(_ process: DaemonProcess) async throws {
        process.send(SIGKILL)
        #expect(try await process.waitForExit(timeout: hangGuard) == SIGKILL)
    }

    /// The applied file's whole lines, parsed.
    func applied() throws -> [AppliedTransfer] {
        guard FileManager.default.fileExists(atPath: appliedPath) else { return [] }
        let text = try String(contentsOfFile: appliedPath, encoding: .utf8)
        // Only lines ending in a newline: a line being appended right now is not counted yet.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return try lines.map { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            let sequence = try #require(fields.count == 3 ? UInt64(fields[1]) : nil, "bad applied line \(line)")
            return AppliedTransfer(queue: String(fields[0]), sequence: sequence, payload: String(fields[2]))
        }
    }

    /// Waits until `condition` holds, polling; fails with `what` and the children's output after
    /// the hang guard.
    func waitUntil(
        _ what: String, watching processes: [DaemonProcess] = [], _ condition: () throws -> Bool
    ) async throws {
        try await pollUntil(timeout: hangGuard, every: .milliseconds(20), condition) {
            TimedOut(
                what: what,
                outputs: processes.map {
                    "--- \($0.executable) (pid \($0.pid)) stdout, last 3000 characters ---\n"
                        + "\($0.standardOutput.suffix(3000))\n--- stderr ---\n\($0.standardError)"
                })
        }
    }

    /// `waitUntil` gave up: what it waited for and what the children printed.
    struct TimedOut: Error, CustomStringConvertible {
        var what: String
        var outputs: [String]

        var description: String { "timed out waiting until \(what)\n\(outputs.joined(separator: "\n"))" }
    }

    /// The sequences a process reported in lines starting with `prefix` (e.g. "enqueued seq=").
    static func sequences(after prefix: String, in output: String) -> [UInt64] {
        completeLines(output).compactMap { line in
            guard line.hasPrefix(prefix) else { return nil }
            return UInt64(line.dropFirst(prefix.count).prefix { $0.isNumber })
        }
    }

    /// Whole stdout lines equal to `line`.
    static func count(ofLine line: String, in output: String) -> Int {
        completeLines(output).lazy.filter { $0 == line }.count
    }

    /// The lines of `output` that end in a newline (a pipe read may stop mid-line).
    static func completeLines(_ output: String) -> [Substring] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines.filter { !$0.isEmpty }
    }

    private static func port(in readyLine: String) throws -> UInt16 {
        let field = readyLine.split(separator: " ").first { $0.hasPrefix("port=") }
        return try #require(field.flatMap { UInt16($0.dropFirst("port=".count)) }, "no port in \(readyLine)")
    }
}

/// One line of the phone's applied file: `<queue> <seq> <payload>`.
struct AppliedTransfer: Equatable, Sendable, CustomStringConvertible {
    var queue: String
    var sequence: UInt64
    var payload: String

    var description: String { "\(queue.prefix(8))… \(sequence) \(payload)" }
}
