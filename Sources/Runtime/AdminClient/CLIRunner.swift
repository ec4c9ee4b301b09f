import AdminCommands
import Foundation
import POSIX
import Trace

/// What a CLI's argument parser made of its command line, in terms `CLIRunner` understands.
///
/// DaemonRuntime does not depend on ArgumentParsing (see Package.swift), so the CLI maps
/// `CommandSpec.parse(_:)`'s `ParseResult` onto this one case for case — see `CLIRunner`.
package enum CLIParseOutcome: Sendable, Equatable {
    /// Help was asked for (or a group was invoked alone): printed to stdout, exit 0.
    case help(String)
    /// The command line is wrong, or a value in it does not convert (not a UUID, say): `Error:`/`Usage:`
    /// on stderr, exit 64, without asking the daemon.
    case usageError(message: String, usage: String)
    /// A runnable command.
    case command(CLIInvocation)
}

/// A parsed, validated command ready to be sent to the daemon.
package struct CLIInvocation: Sendable, Equatable {
    /// The encoded command (`AdminWire.encode`).
    package var request: [UInt8]
    /// The `--socket` value, if given.
    package var socket: String?
    /// The `--config` value, if given.
    package var config: String?
    /// Whether `--json` was given: print the response's `json` rather than its `text`.
    package var json: Bool
    /// The command's usage line (without `Usage: `), for errors found after parsing.
    package var usage: String
    /// `trace --follow`: the request for the journal lines after a wall time (nil: from the start).
    package var follow: (@Sendable (Int64?) -> [UInt8])?

    /// An invocation sending `command`.
    package init(
        command: some AdminCommand, socket: String? = nil, config: String? = nil, json: Bool = false, usage: String
    ) {
        self.request = AdminWire.encode(command)
        self.socket = socket
        self.config = config
        self.json = json
        self.usage = usage
    }

    package static func == (lhs: CLIInvocation, rhs: CLIInvocation) -> Bool {
        (lhs.request, lhs.socket, lhs.config, lhs.json, lhs.usage, lhs.follow == nil)
            == (rhs.request, rhs.socket, rhs.config, rhs.json, rhs.usage, rhs.follow == nil)
    }
}

/// What an admin CLI (`phonectl`, `watchctl`) does with its command line: parse it, find the
/// daemon's admin socket, send the request, and turn the response into output and an exit code.
///
/// `run(_:environment:)` does all of it and returns the outcome instead of printing, so tests can
/// drive it against a real `AdminServer`; `main()` prints it and exits.
///
/// Exit codes (STYLE.md §5): 0 success (help included); 64 usage error, with `Error:` and `Usage:`
/// lines on stderr (also for a `--config` file that cannot be used); 69 daemon unreachable (no
/// socket, nobody listening, no answer in time, permission denied); 1 the daemon refused or failed
/// the request, with its message on stderr. Data goes to stdout: the response's `json` when
/// `--json` was given, else its `text`.
///
/// The socket is, in order (`SocketSearch`): the `socket` option's value; the `adminSocket` of the
/// daemon's config file named by the `config` option; the environment variable
/// `socketEnvironmentVariable`; else the repository's `run/` socket found from the current directory
/// up, then the installed one, the first that answers. When none does, exit 69 says where it looked.
/// Declare `socketOption` and `configOption`-shaped options on the root command so they work before
/// or after any subcommand. A CLI's whole entry point (see `CLIRunner+CommandSpec`):
///
/// ```swift
/// CLIRunner(
///     daemonName: "phoned", socketEnvironmentVariable: "PHONED_ADMIN_SOCKET", spec: PhoneCommands.spec,
///     command: PhoneCommand.self, adminSocketFromConfig: { try PhonedConfiguration.load(path: $0).adminSocket }
/// ).main()
/// ```
package struct CLIRunner: Sendable {
    /// What a run produced: the exit code and everything to print.
    package struct Outcome: Sendable, Equatable {
        /// The process's exit status.
        package var exitCode: Int32
        /// Text for stdout.
        package var standardOutput: String
        /// Text for stderr.
        package var standardError: String

        /// An outcome with these parts.
        package init(exitCode: Int32, standardOutput: String = "", standardError: String = "") {
            self.exitCode = exitCode
            self.standardOutput = standardOutput
            self.standardError = standardError
        }
    }

    /// The option naming the admin socket directly: `--socket PATH`.
    package static let socketOption = "socket"
    /// The option naming the daemon's config file, whose `adminSocket` is used: `--config FILE`.
    package static let configOption = "config"
    /// The flag selecting machine output.
    package static let jsonFlag = "json"

    /// Exit status: the command succeeded or help was shown.
    package static let exitSuccess: Int32 = 0
    /// Exit status: the daemon refused or failed the request.
    package static let exitRefused: Int32 = 1
    /// Exit status (`EX_USAGE`): the command line, or a file it names, is wrong.
    package static let exitUsage: Int32 = 64
    /// Exit status (`EX_UNAVAILABLE`): the daemon could not be reached.
    package static let exitUnavailable: Int32 = 69

    /// The daemon's name for messages: `phoned`.
    package let daemonName: String
    /// The environment variable naming the socket: `PHONED_ADMIN_SOCKET`.
    package let socketEnvironmentVariable: String
    /// Where to look for the socket when nothing names one.
    package let socketSearch: SocketSearch
    /// Reads the admin socket's path from the daemon's config file (strictly, as the daemon would).
    package let adminSocketFromConfig: @Sendable (String) throws -> String
    /// How long to wait for the daemon's answer, or for the next piece of a chunked one: long enough
    /// for a slow verb on a busy machine (a dead daemon is seen at once: its socket refuses or closes).
    package let timeout: Duration
    /// The CLI's parser (and validation): arguments without the program name → outcome.
    package let parse: @Sendable ([String]) -> CLIParseOutcome

    /// A runner for a tool that administers `daemonName`, parsing with `parse`.
    /// `socketSearch` defaults to the sockets `scripts/run` and the systemd units make for `daemonName`.
    package init(
        daemonName: String, socketEnvironmentVariable: String, socketSearch: SocketSearch? = nil,
        adminSocketFromConfig: @escaping @Sendable (String) throws -> String, timeout: Duration = .seconds(30),
        parse: @escaping @Sendable ([String]) -> CLIParseOutcome
    ) {
        self.daemonName = daemonName
        self.socketEnvironmentVariable = socketEnvironmentVariable
        self.socketSearch =
            socketSearch ?? SocketSearch(daemon: daemonName, environmentVariable: socketEnvironmentVariable)
        self.adminSocketFromConfig = adminSocketFromConfig
        self.timeout = timeout
        self.parse = parse
    }

    /// Parses `arguments` (without the program name), sends the request and reports the outcome.
    /// With `output`, the pieces of a chunked reply (a long history) go there as they arrive, and the
    /// outcome's `standardOutput` holds only what came last; without it, everything is in the outcome.
    /// `currentDirectory` is where the search for a repository's `run/` socket starts.
    package func run(
        _ arguments: [String], environment: [String: String],
        currentDirectory: String = FileManager.default.currentDirectoryPath, output: ((String) -> Void)? = nil
    ) -> Outcome {
        let invocation: CLIInvocation
        switch parse(arguments) {
        case .help(let text):
            return Outcome(exitCode: Self.exitSuccess, standardOutput: text)
        case .usageError(let message, let usage):
            return usageFailure(message, usage: usage)
        case .command(let command):
            invocation = command
        }

        let choice: SocketChoice
        switch chooseSocket(invocation, environment: environment, currentDirectory: currentDirectory) {
        case .success(let chosen): choice = chosen
        case .failure(let outcome): return outcome
        }

        let json = invocation.json
        let expected = daemonName
        let onChunk = output.map { write in
            { (chunk: AdminResponse) in
                if chunk.daemon ?? expected == expected { write((json ? chunk.json : chunk.text) ?? "") }
            }
        }
        let (socketPath, sent) = reach(choice, request: invocation.request, onChunk: onChunk)
        let response: AdminResponse
        switch sent {
        case .success(let answer): response = answer
        case .failure(let error):
            return Outcome(
                exitCode: exitCode(for: error),
                standardError: "Error: \(explain(error, choice: choice, currentDirectory: currentDirectory))\n")
        }
        if let wrong = wrongDaemon(response, socketPath) {
            return Outcome(exitCode: Self.exitUnavailable, standardError: "Error: \(wrong)\n")
        }
        switch response.status {
        case .ok:
            let output = invocation.json ? response.json ?? response.text : response.text
            return Outcome(exitCode: Self.exitSuccess, standardOutput: Self.line(output))
        case .refused, .error:
            let message = response.message ?? "\(daemonName) refused the request"
            return Outcome(
                exitCode: Self.exitRefused, standardOutput: Self.line(response.text),
                standardError: "Error: \(message)\n")
        }
    }

    /// Runs with the process's arguments and environment, prints the outcome and exits with its code.
    package func main() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let environment = ProcessInfo.processInfo.environment
        if case .command(let invocation) = parse(arguments), let follow = invocation.follow {
            exit(runFollowing(invocation, follow, environment: environment))
        }
        let outcome = run(arguments, environment: environment, output: { StandardStream.output.write($0) })
        StandardStream.output.write(outcome.standardOutput)
        StandardStream.error.write(outcome.standardError)
        exit(outcome.exitCode)
    }

    /// `trace --follow`: prints the journal, then every half second the lines after the newest one
    /// printed, until the daemon goes away (exit 69) or the process is interrupted.
    private func runFollowing(
        _ invocation: CLIInvocation, _ follow: @Sendable (Int64?) -> [UInt8], environment: [String: String]
    ) -> Int32 {
        let currentDirectory = FileManager.default.currentDirectoryPath
        let choice: SocketChoice
        switch chooseSocket(invocation, environment: environment, currentDirectory: currentDirectory) {
        case .success(let chosen): choice = chosen
        case .failure(let outcome):
            StandardStream.error.write(outcome.standardError)
            return outcome.exitCode
        }
        // The first round finds the daemon; the rest keep to the socket that answered it.
        var socketPath: String?
        var after: Int64?
        while true {
            let sent: Result<AdminResponse, AdminClientError>
            if let socketPath {
                sent = Result { () throws(AdminClientError) in
                    try AdminClient.send(path: socketPath, request: follow(after), timeout: timeout)
                }
            } else {
                let (path, first) = reach(choice, request: follow(after), onChunk: nil)
                (socketPath, sent) = (path, first)
            }
            let response: AdminResponse
            switch sent {
            case .success(let answer): response = answer
            case .failure(let error):
                StandardStream.error.write(
                    "Error: \(explain(error, choice: choice, currentDirectory: currentDirectory))\n")
                return exitCode(for: error)
            }
            if let wrong = wrongDaemon(response, socketPath ?? "") {
                StandardStream.error.write("Error: \(wrong)\n")
                return Self.exitUnavailable
            }
            guard response.status == .ok else {
                StandardStream.error.write("Error: \(response.message ?? "\(daemonName) refused the request")\n")
                return Self.exitRefused
            }
            var output = ""
            for line in (response.json ?? "").split(separator: "\n") {
                guard let event = TraceEvent.parse(line) else { continue }
                output += (invocation.json ? String(line) : event.humanLine) + "\n"
                after = max(after ?? event.wall, event.wall)
            }
            StandardStream.output.write(output)
            SystemClock.sleep(for: .milliseconds(500))
        }
    }

    private enum SocketResolution {
        case success(SocketChoice)
        case failure(Outcome)
    }

    /// The socket to use or the ones to try; a `--config` file that cannot be used is a usage error.
    private func chooseSocket(
        _ invocation: CLIInvocation, environment: [String: String], currentDirectory: String
    ) -> SocketResolution {
        do {
            return .success(
                try socketSearch.choose(
                    socket: invocation.socket, config: invocation.config, environment: environment,
                    currentDirectory: currentDirectory, exists: { (try? FileStatus(of: $0)) != nil },
                    adminSocketFromConfig: adminSocketFromConfig))
        } catch {
            return .failure(usageFailure("\(error)", usage: invocation.usage))
        }
    }

    /// Sends `request` to the chosen socket, or to each socket searched in turn until one is there (a
    /// socket nobody accepts on is passed over: nothing was sent to it); the socket that answered, or
    /// the last one tried, and what came of it.
    private func reach(
        _ choice: SocketChoice, request: [UInt8], onChunk: ((AdminResponse) -> Void)?
    ) -> (path: String, result: Result<AdminResponse, AdminClientError>) {
        var last: (path: String, result: Result<AdminResponse, AdminClientError>)?
        for path in choice.paths {
            let result = Result { () throws(AdminClientError) in
                try AdminClient.send(path: path, request: request, timeout: timeout, onChunk: onChunk)
            }
            last = (path, result)
            guard case .failure(.daemonUnreachable) = result else { break }
        }
        // `paths` is never empty: a choice names a socket, or searches at least the installed one.
        guard let last else { preconditionFailure("a socket choice has at least one path") }
        return last
    }

    /// Why `response` is not this tool's to print: the other daemon answered (exit 69).
    private func wrongDaemon(_ response: AdminResponse, _ socketPath: String) -> String? {
        guard let other = response.daemon, other != daemonName else { return nil }
        return "\(socketPath) is \(other)'s admin socket, not \(daemonName)'s (check --socket, the config's "
            + "adminSocket, or \(socketEnvironmentVariable))"
    }

    private func exitCode(for error: AdminClientError) -> Int32 {
        switch error {
        case .daemonUnreachable, .timedOut, .transport: return Self.exitUnavailable
        case .malformedResponse, .noReply: return Self.exitRefused
        }
    }

    private func explain(_ error: AdminClientError, choice: SocketChoice, currentDirectory: String) -> String {
        switch error {
        case .daemonUnreachable:
            switch choice {
            case .named(let path, let source):
                // A path typed on the command line needs no word on where it came from.
                let from = source == .socketOption ? "" : ", from \(source)"
                return "\(daemonName) is not running (\(Self.unreachable(path))\(from))"
            case .search(let repository, let installed):
                let here =
                    repository.map(Self.unreachable)
                    ?? "no \(socketSearch.repositorySocket) in \(currentDirectory) or a directory above it"
                return "\(daemonName) is not running: \(here), and \(Self.unreachable(installed)); name its socket "
                    + "with --socket PATH, --config FILE or $\(socketEnvironmentVariable)"
            }
        case .timedOut(let path, let timeout):
            return "\(daemonName) did not answer within \(timeout) (socket \(path))"
        case .transport(let underlying):
            return "cannot reach \(daemonName): \(underlying)"
        case .malformedResponse(_, let detail):
            return "\(daemonName) sent a malformed response: \(detail)"
        case .noReply:
            return "\(daemonName) closed the connection without a reply: it may have stopped while serving the "
                + "request (its log says why), so the request may or may not have taken effect"
        }
    }

    /// Why nobody answered at `path`: no socket there, or one nobody accepts on.
    private static func unreachable(_ path: String) -> String {
        (try? FileStatus(of: path, followingLinks: false)) != nil
            ? "nothing is listening on \(path)" : "no socket at \(path)"
    }

    /// `Error:` and `Usage:` lines plus swift-argument-parser's pointer to the command's help.
    private func usageFailure(_ message: String, usage: String) -> Outcome {
        let words = usage.split(separator: " ").prefix { !"[<-".contains($0.first ?? "-") }.joined(separator: " ")
        return Outcome(
            exitCode: Self.exitUsage,
            standardError: "Error: \(message)\nUsage: \(usage)\n  See '\(words) --help' for more information.\n")
    }

    /// `text` ending in exactly one newline; empty stays empty.
    private static func line(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "" }
        return text.hasSuffix("\n") ? text : text + "\n"
    }
}
