import Foundation
import Glibc
import POSIX
import Synchronization

/// Where a child's standard output or standard error goes.
package enum OutputDestination: Sendable {
    /// Nowhere (/dev/null).
    case discarded
    /// The file at this path, created with mode 0644 if missing and truncated first unless `append`.
    case file(String, append: Bool)
    /// Memory, through a close-on-exec pipe a reader thread drains (`ChildProcess.standardOutput`).
    case captured
}

/// A program started with `posix_spawnp`, signalled with `kill` and reaped with `waitpid`: the one
/// launcher of the test harness and the chaos tester.
///
/// Not Foundation's `Process`: on Linux it watches children and pipes with Dispatch sources, and
/// the parallel test runner crashed inside libdispatch's event loop (and earlier in `Process.run()`'s
/// memcpy) now and then. Here nothing runs in the background but a captured stream's reader thread.
///
/// The child's stdin is /dev/null; stdout and stderr each go where an `OutputDestination` says.
/// It gets descriptors 0, 1 and 2 and nothing else: every descriptor the parent opens for a child is
/// close-on-exec, and the child closes whatever else it inherited (like `Process`, which did the
/// same), so a program spawned at the same moment on another thread never holds this child's pipe
/// open (its reader would wait for as long as that program lives), nor a test's probe socket. The
/// child starts with an empty signal mask and default dispositions, so the parent's signal handling
/// never leaks into it.
///
/// The child is reaped only while holding its state lock, and a signal is sent only under that lock
/// while it is unreaped, so a signal can never reach an unrelated process that was given the same
/// pid afterwards. Nothing waits in the background: `termination`, `isRunning` and the waits reap
/// with `WNOHANG`, so a child nobody looks at stays a zombie until the parent exits.
package final class ChildProcess: Sendable {
    /// The process ID.
    package let pid: pid_t
    /// The argument vector it was started with; the first element is the program.
    package let arguments: [String]

    /// nil until the child is reaped. Shared by every caller that polls or signals (hence the Mutex).
    private let reaped = Mutex<Termination?>(nil)
    private let onExit: @Sendable () -> Void
    private let captured: CapturedOutput?

    /// Starts `arguments` (the program is looked up in `PATH` unless it contains a slash).
    ///
    /// `environment` entries are added to (or override) this process's environment. With a
    /// `workingDirectory` the child changes there after opening its output files, so relative paths
    /// in the destinations are relative to this process's directory. `onExit` runs once, after the
    /// exit is seen and before the pid is reaped, so a caller that published the pid (a pid file)
    /// can withdraw it before the kernel may give the number to another process.
    package init(
        _ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil,
        standardOutput: OutputDestination = .discarded, standardError: OutputDestination = .discarded,
        onExit: @escaping @Sendable () -> Void = {}
    ) throws(SpawnError) {
        precondition(!arguments.isEmpty, "a command needs at least the program's name")
        self.arguments = arguments
        self.onExit = onExit
        var readEnds: [Int32: Int32] = [:]
        do {
            pid = try Self.spawn(
                arguments, environment: environment, workingDirectory: workingDirectory,
                destinations: [1: standardOutput, 2: standardError], readEnds: &readEnds)
        } catch {
            for descriptor in readEnds.values { close(descriptor) }
            throw error
        }
        captured =
            readEnds.isEmpty ? nil : CapturedOutput(standardOutput: readEnds[1], standardError: readEnds[2])
    }

    /// How it ended, or nil while it runs; reaps it if it has just exited.
    package var termination: Termination? {
        reaped.withLock { reaped in
            if reaped == nil { reaped = reapIfExited() }
            return reaped
        }
    }

    /// Whether it is still running (a stopped child counts as running).
    package var isRunning: Bool { termination == nil }

    /// Sends `signal` unless the child has already been reaped.
    package func send(_ signal: Int32) {
        reaped.withLock { reaped in
            if reaped == nil { kill(pid, signal) }
        }
    }

    /// Waits until it exits, polling without blocking a thread; nil if `timeout` passes first.
    /// Throws `CancellationError` if the task is cancelled (the child is left alone).
    package func waitForExit(timeout: Duration) async throws -> Termination? {
        try await waitForExit(until: ContinuousClock.now.advanced(by: timeout))
    }

    /// Waits however long it takes for it to exit (for a child already sent SIGKILL, say).
    /// Throws `CancellationError` if the task is cancelled (the child is left alone).
    package func waitForExit() async throws -> Termination {
        guard let termination = try await waitForExit(until: nil) else {
            preconditionFailure("without a deadline the wait returns only once the child has exited")
        }
        return termination
    }

    private func waitForExit(until deadline: ContinuousClock.Instant?) async throws -> Termination? {
        var pause = Duration.milliseconds(1)
        while true {
            if let termination { return termination }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Blocks the calling thread until it exits; nil if `timeout` passes first. For a deinit or a
    /// signal handler's clean-up, which cannot await.
    package func waitForExitBlocking(timeout: Duration) -> Termination? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let termination { return termination }
            if clock.now >= deadline { return nil }
            usleep(1_000)
        }
    }

    /// What it wrote to stdout so far ("" unless stdout is `.captured`).
    package var standardOutput: String { captured?.standardOutput ?? "" }
    /// What it wrote to stderr so far ("" unless stderr is `.captured`).
    package var standardError: String { captured?.standardError ?? "" }

    /// Waits until every captured stream has reached end of file (at once when none is captured);
    /// false if `timeout` passes first, e.g. because a process the child started still holds one.
    package func waitForOutputEnd(timeout: Duration) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while captured?.isFinished == false {
            if clock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Reaps the child if it has exited (called under the state lock), running `onExit` first.
    private func reapIfExited() -> Termination? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0 {
            // ECHILD: someone else reaped our child (a waitpid(-1), or SIGCHLD ignored): a harness bug.
            precondition(errno == EINTR, "waitid(\(pid)) failed with errno \(errno): the child was reaped elsewhere")
        }
        guard info._sifields._sigchld.si_pid == pid else { return nil }
        onExit()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            precondition(errno == EINTR, "waitpid(\(pid)) failed with errno \(errno) after waitid saw it exit")
        }
        return Termination(waitStatus: status)
    }

    /// `posix_spawnp` with the file actions and attributes the type's doc promises; the read end of
    /// each captured stream lands in `readEnds` (by target descriptor) even when this throws.
    private static func spawn(
        _ arguments: [String], environment: [String: String], workingDirectory: String?,
        destinations: [Int32: OutputDestination], readEnds: inout [Int32: Int32]
    ) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var writeEnds: [Int32] = []
        // The child has its own copies once spawned (or never will): the parent's must not keep the
        // pipe open, or its reader would never see end of file.
        defer { for descriptor in writeEnds { close(descriptor) } }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (target, destination) in destinations.sorted(by: { $0.key < $1.key }) {
            switch destination {
            case .discarded:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path, let append):
                let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
                posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644)
            case .captured:
                guard let pipe = LinuxSystemCalls.pipe2(flags: O_CLOEXEC) else {
                    throw SpawnError(program: arguments[0], call: "pipe2", code: errno)
                }
                readEnds[target] = pipe.read
                writeEnds.append(pipe.write)
                // dup2 clears close-on-exec on the copy, so only the child's 1 or 2 survives exec.
                posix_spawn_file_actions_adddup2(&actions, pipe.write, target)
            }
        }
        // After the opens and dup2s above, which may use higher descriptors for a moment.
        let closing = LinuxSystemCalls.addCloseFrom(&actions, 3)
        guard closing == 0 else {
            throw SpawnError(program: arguments[0], call: "posix_spawn_file_actions_addclosefrom_np", code: closing)
        }
        if let workingDirectory {
            let changing = LinuxSystemCalls.addChangeDirectory(&actions, workingDirectory)
            guard changing == 0 else {
                throw SpawnError(program: arguments[0], call: "posix_spawn_file_actions_addchdir_np", code: changing)
            }
        }

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

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let variables: [UnsafeMutablePointer<CChar>?]? =
            environment.isEmpty
            ? nil
            : ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0)=\($1)") } + [nil]
        defer { for variable in variables ?? [] { free(variable) } }
        var pid: pid_t = 0
        let code = argv.withUnsafeBufferPointer { argv in
            if let variables {
                variables.withUnsafeBufferPointer { envp in
                    posix_spawnp(&pid, arguments[0], &actions, &attributes, argv.baseAddress!, envp.baseAddress!)
                }
            } else {
                posix_spawnp(&pid, arguments[0], &actions, &attributes, argv.baseAddress!, environ)
            }
        }
        guard code == 0 else { throw SpawnError(program: arguments[0], call: "posix_spawnp", code: code) }
        return pid
    }
}
