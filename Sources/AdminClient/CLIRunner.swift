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
/// The socket is, in order: the `socket` option's value; the `adminSocket` of the daemon's config
/// file named by the `config` option; the environment variable `socketEnvironmentVariable`;
/// `defaultSocketPath`. Declare `socketOption` and `configOption`-shaped options on the root
/// command so they work before or after any subcommand. A CLI's whole entry point (see `CLIRunner+CommandSpec`):
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
    /// The socket used when nothing else names one, if any.
    package let defaultSocketPath: String?
    /// Reads the admin socket's path from the daemon's config file (strictly, as the daemon would).
    package let adminSocketFromConfig: @Sendable (String) throws -> String
    /// How long to wait for the daemon's answer, or for the next piece of a chunked one: long enough
    /// for a slow verb on a busy machine (a dead daemon is seen at once: its socket refuses or closes).
    package let timeout: Duration
    /// The CLI's parser (and validation): arguments without the program name → outcome.
    package let parse: @Sendable ([String]) -> CLIParseOutcome

    /// A runner for a tool that administers `daemonName`, parsing with `parse`.
    package init(
        daemonName: String, socketEnvironmentVariable: String, defaultSocketPath: String? = nil,
        adminSocketFromConfig: @escaping @Sendable (String) throws -> String, timeout: Duration = .seconds(30),
        parse: @escaping @Sendable ([String]) -> CLIParseOutcome
    ) {
        self.daemonName = daemonName
        self.socketEnvironmentVariable = socketEnvironmentVariable
        self.defaultSocketPath = defaultSocketPath
        self.adminSocketFromConfig = adminSocketFromConfig
        self.timeout = timeout
        self.parse = parse
    }

    /// Parses `arguments` (without the program name), sends the request and reports the outcome.
    /// With `output`, the pieces of a chunked reply (a long history) go there as they arrive, and the
    /// outcome's `standardOutput` holds only what came last; without it, everything is in the outcome.
    package func run(
        _ arguments: [String], environment: [String: String], output: ((String) -> Void)? = nil
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

        let socketPath: String
        switch resolveSocket(invocation, environment: environment) {
        case .success(let path): socketPath = path
        case .failure(let outcome): return outcome
        }

        let response: AdminResponse
        do {
            let json = invocation.json
            let expected = daemonName
            response = try AdminClient.send(
                path: socketPath, request: invocation.request, timeout: timeout,
                onChunk: output.map { write in
                    { chunk in if chunk.daemon ?? expected == expected { write((json ? chunk.json : chunk.text) ?? "") }
                    }
                })
        } catch {
            return Outcome(exitCode: exitCode(for: error), standardError: "Error: \(explain(error))\n")
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
        let outcome = run(arguments, environment: environment) { StandardStream.output.write($0) }
        StandardStream.output.write(outcome.standardOutput)
        StandardStream.error.write(outcome.standardError)
        exit(outcome.exitCode)
    }

    /// `trace --follow`: prints the journal, then every half second the lines after the newest one
    /// printed, until the daemon goes away (exit 69) or the process is interrupted.
    private func runFollowing(
        _ invocation: CLIInvocation, _ follow: @Sendable (Int64?) -> [UInt8], environment: [String: String]
    ) -> Int32 {
        let socketPath: String
        switch resolveSocket(invocation, environment: environment) {
        case .success(let path): socketPath = path
        case .failure(let outcome):
            StandardStream.error.write(outcome.standardError)
            return outcome.exitCode
        }
        var after: Int64?
        while true {
            let response: AdminResponse
            do {
                response = try AdminClient.send(path: socketPath, request: follow(after), timeout: timeout)
            } catch {
                StandardStream.error.write("Error: \(explain(error))\n")
                return exitCode(for: error)
            }
            if let wrong = wrongDaemon(response, socketPath) {
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
        case success(String)
        case failure(Outcome)
    }

    private func resolveSocket(_ invocation: CLIInvocation, environment: [String: String]) -> SocketResolution {
        if let path = invocation.socket { return .success(path) }
        if let configPath = invocation.config {
            do {
                return .success(try adminSocketFromConfig(configPath))
            } catch {
                return .failure(usageFailure("\(error)", usage: invocation.usage))
            }
        }
        if let path = environment[socketEnvironmentVariable], !path.isEmpty { return .success(path) }
        if let defaultSocketPath { return .success(defaultSocketPath) }
        return .failure(
            usageFailure(
                "no admin socket given: pass --socket PATH or --config FILE, or set \(socketEnvironmentVariable)",
                usage: invocation.usage))
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

    private func explain(_ error: AdminClientError) -> String {
        switch error {
        case .daemonUnreachable(let path):
            let exists = (try? FileStatus(of: path, followingLinks: false)) != nil
            return exists
                ? "\(daemonName) is not running (nothing is listening on \(path))"
                : "\(daemonName) is not running (no socket at \(path))"
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
