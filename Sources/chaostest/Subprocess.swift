import Dispatch
import Foundation
import Glibc
import Synchronization

/// What a finished command produced.
struct CommandResult: Sendable {
    /// The exit status, or 128 + the signal number when a signal ended it; -1 when it could not start.
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// stdout and stderr, trimmed, for messages.
    var transcript: String {
        [standardOutput, standardError].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }.joined(separator: " | ")
    }
}

/// Why a program could not be started.
struct SpawnError: Error, CustomStringConvertible {
    var program: String
    var code: Int32
    var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
}

/// Starts programs with `posix_spawnp` and reaps them with `waitpid`.
///
/// Output goes to files, never pipes: a pipe end inherited by a daemon spawned at the same moment
/// would keep a CLI's output open forever, and a file also survives the process (daemon logs
/// across restarts). Every child starts with an empty signal mask and default dispositions, so the
/// tester's own signal handling never leaks into the daemons.
enum Subprocess {
    /// Starts `argv` (argv[0] looked up in `PATH` unless it contains a slash) with stdin from
    /// /dev/null and stdout/stderr written to the given files (appended to when `append`).
    static func spawn(_ argv: [String], stdout: String, stderr: String, append: Bool) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let mode = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, mode, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, mode, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let code = arguments.withUnsafeBufferPointer { buffer in
            posix_spawnp(&pid, argv[0], &actions, &attributes, buffer.baseAddress!, environ)
        }
        guard code == 0 else { throw SpawnError(program: argv[0], code: code) }
        return pid
    }

    /// Waits (on a Dispatch thread, never a cooperative one) until `pid` exits, reaps it and
    /// returns its status. `onExit` runs after the exit is seen but before the pid is reaped, so a
    /// caller that tracks the pid can forget it before the kernel may reuse the number.
    static func waitForExit(_ pid: pid_t, onExit: @escaping @Sendable () -> Void = {}) async -> Int32 {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
                onExit()
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                continuation.resume(returning: decode(status))
            }
        }
    }

    /// Runs a command to completion, killing it after `timeout`. Its output goes through two
    /// scratch files under `scratch` (removed afterwards).
    static func run(_ argv: [String], scratch: String, timeout: Duration = .seconds(30)) async -> CommandResult {
        let name = "\(scratch)/\(ScratchCounter.shared.next())"
        let outPath = name + ".out"
        let errPath = name + ".err"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let pid: pid_t
        do {
            pid = try spawn(argv, stdout: outPath, stderr: errPath, append: false)
        } catch {
            return CommandResult(status: -1, standardOutput: "", standardError: error.description)
        }
        let exited = Mutex(false)
        let watchdog = DispatchWorkItem {
            exited.withLock { done in if !done { kill(pid, SIGKILL) } }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: watchdog)
        let status = await waitForExit(pid) { exited.withLock { $0 = true } }
        watchdog.cancel()
        return CommandResult(status: status, standardOutput: readText(outPath), standardError: readText(errPath))
    }

    /// Runs a command and returns whether it exited 0 (its output is dropped).
    @discardableResult
    static func succeeds(_ argv: [String], scratch: String) async -> Bool {
        await run(argv, scratch: scratch).status == 0
    }

    /// A wait status as the shell reports it: the exit code, or 128 + signal.
    static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// A whole file as text ("" when missing).
    static func readText(_ path: String) -> String {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
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

    /// For Dispatch deadlines.
    var timeInterval: DispatchTimeInterval { .nanoseconds(Int(seconds * 1e9)) }
}
