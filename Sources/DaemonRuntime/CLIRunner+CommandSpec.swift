import ArgumentParsing

extension CLIRunner {
    /// A runner whose parser is `spec` (which must declare `--socket` and `--config` on its root).
    package init(
        daemonName: String, socketEnvironmentVariable: String, spec: CommandSpec,
        adminSocketFromConfig: @escaping @Sendable (String) throws -> String
    ) {
        self.init(
            daemonName: daemonName, socketEnvironmentVariable: socketEnvironmentVariable,
            adminSocketFromConfig: adminSocketFromConfig
        ) { arguments in
            switch spec.parse(arguments) {
            case .help(let text):
                return .help(text)
            case .usageError(let message, let usage):
                return .usageError(message: message, usage: usage)
            case .command(let parsed):
                let usage = spec.usageLine(path: parsed.path) ?? ""
                return .command(
                    CLIInvocation(
                        path: parsed.path, values: parsed.positionals.merging(parsed.options) { $0 + $1 },
                        flags: parsed.flags, usage: usage))
            }
        }
    }
}

extension AdminRequest {
    /// The request as the CLI parsed it, so a daemon reads values with the same typed accessors
    /// (values of one name were joined with newlines on the way; they are split back here).
    package var parsedCommand: ParsedCommand {
        var values: [String: [String]] = [:]
        for name in arguments.keys { values[name] = self.values(name) }
        return ParsedCommand(path: command, options: values, flags: Set(flags))
    }
}

extension Logger {
    /// Logs at `level` as `component` (a daemon's subsystems share one sink and level).
    package func log(
        _ level: LogLevel, _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:],
        component: String
    ) {
        withComponent(component).log(level, message, metadata)
    }

    package func info(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.info, message, metadata, component: component)
    }

    package func notice(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.notice, message, metadata, component: component)
    }

    package func warning(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.warning, message, metadata, component: component)
    }

    package func error(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.error, message, metadata, component: component)
    }
}
