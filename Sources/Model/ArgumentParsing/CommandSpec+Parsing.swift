extension CommandSpec {
    /// Parses `arguments` — the command line **without** the program name — against this root command.
    ///
    /// Rules, following swift-argument-parser:
    /// - Words after a group select subcommands; any other word there is an error listing the choices.
    /// - Options and flags may appear anywhere after the command that declares them (or an ancestor
    ///   does), before or between positionals: `status --json`, `runs --limit=5 recent`.
    /// - `--name value` and `--name=value`; `-n value` and `-nvalue`; `-fj` combines short flags.
    /// - A value may not start with `-` unless joined with `=` (or it is a number such as `-3`), so
    ///   `--limit --json` reports the missing value instead of swallowing the flag.
    /// - `--` ends options: every later word is positional, even `-h`.
    /// - `-h`/`--help` anywhere before `--` wins over every error and shows help for the deepest
    ///   subcommand named so far; a group without a subcommand shows its help too.
    package func parse(_ arguments: [String]) -> ParseResult {
        if let helpChain = chainForHelpRequest(arguments) {
            return .help(helpText(chain: helpChain))
        }
        var parser = CommandLineParser(root: self)
        do throws(UsageError) {
            return try parser.parse(arguments)
        } catch {
            return .usageError(message: error.message, usage: usageLine(chain: parser.chain))
        }
    }

    /// The command chain to show help for if `arguments` ask for help before `--`; nil otherwise.
    private func chainForHelpRequest(_ arguments: [String]) -> [CommandSpec]? {
        var chain = [self]
        var wantsHelp = false
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word == "--" { break }
            if word == "-h" || word == "--help" {
                wantsHelp = true
            } else if word.hasPrefix("--"), !word.contains("=") {
                // Skip a separate option value so it is not mistaken for a subcommand name.
                if CommandLineParser.option(named: String(word.dropFirst(2)), in: chain) != nil { index += 1 }
            } else if !word.hasPrefix("-"), let next = chain[chain.count - 1].subcommand(named: word) {
                chain.append(next)
            }
        }
        return wantsHelp ? chain : nil
    }
}

/// The state of one `parse(_:)` call: where in the tree it is and what it has collected.
struct CommandLineParser {
    /// The root and every subcommand selected so far; the last is the command being parsed.
    private(set) var chain: [CommandSpec]
    private var words: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    init(root: CommandSpec) {
        chain = [root]
    }

    private var current: CommandSpec { chain[chain.count - 1] }

    /// The option `name` declared by any command in `chain` (nearest first).
    static func option(named name: String, in chain: [CommandSpec]) -> OptionSpec? {
        for command in chain.reversed() {
            if let option = command.options.first(where: { $0.name == name }) { return option }
        }
        return nil
    }

    private func flag(named name: String) -> FlagSpec? {
        for command in chain.reversed() {
            if let flag = command.flags.first(where: { $0.name == name }) { return flag }
        }
        return nil
    }

    private func option(short: Character) -> OptionSpec? {
        for command in chain.reversed() {
            if let option = command.options.first(where: { $0.shortName == short }) { return option }
        }
        return nil
    }

    private func flag(short: Character) -> FlagSpec? {
        for command in chain.reversed() {
            if let flag = command.flags.first(where: { $0.shortName == short }) { return flag }
        }
        return nil
    }

    /// Whether `word` is a negative number such as `-3` or `-0.5`, which is a value, not an option.
    private static func isNegativeNumber(_ word: String) -> Bool {
        word.hasPrefix("-") && word.count > 1 && Double(word) != nil
    }

    mutating func parse(_ arguments: [String]) throws(UsageError) -> ParseResult {
        var index = 0
        var optionsEnded = false
        /// Takes the word after an option as its value, refusing one that looks like another option.
        func separateValue(for option: OptionSpec, spelled: String) throws(UsageError) -> String {
            guard index < arguments.count,
                arguments[index] == "-" || !arguments[index].hasPrefix("-")
                    || Self.isNegativeNumber(arguments[index])
            else {
                throw UsageError("Missing value for '\(spelled) <\(option.valueName)>'")
            }
            index += 1
            return arguments[index - 1]
        }

        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") || Self.isNegativeNumber(word) {
                try take(word: word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
                if let option = Self.option(named: name, in: chain) {
                    let value: String
                    if let inline {
                        value = inline
                    } else {
                        value = try separateValue(for: option, spelled: "--\(name)")
                    }
                    options[name, default: []].append(value)
                } else if flag(named: name) != nil {
                    guard inline == nil else { throw UsageError("The flag '--\(name)' does not take a value") }
                    flags.insert(name)
                } else {
                    throw UsageError("Unknown option '--\(name)'")
                }
            } else {
                let letters = Array(word.dropFirst())
                if let option = option(short: letters[0]) {
                    let rest = String(letters.dropFirst())
                    let value = try rest.isEmpty ? separateValue(for: option, spelled: "-\(letters[0])") : rest
                    options[option.name, default: []].append(value)
                    continue
                }
                for letter in letters {
                    guard let flag = flag(short: letter) else { throw UsageError("Unknown option '-\(letter)'") }
                    flags.insert(flag.name)
                }
            }
        }
        if current.isGroup {
            return .help(chain[0].helpText(chain: chain))
        }
        for command in chain {
            for option in command.options where option.isRequired && options[option.name] == nil {
                throw UsageError("Missing expected argument '\(option.synopsis)'")
            }
        }
        return .command(
            ParsedCommand(
                path: chain.dropFirst().map(\.name), positionals: try assignPositionals(), options: options,
                flags: flags))
    }

    /// A plain word: the next subcommand while inside a group, otherwise a positional value.
    private mutating func take(word: String) throws(UsageError) {
        guard current.isGroup else {
            words.append(word)
            return
        }
        guard let next = current.subcommand(named: word) else {
            let choices = current.subcommands.map(\.name).joined(separator: ", ")
            let place = chain.map(\.name).joined(separator: " ")
            throw UsageError("Unknown subcommand '\(word)' for '\(place)' (expected one of: \(choices))")
        }
        chain.append(next)
    }

    /// Hands the collected words to the current command's positionals, in declaration order.
    private func assignPositionals() throws(UsageError) -> [String: [String]] {
        var remaining = words[...]
        var values: [String: [String]] = [:]
        for argument in current.arguments {
            if argument.isRepeated {
                if remaining.isEmpty, !argument.isOptional {
                    throw UsageError("Missing expected argument '\(argument.usageSynopsis)'")
                }
                if !remaining.isEmpty { values[argument.name] = Array(remaining) }
                remaining = []
            } else if let word = remaining.popFirst() {
                values[argument.name] = [word]
            } else if !argument.isOptional {
                throw UsageError("Missing expected argument '\(argument.usageSynopsis)'")
            }
        }
        if let extra = remaining.first {
            throw UsageError("Unexpected argument '\(extra)'")
        }
        return values
    }
}
