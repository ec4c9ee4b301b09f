import ChildProcesses
import DaemonRuntime
import Foundation
import Glibc
import Synchronization

/// Everything the tester started that must not outlive it: daemons and network namespaces.
///
/// A SIGINT/SIGTERM handler and the normal exit path both call `cleanUp()`, which kills every
/// registered daemon (each by its own pid, never once reaped) and deletes every registered
/// namespace. Pids are also written to `<work>/pids/<name>.pid` so the wrapping script's trap can
/// finish the job if the tester itself is killed with SIGKILL.
final class CleanupRegistry: Sendable {
    static let shared = CleanupRegistry()

    private struct State {
        var daemons: [pid_t: ChildProcess] = [:]
        var namespaces: [String] = []
    }

    private let state = Mutex(State())

    func register(_ daemon: ChildProcess) { state.withLock { $0.daemons[daemon.pid] = daemon } }
    func forget(pid: pid_t) { state.withLock { _ = $0.daemons.removeValue(forKey: pid) } }
    func register(namespace: String) { state.withLock { $0.namespaces.append(namespace) } }
    func forget(namespace: String) { state.withLock { $0.namespaces.removeAll { $0 == namespace } } }

    /// Kills what is left (synchronously: it may run from a signal handler's queue) and deletes the
    /// namespaces. Safe to call more than once.
    func cleanUp() {
        let (daemons, namespaces) = state.withLock { state in
            defer { state = State() }
            return (Array(state.daemons.values), state.namespaces)
        }
        for daemon in daemons {
            daemon.send(SIGKILL)
            _ = daemon.waitForExitBlocking(timeout: .seconds(10))
        }
        for namespace in namespaces {
            let deletion = try? ChildProcess(["ip", "netns", "delete", namespace])
            _ = deletion?.waitForExitBlocking(timeout: .seconds(10))
        }
    }
}

/// Why a daemon could not be (re)started.
struct DaemonError: Error, CustomStringConvertible {
    var description: String
}

/// One daemon the tester runs, kills with SIGKILL and restarts, its stdout and stderr appended to
/// the same two files across every incarnation (a `# chaostest: …` line marks each start).
actor ManagedDaemon {
    /// `phoned` or `watchd`.
    let name: String
    /// The command line (possibly `ip netns exec NS …` in front of the binary).
    let argv: [String]
    let stdoutPath: String
    let stderrPath: String
    private let pidPath: String
    private let readyText: String

    /// The running incarnation.
    private var process: ChildProcess?
    /// How many times it was started.
    private(set) var starts = 0
    /// How many times it was killed.
    private(set) var kills = 0

    init(name: String, argv: [String], logDirectory: String, pidDirectory: String, readyText: String) {
        self.name = name
        self.argv = argv
        stdoutPath = "\(logDirectory)/\(name).stdout.log"
        stderrPath = "\(logDirectory)/\(name).log"
        pidPath = "\(pidDirectory)/\(name).pid"
        self.readyText = readyText
    }

    /// Whether an incarnation is running (started and not yet seen to exit).
    var isRunning: Bool { process != nil }

    /// Starts a new incarnation and waits for its readiness line.
    func start(timeout: Duration = .seconds(30)) async throws {
        guard process == nil else { return }
        starts += 1
        let marker = "# chaostest: start #\(starts) of \(name) at \(Logger.timestamp(Logger.systemWallClock()))\n"
        append(marker, to: stdoutPath)
        append(marker, to: stderrPath)
        let offset = fileSize(stdoutPath)
        let pidPath = self.pidPath
        let spawned: ChildProcess
        do {
            // The pid file goes before the pid is reaped, so the script's trap never kills a reused pid.
            spawned = try ChildProcess(
                argv, standardOutput: .file(stdoutPath, append: true), standardError: .file(stderrPath, append: true),
                onExit: { unlink(pidPath) })
        } catch {
            throw DaemonError(description: error.description)
        }
        process = spawned
        CleanupRegistry.shared.register(spawned)
        try? "\(spawned.pid)\n".write(toFile: pidPath, atomically: true, encoding: .utf8)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if readLine(after: offset, containing: readyText) { return }
            if let termination = spawned.termination {
                forgetProcess()
                throw DaemonError(
                    description: "\(name) exited with status \(termination.shellStatus) before it was ready; "
                        + "last log lines:\n" + tail(stderrPath, lines: 15))
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        throw DaemonError(description: "\(name) printed no \"\(readyText)\" line within \(timeout)")
    }

    /// SIGKILL, then waits until the process is reaped. Returns false if it was not running.
    @discardableResult
    func kill9() async -> Bool {
        guard let process else { return false }
        process.send(SIGKILL)
        await waitForExit(process)
        kills += 1
        return true
    }

    /// SIGTERM (graceful), waiting up to 10 s before falling back to SIGKILL.
    func stop() async {
        guard let process else { return }
        process.send(SIGTERM)
        if (try? await process.waitForExit(timeout: .seconds(10))) == nil {
            process.send(SIGKILL)
        }
        await waitForExit(process)
    }

    /// Whether the daemon died on its own (it was running and is no longer): its status, and the
    /// incarnation is forgotten.
    func exitedUnexpectedly() -> Int32? {
        guard let termination = process?.termination else { return nil }
        forgetProcess()
        return termination.shellStatus
    }

    /// Waits for a process already sent SIGKILL to be reaped, then forgets it. (Cancelled, it
    /// forgets it at once: the process dies all the same, and stays a zombie until the tester exits.)
    private func waitForExit(_ process: ChildProcess) async {
        _ = try? await process.waitForExit()
        forgetProcess()
    }

    private func forgetProcess() {
        if let process { CleanupRegistry.shared.forget(pid: process.pid) }
        process = nil
    }

    private func readLine(after offset: Int, containing text: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: stdoutPath) else { return false }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").contains { $0.contains(text) }
    }
}

/// Appends text to a file, creating it.
func append(_ text: String, to path: String) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// The last `lines` lines of a text file.
func tail(_ path: String, lines: Int) -> String {
    ChildProcess.readText(path).split(separator: "\n").suffix(lines).joined(separator: "\n")
}
