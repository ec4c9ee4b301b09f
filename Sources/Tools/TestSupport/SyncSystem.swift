import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import Synchronization

/// One phone/watch pair of the real daemons (`phoned`, `watchd`) for end-to-end tests, driven only
/// through the built binaries and their admin CLIs (`phonectl`, `watchctl`).
///
/// It owns a short temporary directory (Unix socket paths must stay under 108 bytes) holding a
/// pairing key (64 hex digits, mode 0600), both config files, the phone's document directory and
/// both state directories. The link port is fixed for the system's life (chosen with
/// `freeLoopbackPort()`), so a restarted phoned listens where watchd dials. Every daemon it starts
/// is a `DaemonProcess` kept here until the system goes away, so each is killed on teardown; the
/// logs of earlier instances stay readable after a restart.
package final class SyncSystem: Sendable {
    package let directory: TemporaryDirectory
    /// The link port phoned listens on and watchd dials.
    package let port: UInt16
    package let keyPath: String
    /// phoned's document directory (the iCloud-Drive-style folder).
    package let documentsDirectory: String
    package let phoneStateDirectory: String
    package let watchCacheDirectory: String
    package let watchStateDirectory: String
    package let phoneSocket: String
    package let watchSocket: String
    package let phonedConfigPath: String
    package let watchdConfigPath: String

    private struct State {
        var phoned: [DaemonProcess] = []
        var watchd: [DaemonProcess] = []
        var commands = 0
    }

    private let state = Mutex(State())

    /// Creates the directory, the key and both config files (written again by `writePhonedConfig` /
    /// `writeWatchdConfig` when a test wants other values). Nothing is started.
    package init(_ name: String = "e2e") throws {
        for tool in ["phoned", "watchd", "phonectl", "watchctl"] {
            let path = BuildProducts.executable(tool)
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw HarnessError(
                    "\(tool) is not built next to the test bundle (\(path)); run swift build --build-tests")
            }
        }
        directory = try TemporaryDirectory(String(name.prefix(12)))
        port = try freeLoopbackPort()
        keyPath = directory.appending("pairing.key")
        documentsDirectory = directory.appending("Documents")
        phoneStateDirectory = directory.appending("phone-state")
        watchCacheDirectory = directory.appending("watch-cache")
        watchStateDirectory = directory.appending("watch-state")
        phoneSocket = directory.appending("p.sock")
        watchSocket = directory.appending("w.sock")
        phonedConfigPath = directory.appending("phoned.json")
        watchdConfigPath = directory.appending("watchd.json")

        var random = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &random)) }.joined()
        try Data("\(key)\n".utf8).write(to: URL(fileURLWithPath: keyPath))
        guard chmod(keyPath, 0o600) == 0 else { throw HarnessError("chmod 600 \(keyPath) failed: errno \(errno)") }
        try writePhonedConfig()
        try writeWatchdConfig()
    }

    /// Kills every daemon and waits for it before the directory goes (stored properties are
    /// destroyed after this body, `directory` first): a daemon still running would keep writing
    /// into a directory being removed and leave it behind.
    deinit {
        let all = state.withLock { state in
            defer {
                state.phoned = []
                state.watchd = []
            }
            return state.phoned + state.watchd
        }
        for process in all { process.send(SIGKILL) }
        // Dropping `all` at the end of this scope runs each DaemonProcess's deinit, which waits for
        // the exit (unless a test still holds one, which then goes with the test).
    }

    // MARK: Configuration

    /// phoned's config: every key, from its declaration's default unless set here.
    package var phonedConfiguration: PhonedConfiguration {
        var configuration = PhonedConfiguration.defaults
        configuration.documentsDirectory = documentsDirectory
        configuration.stateDirectory = phoneStateDirectory
        configuration.listen = NetworkAddress(host: "127.0.0.1", port: port)
        configuration.pairingKeyFile = keyPath
        configuration.adminSocket = phoneSocket
        // Short beats, but many may be missed: a loaded 2-core machine must not fake a partition.
        // A killed peer is still seen at once (its socket closes).
        configuration.link.heartbeatInterval = .milliseconds(250)
        configuration.link.missedHeartbeats = 40
        return configuration
    }

    /// watchd's config: every key, from its declaration's default unless set here.
    package var watchdConfiguration: WatchdConfiguration {
        var configuration = WatchdConfiguration.defaults
        configuration.cacheDirectory = watchCacheDirectory
        configuration.stateDirectory = watchStateDirectory
        configuration.phoneAddress = NetworkAddress(host: "127.0.0.1", port: port)
        configuration.pairingKeyFile = keyPath
        configuration.adminSocket = watchSocket
        configuration.link.heartbeatInterval = .milliseconds(250)
        configuration.link.missedHeartbeats = 40
        configuration.redialMaximum = .milliseconds(200)
        return configuration
    }

    /// Writes phoned's config: the values above, with `changes` (raw JSON by key, so a test can
    /// write a wrong one) applied; nil removes a key.
    package func writePhonedConfig(_ changes: [String: String?] = [:]) throws {
        try Self.writeConfig(phonedConfiguration.entries, changes, to: phonedConfigPath)
    }

    /// Writes watchd's config: the values above, with `changes` applied (nil removes a key).
    package func writeWatchdConfig(_ changes: [String: String?] = [:]) throws {
        try Self.writeConfig(watchdConfiguration.entries, changes, to: watchdConfigPath)
    }

    /// A JSON string literal for `text`.
    package static func json(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    private static func writeConfig(_ base: [String: String], _ changes: [String: String?], to path: String) throws {
        var entries = base
        for (key, value) in changes { entries[key] = value }
        let body = entries.keys.sorted().map { "  \(json($0)): \(entries[$0]!)" }.joined(separator: ",\n")
        try Data("{\n\(body)\n}\n".utf8).write(to: URL(fileURLWithPath: path))
    }

    // MARK: Daemons

    /// The phoned instance started last, if any.
    package var phoned: DaemonProcess? { state.withLock { $0.phoned.last } }
    /// The watchd instance started last, if any.
    package var watchd: DaemonProcess? { state.withLock { $0.watchd.last } }

    /// Everything every phoned instance of this system logged (stderr), oldest first.
    package var phonedLog: String { state.withLock { $0.phoned.map(\.standardError).joined(separator: "\n") } }
    /// Everything every watchd instance of this system logged (stderr), oldest first.
    package var watchdLog: String { state.withLock { $0.watchd.map(\.standardError).joined(separator: "\n") } }

    /// Spawns phoned with the config file and returns at once (for tests of refused start-ups).
    package func spawnPhoned(environment: [String: String] = [:]) throws -> DaemonProcess {
        let process = try DaemonProcess(
            executable: BuildProducts.executable("phoned"), arguments: ["--config", phonedConfigPath],
            environment: environment)
        state.withLock { $0.phoned.append(process) }
        return process
    }

    /// Spawns watchd with the config file and returns at once.
    package func spawnWatchd(environment: [String: String] = [:]) throws -> DaemonProcess {
        let process = try DaemonProcess(
            executable: BuildProducts.executable("watchd"), arguments: ["--config", watchdConfigPath],
            environment: environment)
        state.withLock { $0.watchd.append(process) }
        return process
    }

    /// Starts phoned and waits for `phoned ready port=…`. Should the fixed port be held for a moment
    /// (another test's probe socket, a connection in TIME_WAIT without SO_REUSEADDR), it retries.
    @discardableResult
    package func startPhoned(environment: [String: String] = [:]) async throws -> DaemonProcess {
        var attempt = 0
        while true {
            attempt += 1
            let process = try spawnPhoned(environment: environment)
            do {
                _ = try await process.waitForLine(containing: "phoned ready port=", timeout: hangGuard)
                return process
            } catch DaemonProcess.Failure.exited(let status, let what, let output) {
                guard attempt < 20, process.standardError.lowercased().contains("in use") else {
                    throw DaemonProcess.Failure.exited(status: status, waitingFor: what, output: output)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Starts watchd and waits for `watchd ready …`.
    @discardableResult
    package func startWatchd(environment: [String: String] = [:]) async throws -> DaemonProcess {
        let process = try spawnWatchd(environment: environment)
        _ = try await process.waitForLine(containing: "watchd ready", timeout: hangGuard)
        return process
    }

    /// Starts both daemons and waits until each reports the other linked.
    package func startBoth() async throws {
        try await startPhoned()
        try await startWatchd()
        try await waitUntilLinked()
    }

    /// Waits until phonectl and watchctl both report the link up.
    package func waitUntilLinked() async throws {
        try await eventually("phoned and watchd report the link up") {
            let phone = try await self.phonectl("status", "--json")
            let watch = try await self.watchctl("status", "--json")
            return phone.exitCode == 0 && watch.exitCode == 0
                && phone.standardOutput.contains("\"linked\":true") && watch.standardOutput.contains("\"linked\":true")
        }
    }

    /// Sends SIGTERM to phoned and returns its exit status.
    @discardableResult
    package func stopPhoned() async throws -> Int32 {
        guard let process = phoned else { throw HarnessError("phoned was never started") }
        process.send(SIGTERM)
        return try await process.waitForExit(timeout: hangGuard)
    }

    /// Sends SIGTERM to watchd and returns its exit status.
    @discardableResult
    package func stopWatchd() async throws -> Int32 {
        guard let process = watchd else { throw HarnessError("watchd was never started") }
        process.send(SIGTERM)
        return try await process.waitForExit(timeout: hangGuard)
    }

    /// SIGKILLs phoned and waits until it is gone; returns its status (the signal number).
    @discardableResult
    package func killPhoned() async throws -> Int32 {
        guard let process = phoned else { throw HarnessError("phoned was never started") }
        process.send(SIGKILL)
        return try await process.waitForExit(timeout: hangGuard)
    }

    /// SIGKILLs watchd and waits until it is gone; returns its status (the signal number).
    @discardableResult
    package func killWatchd() async throws -> Int32 {
        guard let process = watchd else { throw HarnessError("watchd was never started") }
        process.send(SIGKILL)
        return try await process.waitForExit(timeout: hangGuard)
    }

    // MARK: CLIs

    /// Runs `phonectl --socket <phoned's socket> arguments…`.
    package func phonectl(_ arguments: String...) async throws -> CommandResult {
        try await phonectl(arguments)
    }

    package func phonectl(_ arguments: [String]) async throws -> CommandResult {
        try await run("phonectl", ["--socket", phoneSocket] + arguments)
    }

    /// Runs `watchctl --socket <watchd's socket> arguments…`.
    package func watchctl(_ arguments: String...) async throws -> CommandResult {
        try await watchctl(arguments)
    }

    package func watchctl(_ arguments: [String]) async throws -> CommandResult {
        try await run("watchctl", ["--socket", watchSocket] + arguments)
    }

    /// Runs a built tool (`phonectl`, `watchctl`, …) with exactly `arguments` and `environment` added,
    /// in `workingDirectory` when given.
    package func run(
        _ tool: String, _ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil
    ) async throws -> CommandResult {
        let number = state.withLock { state -> Int in
            state.commands += 1
            return state.commands
        }
        let scratch = directory.appending("cli-\(number)")
        return try await CommandResult.run(
            BuildProducts.executable(tool), arguments, environment: environment, workingDirectory: workingDirectory,
            scratch: scratch)
    }

    /// Like `phonectl`, but fails the caller unless the exit code is 0; returns stdout, trimmed.
    package func phone(_ arguments: String...) async throws -> String {
        try await phonectl(arguments).succeeded().trimmedOutput
    }

    /// Like `watchctl`, but fails the caller unless the exit code is 0; returns stdout, trimmed.
    package func watch(_ arguments: String...) async throws -> String {
        try await watchctl(arguments).succeeded().trimmedOutput
    }

    // MARK: Waiting

    /// Polls `condition` until it holds; after `timeout` (a hang guard, never a timing assertion)
    /// fails naming `what`, with the tail of every daemon's log.
    package func eventually(
        _ what: String, timeout: Duration = hangGuard, _ condition: () async throws -> Bool
    ) async throws {
        try await pollUntil(timeout: timeout, every: .milliseconds(50), condition) {
            HarnessError("timed out waiting until \(what)\n\(transcript)")
        }
    }

    /// The last lines of every daemon's output, for failure messages.
    package var transcript: String {
        state.withLock { state in
            (state.phoned + state.watchd).map { process in
                "--- \(URL(fileURLWithPath: process.executable).lastPathComponent) (pid \(process.pid), "
                    + "\(process.isRunning ? "running" : "exited")) stdout ---\n\(process.standardOutput.suffix(2000))\n"
                    + "--- stderr (last 6000 characters) ---\n\(process.standardError.suffix(6000))"
            }.joined(separator: "\n")
        }
    }

    // MARK: Files

    /// Every regular file under the document directory, as paths relative to it, sorted.
    package func documentFiles() -> [String] {
        let root = URL(fileURLWithPath: documentsDirectory)
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(root.path)/\(relative)", isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(relative)
            }
        }
        return files.sorted()
    }

    /// Writes `bytes` into the document directory at `relative` the way a sync client would: to a
    /// temporary file outside the directory, then renamed into place (one complete file appears).
    package func dropDocument(_ bytes: [UInt8], at relative: String) throws {
        let target = "\(documentsDirectory)/\(relative)"
        try FileManager.default.createDirectory(
            atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let staging = directory.appending("staging-\(UUID().uuidString)")
        try Data(bytes).write(to: URL(fileURLWithPath: staging))
        guard rename(staging, target) == 0 else { throw HarnessError("rename to \(target) failed: errno \(errno)") }
    }
}
