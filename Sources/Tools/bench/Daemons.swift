import AdminClient
import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import TestSupport

/// One daemon's files in the scratch directory: config, key, state, admin socket, log.
struct DaemonFiles {
    var root: String
    var config: String { "\(root)/config.json" }
    var state: String { "\(root)/state" }
    var admin: String { "\(root)/admin.sock" }
    var log: String { "\(root)/daemon.log" }
}

/// Writes the configs both daemons need for one pairing (a fresh key, mode 0600).
enum DaemonConfig {
    static func pairingKey(at path: String) throws {
        let hex = randomBytes(32).map { String(format: "%02x", $0) }.joined()
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data("\(hex)\n".utf8), attributes: [.posixPermissions: 0o600])
        else { throw BenchError("cannot write \(path)") }
        chmod(path, 0o600)
    }

    /// `--journal-off`: both daemons run with `journalMaximumBytes` 0 (docs/TRACE.md's cost figure).
    nonisolated(unsafe) static var journalOff = false

    /// `heartbeatEvery` shortens the heartbeat (figure 10) and keeps the silence limit at the
    /// default 2 s by raising `missedHeartbeats` to match.
    static func writePhoned(
        _ files: DaemonFiles, documents: String, key: String, port: UInt16, heartbeatEvery: Duration? = nil
    ) throws {
        var configuration = PhonedConfiguration.defaults
        if journalOff { configuration.link.journalMaximumBytes = 0 }
        if let heartbeatEvery { configuration.link.beat(every: heartbeatEvery) }
        configuration.documentsDirectory = documents
        configuration.stateDirectory = files.state
        configuration.listen = NetworkAddress(host: "127.0.0.1", port: port)
        configuration.pairingKeyFile = key
        configuration.adminSocket = files.admin
        try write(configuration.fileText, files)
    }

    /// `redialMaximumMilliseconds` is 50 so a watch waiting for a restarted phone reconnects within
    /// 50 ms of its listener coming up (the default 1 s cap would add up to a second to the drain).
    static func writeWatchd(
        _ files: DaemonFiles, cache: String, key: String, port: UInt16, heartbeatEvery: Duration? = nil
    ) throws {
        var configuration = WatchdConfiguration.defaults
        if journalOff { configuration.link.journalMaximumBytes = 0 }
        if let heartbeatEvery { configuration.link.beat(every: heartbeatEvery) }
        configuration.cacheDirectory = cache
        configuration.stateDirectory = files.state
        configuration.phoneAddress = NetworkAddress(host: "127.0.0.1", port: port)
        configuration.pairingKeyFile = key
        configuration.adminSocket = files.admin
        configuration.redialMaximum = .milliseconds(50)
        try write(configuration.fileText, files)
    }

    private static func write(_ text: String, _ files: DaemonFiles) throws {
        try FileManager.default.createDirectory(atPath: files.root, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: files.config))
    }
}

/// A running daemon: spawned with its config, stdout read on a thread so the readiness line is
/// timestamped when it arrives (not polled), stderr appended to its log file.
final class RunningDaemon: @unchecked Sendable {
    // @unchecked: `readyAt` and `output` are written by the reader thread before `ready` is signalled
    // (or under `lock`), and read after.
    let name: String
    let files: DaemonFiles
    let process = Process()
    let spawnedAt: Double
    private let ready = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var readyAt: Double?
    private var output = ""

    /// Spawns `executable --config files.config`; `spawnedAt` is taken just before the spawn.
    init(name: String, executable: String, files: DaemonFiles) throws {
        self.name = name
        self.files = files
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--config", files.config]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardInput = FileHandle.nullDevice
        if !FileManager.default.fileExists(atPath: files.log) {
            _ = FileManager.default.createFile(atPath: files.log, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: files.log))
        log.seekToEndOfFile()
        process.standardError = log
        let reader = stdout.fileHandleForReading.fileDescriptor
        spawnedAt = monotonicSeconds()
        try process.run()
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var signalled = false
            while true {
                let got = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if got <= 0 { break }
                let now = monotonicSeconds()
                let text = String(decoding: buffer[0..<got], as: UTF8.self)
                let becameReady = lock.withLock {
                    output += text
                    guard !signalled, output.contains(" ready ") else { return false }
                    readyAt = now
                    return true
                }
                if becameReady {
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
        }.start()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits for the readiness line; returns seconds from spawn to its arrival.
    @discardableResult
    func waitUntilReady(timeout: Double = 600) throws -> Double {
        guard ready.wait(timeout: .now() + timeout) == .success, let at = lock.withLock({ readyAt }) else {
            let log = (try? String(contentsOfFile: files.log, encoding: .utf8)) ?? ""
            throw BenchError(
                "\(name) did not become ready; stdout: \(lock.withLock { output }); log tail: \(log.suffix(2000))")
        }
        return at - spawnedAt
    }

    /// Resident and peak resident memory in bytes, from /proc/PID/status (VmRSS, VmHWM).
    func memory() throws -> (rss: Double, peak: Double) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else {
                return .nan
            }
            let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap {
                Double($0)
            }
            return (kib ?? .nan) * 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// CPU seconds the process has used so far, all its threads (those ended too), from
    /// /proc/PID/stat (utime + stime, in clock ticks).
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The fields after the command name, which is in parentheses and may hold anything.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the line; 12 and 13 after the name.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM, then waits for the exit (SIGKILL after 10 s).
    func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = monotonicSeconds() + 10
        while process.isRunning, monotonicSeconds() < deadline { usleep(2_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The admin socket, in-process: one request per call, no CLI process spawned.
enum Admin {
    @discardableResult
    static func send(_ socket: String, _ command: some AdminCommand) throws -> AdminResponse {
        let response = try AdminClient.send(path: socket, command: command)
        guard response.status == .ok else { throw BenchError("\(command) refused: \(response.message ?? "?")") }
        return response
    }

    /// `status --json` as a dictionary, from either daemon (both spell `status` alike on the wire).
    static func status(_ socket: String) throws -> [String: Any] {
        try json(send(socket, PhoneCommand.status))
    }

    static func json(_ response: AdminResponse) throws -> [String: Any] {
        guard let text = response.json,
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { throw BenchError("no JSON in the admin response") }
        return object
    }

    /// Polls `condition` on the daemon's status until it holds; throws after `timeout` seconds.
    static func waitFor(
        _ socket: String, timeout: Double = 120, pause: useconds_t = 1_000, _ what: String,
        _ condition: ([String: Any]) -> Bool
    ) throws {
        let deadline = monotonicSeconds() + timeout
        while true {
            if let status = try? status(socket), condition(status) { return }
            if monotonicSeconds() > deadline { throw BenchError("timed out waiting for \(what)") }
            usleep(pause)
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    func int(_ key: String) -> Int { (self[key] as? NSNumber)?.intValue ?? (self[key] as? Int) ?? -1 }
    func bool(_ key: String) -> Bool { (self[key] as? NSNumber)?.boolValue ?? (self[key] as? Bool) ?? false }
}

/// A linked phoned + watchd pair in the scratch directory.
final class DaemonPair {
    let root: String
    let phone: DaemonFiles
    let watch: DaemonFiles
    let documents: String
    let cache: String
    let port: UInt16
    let binaries: String
    var phoned: RunningDaemon?
    var watchd: RunningDaemon?

    init(root: String, binaries: String, documents: String? = nil) throws {
        self.root = root
        self.binaries = binaries
        phone = DaemonFiles(root: "\(root)/phone")
        watch = DaemonFiles(root: "\(root)/watch")
        self.documents = documents ?? "\(root)/phone/Documents"
        cache = "\(root)/watch/cache"
        port = try freeLoopbackPort()
        let key = "\(root)/pairing.key"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try DaemonConfig.pairingKey(at: key)
        try DaemonConfig.writePhoned(phone, documents: self.documents, key: key, port: port)
        try DaemonConfig.writeWatchd(watch, cache: cache, key: key, port: port)
    }

    @discardableResult
    func startPhoned() throws -> RunningDaemon {
        let daemon = try RunningDaemon(name: "phoned", executable: "\(binaries)/phoned", files: phone)
        phoned = daemon
        return daemon
    }

    @discardableResult
    func startWatchd() throws -> RunningDaemon {
        let daemon = try RunningDaemon(name: "watchd", executable: "\(binaries)/watchd", files: watch)
        watchd = daemon
        return daemon
    }

    /// Waits until both sides report the link up.
    func waitUntilLinked(timeout: Double = 60) throws {
        try Admin.waitFor(phone.admin, timeout: timeout, "phoned linked") { $0.bool("linked") }
        try Admin.waitFor(watch.admin, timeout: timeout, "watchd linked") { $0.bool("linked") }
    }

    func stop() {
        watchd?.stop()
        phoned?.stop()
        watchd = nil
        phoned = nil
    }

    deinit { stop() }
}

extension LinkSettings {
    /// Heartbeats every `interval`, the silence limit (interval × missed) unchanged.
    mutating func beat(every interval: Duration) {
        let silence = heartbeatInterval * missedHeartbeats
        heartbeatInterval = interval
        missedHeartbeats = max(1, Int((silence / interval).rounded()))
    }
}
