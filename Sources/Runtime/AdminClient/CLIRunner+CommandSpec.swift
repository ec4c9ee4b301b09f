import AdminCommands
import ArgumentParsing

extension CLIRunner {
    /// A runner whose grammar is `spec` (which must declare `--socket` and `--config` on its root) and
    /// whose requests are `Command`s built from its parse: a value that does not convert is reported
    /// before the daemon is asked. `--generate-completion SHELL` and `--generate-manpage` print the
    /// files generated from `spec` without resolving a socket.
    package init<Command: AdminCommand>(
        daemonName: String, socketEnvironmentVariable: String, spec: CommandSpec, command: Command.Type,
        adminSocketFromConfig: @escaping @Sendable (String) throws -> String
    ) {
        self.init(
            daemonName: daemonName, socketEnvironmentVariable: socketEnvironmentVariable,
            adminSocketFromConfig: adminSocketFromConfig
        ) { arguments in
            switch spec.generatedFile(arguments, manual: "WatchSync") ?? spec.parse(arguments) {
            case .help(let text):
                return .help(text)
            case .usageError(let message, let usage):
                return .usageError(message: message, usage: usage)
            case .command(let parsed):
                let command: Command
                do throws(UsageError) {
                    command = try Command(parsed)
                } catch {
                    return .usageError(message: error.message, usage: spec.usageLine(path: parsed.path) ?? "")
                }
                var invocation = CLIInvocation(
                    command: command, socket: parsed.optionalString(Self.socketOption),
                    config: parsed.optionalString(Self.configOption), json: parsed.flag(Self.jsonFlag),
                    usage: spec.usageLine(path: parsed.path) ?? "")
                if parsed.path == ["trace"], parsed.flag("follow"), let query = try? TraceQuery(parsed) {
                    // Each round asks for the raw lines after the newest one printed (their `wall`).
                    invocation.follow = { after in
                        var next = query
                        next.after = after
                        next.json = true
                        return AdminWire.encode(Command.trace(next))
                    }
                }
                return .command(invocation)
            }
        }
    }
}
