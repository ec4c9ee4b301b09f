import AdminClient
import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime
import POSIX
import TestSupport
import Testing

/// A stand-in for phonectl's `CommandSpec`: `status [--json]`, `session end <session-id> [--json]`,
/// plus `--socket`/`--config` anywhere; a session ID starting `bad` is an invalid value.
@Sendable func fakePhonectlParse(_ arguments: [String]) -> CLIParseOutcome {
    if arguments.contains("--help") { return .help("OVERVIEW: Administers phoned.\n") }
    var words: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var index = 0
    while index < arguments.count {
        let word = arguments[index]
        index += 1
        switch word {
        case "--json": flags.insert("json")
        case "--socket", "--config":
            guard index < arguments.count else {
                return .usageError(message: "Missing value for '\(word) <path>'", usage: "phonectl <subcommand>")
            }
            values[String(word.dropFirst(2)), default: []].append(arguments[index])
            index += 1
        default:
            if word.hasPrefix("-") {
                return .usageError(message: "Unknown option '\(word)'", usage: "phonectl status [--json]")
            }
            words.append(word)
        }
    }
    func invocation(_ command: StubCommand, usage: String) -> CLIParseOutcome {
        .command(
            CLIInvocation(
                command: command, socket: values["socket"]?.last, config: values["config"]?.last,
                json: flags.contains("json"), usage: usage))
    }
    switch words.first {
    case "status":
        return invocation(.status, usage: "phonectl status [--json]")
    case "session":
        let usage = "phonectl session end [--json] <session-id>"
        guard words.count == 3, words[1] == "end" else {
            return .usageError(message: "Missing expected argument '<session-id>'", usage: usage)
        }
        if words[2].hasPrefix("bad") {
            return .usageError(message: "session-id must be S-N, got \(words[2])", usage: usage)
        }
        return invocation(.endSession(id: words[2]), usage: usage)
    default:
        return .usageError(message: "Unknown subcommand", usage: "phonectl <subcommand>")
    }
}

/// The runner phonectl would build, with the fake parser; the installed socket it looks for last is
/// `installedSocket` (a test's own path, never the machine's `/run/watchsync`).
func phonectlRunner(installedSocket: String = "/nonexistent/watchsync/phoned.sock") -> CLIRunner {
    CLIRunner(
        daemonName: "phoned", socketEnvironmentVariable: "PHONED_ADMIN_SOCKET",
        socketSearch: SocketSearch(
            repositorySocket: "run/phoned.sock", installedSocket: installedSocket,
            environmentVariable: "PHONED_ADMIN_SOCKET"),
        adminSocketFromConfig: { try PhonedConfiguration.load(path: $0).adminSocket }, timeout: .seconds(10),
        parse: fakePhonectlParse)
}

/// A stub phoned: `status` answers, `session end S-1` works, other sessions are refused, `S-err` errors.
@Sendable func stubPhoned(_ command: StubCommand) -> AdminResponse {
    switch command {
    case .status: return .ok(text: "link: up\noutbox: 0", json: #"{"link":"up","outbox":0}"#)
    case .endSession("S-1"): return .ok(text: "ended S-1\n")
    case .endSession("S-err"): return .error("the session store failed: disk full")
    case .endSession(let id): return .refused("no session \(id) is running (see phonectl status)")
    case .tag, .trace: return .error("unexpected \(command)")
    }
}

@Suite("CLI runner: exit codes 0/64/69/1 against a real admin server")
struct CLIRunnerTests {
    /// A temp directory with a stub phoned listening on `phoned.sock` inside it.
    private final class StubDaemon: Sendable {
        let directory: TemporaryDirectory
        let loop: EventLoop
        let server: AdminServer<StubCommand>
        var socketPath: String { server.path }

        init() async throws {
            directory = try TemporaryDirectory("cli")
            loop = try EventLoop(name: "cli")
            server = try await startAdminServer(on: loop, path: directory.appending("phoned.sock"), handler: stubPhoned)
        }

        deinit { loop.shutdown() }
    }

    @Test("0: text on stdout, or the JSON document with --json")
    func success() async throws {
        let daemon = try await StubDaemon()
        let runner = phonectlRunner()
        #expect(
            runner.run(["status", "--socket", daemon.socketPath], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: "link: up\noutbox: 0\n"))
        #expect(
            runner.run(["--socket", daemon.socketPath, "status", "--json"], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: #"{"link":"up","outbox":0}"# + "\n"))
        #expect(
            runner.run(["session", "end", "S-1"], environment: ["PHONED_ADMIN_SOCKET": daemon.socketPath])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: "ended S-1\n"))
    }

    @Test("0: help goes to stdout without contacting the daemon")
    func help() {
        #expect(
            phonectlRunner().run(["--help"], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: "OVERVIEW: Administers phoned.\n"))
    }

    @Test("0: --generate-completion and --generate-manpage print the grammar's files with no socket anywhere")
    func generatedFiles() {
        let runner = CLIRunner(
            daemonName: "phoned", socketEnvironmentVariable: "PHONED_ADMIN_SOCKET", spec: PhoneCommands.spec,
            command: PhoneCommand.self, adminSocketFromConfig: { _ in "unused" })
        #expect(
            runner.run(["--generate-completion", "fish"], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: PhoneCommands.spec.fishCompletion()))
        #expect(
            runner.run(["--generate-manpage"], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: PhoneCommands.spec.manPage(manual: "WatchSync")))
        #expect(
            runner.run(["--generate-completion", "csh"], environment: [:])
                == CLIRunner.Outcome(
                    exitCode: 64,
                    standardError: """
                        Error: unknown shell 'csh' (bash, zsh or fish)
                        Usage: phonectl --generate-completion bash|zsh|fish
                          See 'phonectl --help' for more information.

                        """))
    }

    @Test("64: a usage error prints Error, Usage and where to find help on stderr")
    func usageError() {
        #expect(
            phonectlRunner().run(["status", "--verbose"], environment: [:])
                == CLIRunner.Outcome(
                    exitCode: 64,
                    standardError: """
                        Error: Unknown option '--verbose'
                        Usage: phonectl status [--json]
                          See 'phonectl status --help' for more information.

                        """))
    }

    @Test("69: no socket named and none found says where it looked; 64: a --config file that cannot be used")
    func noSocket() throws {
        let nowhere = try TemporaryDirectory("cli-nowhere")
        let installed = nowhere.appending("installed.sock")
        let outcome = phonectlRunner(installedSocket: installed).run(
            ["status"], environment: [:], currentDirectory: nowhere.path)
        #expect(
            outcome
                == CLIRunner.Outcome(
                    exitCode: 69,
                    standardError: "Error: phoned is not running: no run/phoned.sock in \(nowhere.path) or a "
                        + "directory above it, and no socket at \(installed); name its socket with --socket PATH, "
                        + "--config FILE or $PHONED_ADMIN_SOCKET\n"))

        let directory = try TemporaryDirectory("cli-config")
        let missing = directory.appending("phoned.json")
        let unusable = phonectlRunner().run(["status", "--config", missing], environment: [:])
        #expect(unusable.exitCode == 64)
        #expect(
            unusable.standardError.hasPrefix(
                "Error: config file \(missing) does not exist\nUsage: phonectl status [--json]\n"), "\(unusable)")
    }

    @Test("the socket comes from --socket, then --config, then the environment, then the installed one")
    func socketPrecedence() async throws {
        let daemon = try await StubDaemon()
        let config = daemon.directory.appending("phoned.json")
        var configuration = PhonedConfiguration.defaults
        (configuration.documentsDirectory, configuration.stateDirectory) = ("/d", "/s")
        (configuration.pairingKeyFile, configuration.adminSocket) = ("/k", daemon.socketPath)
        try Data(configuration.fileText.utf8).write(to: URL(fileURLWithPath: config))
        let nowhere = daemon.directory.appending("nowhere.sock")
        let runner = phonectlRunner(installedSocket: nowhere)
        let here = daemon.directory.path

        #expect(
            runner.run(["status", "--config", config], environment: ["PHONED_ADMIN_SOCKET": nowhere]).exitCode == 0)
        #expect(
            runner.run(["status", "--socket", daemon.socketPath, "--config", "/absent"], environment: [:]).exitCode == 0
        )
        #expect(runner.run(["status"], environment: ["PHONED_ADMIN_SOCKET": daemon.socketPath]).exitCode == 0)
        #expect(runner.run(["status"], environment: [:], currentDirectory: here).exitCode == 69)  // nobody there
        #expect(
            phonectlRunner(installedSocket: daemon.socketPath).run(["status"], environment: [:], currentDirectory: here)
                .exitCode == 0)
        // A socket named and not answering is not a reason to look elsewhere; the error says where it came from.
        #expect(
            runner.run(["status"], environment: ["PHONED_ADMIN_SOCKET": nowhere], currentDirectory: here)
                == CLIRunner.Outcome(
                    exitCode: 69,
                    standardError: "Error: phoned is not running (no socket at \(nowhere), from $PHONED_ADMIN_SOCKET)\n"
                ))
    }

    @Test("with nothing named, the nearest run/phoned.sock answers, from any directory below it")
    func repositorySocket() async throws {
        let daemon = try await StubDaemon()
        let repository = daemon.directory.appending("repository")
        let deep = "\(repository)/Sources/Runtime/AdminClient"
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(repository)/run", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: "\(repository)/run/phoned.sock", withDestinationPath: daemon.socketPath)
        let runner = phonectlRunner(installedSocket: daemon.directory.appending("installed.sock"))
        for directory in [repository, deep] {
            #expect(
                runner.run(["status"], environment: [:], currentDirectory: directory)
                    == CLIRunner.Outcome(exitCode: 0, standardOutput: "link: up\noutbox: 0\n"), "from \(directory)")
        }
    }

    @Test("a stale run/ socket: the installed one is tried next, and when neither answers both are named")
    func staleRepositorySocket() async throws {
        let daemon = try await StubDaemon()
        let repository = daemon.directory.appending("repository")
        try FileManager.default.createDirectory(atPath: "\(repository)/run", withIntermediateDirectories: true)
        // Left behind by a daemon that is gone: nobody accepts on it.
        try Data().write(to: URL(fileURLWithPath: "\(repository)/run/phoned.sock"))
        #expect(
            phonectlRunner(installedSocket: daemon.socketPath).run(
                ["status"], environment: [:], currentDirectory: repository
            ).exitCode == 0)
        let installed = daemon.directory.appending("installed.sock")
        #expect(
            phonectlRunner(installedSocket: installed).run(["status"], environment: [:], currentDirectory: repository)
                == CLIRunner.Outcome(
                    exitCode: 69,
                    standardError:
                        "Error: phoned is not running: nothing is listening on \(repository)/run/phoned.sock, "
                        + "and no socket at \(installed); name its socket with --socket PATH, --config FILE or "
                        + "$PHONED_ADMIN_SOCKET\n"))
    }

    @Test("69: no socket file, or a stale one nobody listens on, says the daemon is not running")
    func unreachable() throws {
        let directory = try TemporaryDirectory("cli-down")
        let path = directory.appending("phoned.sock")
        #expect(
            phonectlRunner().run(["status", "--socket", path], environment: [:])
                == CLIRunner.Outcome(
                    exitCode: 69, standardError: "Error: phoned is not running (no socket at \(path))\n"))

        // A socket file left behind by a daemon that died: bound, never listened on.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(stale) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        #expect(
            phonectlRunner().run(["status", "--socket", path], environment: [:])
                == CLIRunner.Outcome(
                    exitCode: 69, standardError: "Error: phoned is not running (nothing is listening on \(path))\n"))
    }

    @Test("1: a refusal or an error prints the daemon's message on stderr")
    func refused() async throws {
        let daemon = try await StubDaemon()
        let environment = ["PHONED_ADMIN_SOCKET": daemon.socketPath]
        #expect(
            phonectlRunner().run(["session", "end", "S-9"], environment: environment)
                == CLIRunner.Outcome(
                    exitCode: 1, standardError: "Error: no session S-9 is running (see phonectl status)\n"))
        #expect(
            phonectlRunner().run(["session", "end", "S-err", "--json"], environment: environment)
                == CLIRunner.Outcome(exitCode: 1, standardError: "Error: the session store failed: disk full\n"))
    }

    @Test("64: a value the CLI cannot convert is a usage error, reported without asking the daemon")
    func invalidValue() throws {
        let directory = try TemporaryDirectory("cli-invalid")
        // No daemon at this socket: reaching it would exit 69.
        let environment = ["PHONED_ADMIN_SOCKET": directory.appending("phoned.sock")]
        let outcome = phonectlRunner().run(["session", "end", "bad-id"], environment: environment)
        #expect(outcome.exitCode == 64)
        #expect(outcome.standardError.hasPrefix("Error: session-id must be S-N, got bad-id\nUsage: "))
    }

    @Test("the request is the command alone: socket, config and --json stay in the CLI")
    func requestShape() throws {
        let invocation = CLIInvocation(
            command: StubCommand.tag(documents: ["a", "b"]), socket: "/s", config: "/c", json: true,
            usage: "phonectl tag")
        #expect(String(decoding: invocation.request, as: UTF8.self) == #"{"tag":{"documents":["a","b"]}}"#)
        #expect(try AdminWire.decode(invocation.request, as: StubCommand.self).get() == .tag(documents: ["a", "b"]))
    }
}
