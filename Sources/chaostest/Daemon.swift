import DaemonRuntime
import Foundation
import Glibc
import Synchronization

/// Everything the tester started that must not outlive it: daemon pids and network namespaces.
///
/// A SIGINT/SIGTERM handler and the normal exit path both call `cleanUp()`, which kills every
/// registered pid (each by its own id) and deletes every registered namespace. Pids are also written
/// to `<work>/pids/<name>.pid` so the wrapping script's trap can finish the job if the tester itself
/// is killed with SIGKILL.
final class CleanupRegistry: Sendable {
    static let shared = CleanupRegistry()

    private struct State {
        var pids: [pid_t: String] = [:]
        var namespaces: [String] = []
    }

    private let state = Mutex(State())

    func register(pid: pid_t, name: String) { state.withLock { $0.pids[pid] = name } }
    func forget(pid: pid_t) { state.withLock { _ = $0.pids.removeValue(forKey: pid) } }
    func register(namespace: String) { state.withLock { $0.namespaces.append(namespace) } }
    func forget(namespace: String) { state.withLock { $0.namespaces.removeAll { $0 == namespace } } }

    /// Kills what is left (synchronously: it may run from a signal handler's queue) and deletes the
    /// namespaces. Safe to call more than once.
    func cleanUp() {
        let (pids, namespaces) = state.withLock { state in
            defer { state = State() }
            return (Array(state.pids.keys), state.namespaces)
        }
        for pid in pids {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        for namespace in namespaces {
            if let pid = try? Subprocess.spawn(
                ["ip", "netns", "delete", namespace], stdout: "/dev/null", stderr: "/dev/null", append: true)
            {
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
            }
        }
    }
}

/// Set once an incarnation's exit has been seen (a task's completion cannot be polled directly).
final class ExitFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
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

    private var pid: pid_t?
    private var exitTask: Task<Int32, Never>?
    private var exitFlag = ExitFlag()
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
    var isRunning: Bool { pid != nil }

    /// Starts a new incarnation and waits for its readiness line.
    func start(timeout: Duration = .seconds(30)) async throws {
        guard pid == nil else { return }
        starts += 1
        let marker = "# chaostest: start #\(starts) of \(name) at \(Logger.timestamp(Logger.systemWallClock()))\n"
        append(marker, to: stdoutPath)
        append(marker, to: stderrPath)
        let offset = fileSize(stdoutPath)
        let spawned: pid_t
        do {
            spawned = try Subprocess.spawn(argv, stdout: stdoutPath, stderr: stderrPath, append: true)
        } catch {
            throw DaemonError(description: error.description)
        }
        pid = spawned
        CleanupRegistry.shared.register(pid: spawned, name: name)
        try? "\(spawned)\n".write(toFile: pidPath, atomically: true, encoding: .utf8)
        let pidPath = self.pidPath
        let flag = ExitFlag()
        let task = Task.detached {
            let status = await Subprocess.waitForExit(spawned) {
                CleanupRegistry.shared.forget(pid: spawned)
                unlink(pidPath)
            }
            flag.set()
            return status
        }
        exitTask = task
        exitFlag = flag
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if readLine(after: offset, containing: readyText) { return }
            if let exitTask, exitFlag.isSet {
                let status = await exitTask.value
                pid = nil
                throw DaemonError(
                    description: "\(name) exited with status \(status) before it was ready; last log lines:\n"
                        + tail(stderrPath, lines: 15))
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        throw DaemonError(description: "\(name) printed no \"\(readyText)\" line within \(timeout)")
    }

    /// SIGKILL, then waits until the process is reaped. Returns false if it was not running.
    @discardableResult
    func kill9() async -> Bool {
        guard let pid, let exitTask else { return false }
        Glibc.kill(pid, SIGKILL)
        _ = await exitTask.value
        self.pid = nil
        self.exitTask = nil
        kills += 1
        return true
    }

    /// SIGTERM (graceful), waiting up to 10 s before falling back to SIGKILL.
    func stop() async {
        guard let pid, let exitTask else { return }
        Glibc.kill(pid, SIGTERM)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        while clock.now < deadline, !exitFlag.isSet {
            try? await Task.sleep(for: .milliseconds(20))
        }
        Glibc.kill(pid, SIGKILL)
        _ = await exitTask.value
        self.pid = nil
        self.exitTask = nil
    }

    /// Whether the daemon died on its own (it was running and is no longer); clears the pid.
    func exitedUnexpectedly() async -> Int32? {
        guard let exitTask, exitFlag.isSet else { return nil }
        let status = await exitTask.value
        pid = nil
        self.exitTask = nil
        return status
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
    Subprocess.readText(path).split(separator: "\n").suffix(lines).joined(separator: "\n")
}
