import ChildProcesses
import Foundation
import TestSupport
import Testing

@Suite("The launcher: posix_spawn, captured and file output, signals, reaping")
struct ChildProcessTests {
    @Test("exit codes and killing signals are told apart, and a reaped child is never signalled again")
    func terminations() async throws {
        let exiting = try ChildProcess(["/bin/sh", "-c", "exit 7"])
        #expect(try await exiting.waitForExit() == .exited(7))
        #expect(Termination.exited(7).shellStatus == 7)

        // Never exits by itself: the whole suite shares two threads of Swift's pool on this machine,
        // and a fresh clone's run once kept this test from them for over a minute, so a `sleep 60`
        // had exited with 0 before the signal was sent.
        let killed = try ChildProcess(["sleep", "infinity"])
        #expect(killed.isRunning)
        #expect(try await killed.waitForExit(timeout: .milliseconds(50)) == nil)
        killed.send(SIGKILL)
        let termination = try await killed.waitForExit()
        #expect(termination == .signalled(SIGKILL))
        #expect(termination.status == SIGKILL)
        #expect(termination.shellStatus == 128 + SIGKILL)
        killed.send(SIGKILL)  // reaped: a no-op, not a signal to whoever has the pid now
        #expect(killed.termination == .signalled(SIGKILL))
    }

    @Test("the environment is added to ours, the working directory is changed, output files truncate or append")
    func environmentDirectoryAndFiles() async throws {
        let directory = try TemporaryDirectory("launcher")
        let output = directory.appending("out")
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: output))
        let child = try ChildProcess(
            ["/bin/sh", "-c", "echo \"$LAUNCHER_TEST ${PATH:+path-kept}\"; pwd; echo oops >&2"],
            environment: ["LAUNCHER_TEST": "added"], workingDirectory: "/",
            standardOutput: .file(output, append: false), standardError: .file(directory.appending("err"), append: true)
        )
        #expect(try await child.waitForExit() == .exited(0))
        #expect(ChildProcess.readText(output) == "added path-kept\n/\n")
        #expect(ChildProcess.readText(directory.appending("err")) == "oops\n")

        let again = try ChildProcess(
            ["/bin/sh", "-c", "echo more"], standardOutput: .file(output, append: true))
        _ = try await again.waitForExit()
        #expect(ChildProcess.readText(output) == "added path-kept\n/\nmore\n")
    }

    @Test("a program that cannot be started is an error naming it")
    func missingProgram() {
        let error = #expect(throws: SpawnError.self) { try ChildProcess(["/nonexistent/launcher-test"]) }
        #expect(error?.description.hasPrefix("cannot start /nonexistent/launcher-test: posix_spawnp failed") == true)
    }

    @Test("captured stdout and stderr are kept apart and reach end of file when the child exits")
    func capturedOutput() async throws {
        let child = try ChildProcess(
            ["/bin/sh", "-c", "echo out; echo err >&2; printf 'caf\\303'; printf '\\251\\n'"],
            standardOutput: .captured, standardError: .captured)
        #expect(try await child.waitForExit() == .exited(0))
        #expect(try await child.waitForOutputEnd(timeout: .seconds(20)))
        #expect(child.standardOutput == "out\ncafé\n")  // the é's two bytes came in two writes
        #expect(child.standardError == "err\n")
    }

    @Test("a child holds descriptors 0, 1 and 2 only: not another child's pipe, not the parent's open files")
    func onlyStandardDescriptorsAreInherited() async throws {
        let directory = try TemporaryDirectory("launcher-fds")
        // Not close-on-exec, as a careless open (or a socket() without SOCK_CLOEXEC) elsewhere in a
        // test process would be.
        let stray = open("/dev/null", O_RDONLY)
        #expect(stray >= 0)
        defer { close(stray) }
        let sleeper = try ChildProcess(["sleep", "60"], standardOutput: .captured, standardError: .captured)
        defer {
            sleeper.send(SIGKILL)
            _ = sleeper.waitForExitBlocking(timeout: .seconds(5))
        }
        // The shell lists its own descriptors (ls is its child, so /proc/$$ is the shell).
        let listing = try await ChildProcess.run(
            ["/bin/sh", "-c", "ls /proc/$$/fd"], scratch: directory.appending("ls"))
        #expect(listing.termination == .exited(0))
        #expect(listing.standardOutput.split(separator: "\n") == ["0", "1", "2"], "\(listing.standardOutput)")
    }

    @Test("run: output through scratch files that are removed, and a timeout that kills")
    func runToCompletion() async throws {
        let directory = try TemporaryDirectory("launcher-run")
        let scratch = directory.appending("cli")
        let done = try await ChildProcess.run(["/bin/sh", "-c", "echo hi; echo there >&2; exit 3"], scratch: scratch)
        #expect(done.termination == .exited(3))
        #expect(done.standardOutput == "hi\n")
        #expect(done.standardError == "there\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        let hung = try await ChildProcess.run(["sleep", "infinity"], scratch: scratch, timeout: .milliseconds(100))
        #expect(hung.termination == .signalled(SIGKILL))
    }
}
