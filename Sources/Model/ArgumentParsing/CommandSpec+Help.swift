extension CommandSpec {
    /// The column where help text starts in the ARGUMENTS, OPTIONS and SUBCOMMANDS sections.
    static let helpColumn = 26

    /// The help for the command at `path` below this root (`[]` for the root itself), in
    /// swift-argument-parser's layout: OVERVIEW, discussion, USAGE, ARGUMENTS, OPTIONS (including
    /// those inherited from parent commands, and `-h, --help`), SUBCOMMANDS. Nil if `path` names no command.
    package func helpText(path: [String]) -> String? {
        chain(for: path).map { helpText(chain: $0) }
    }

    /// The usage line (without `Usage: `) of the command at `path`; nil if `path` names no command.
    package func usageLine(path: [String]) -> String? {
        chain(for: path).map { usageLine(chain: $0) }
    }

    /// `phonectl session end [--json] <session-id>`: the command's words, then its own options and
    /// flags, then its positionals (or `<subcommand>` for a group).
    func usageLine(chain: [CommandSpec]) -> String {
        let command = chain[chain.count - 1]
        var parts = chain.map(\.name)
        for option in command.options {
            parts.append(option.isRequired ? option.synopsis : "[\(option.synopsis)]")
        }
        parts += command.flags.map { "[--\($0.name)]" }
        if command.isGroup {
            parts.append("<subcommand>")
        } else {
            parts += command.arguments.map(\.usageSynopsis)
        }
        return parts.joined(separator: " ")
    }

    /// The full help of the last command in `chain`.
    func helpText(chain: [CommandSpec]) -> String {
        let command = chain[chain.count - 1]
        var sections: [String] = []
        sections.append("OVERVIEW: \(command.abstract)")
        if !command.discussion.isEmpty { sections.append(command.discussion) }
        sections.append("USAGE: \(usageLine(chain: chain))")

        if !command.arguments.isEmpty {
            let rows = command.arguments.map { argument in
                (argument.isRepeated ? "<\(argument.name)> ..." : "<\(argument.name)>", argument.help)
            }
            sections.append("ARGUMENTS:\n" + Self.table(rows))
        }

        var optionRows: [(String, String)] = []
        // The command's own options first, then what its ancestors declare for the whole subtree.
        for declaring in chain.reversed() {
            for option in declaring.options {
                let short = option.shortName.map { "-\($0), " } ?? ""
                optionRows.append((short + option.synopsis, option.help))
            }
            for flag in declaring.flags {
                let short = flag.shortName.map { "-\($0), " } ?? ""
                optionRows.append((short + "--\(flag.name)", flag.help))
            }
        }
        optionRows.append(("-h, --help", "Show help information."))
        sections.append("OPTIONS:\n" + Self.table(optionRows))

        if command.isGroup {
            let rows = command.subcommands.map { ($0.name, $0.abstract) }
            let words = chain.map(\.name).joined(separator: " ")
            sections.append(
                "SUBCOMMANDS:\n" + Self.table(rows) + "\n\n  See '\(words) <subcommand> --help' for detailed help.")
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// Two columns: the label indented by two, its help at `helpColumn` (or on the next line when
    /// the label is too wide to leave a gap).
    private static func table(_ rows: [(String, String)]) -> String {
        rows.map { label, help in
            let indented = "  " + label
            if help.isEmpty { return indented }
            if indented.count + 2 > helpColumn {
                return indented + "\n" + String(repeating: " ", count: helpColumn) + help
            }
            return indented + String(repeating: " ", count: helpColumn - indented.count) + help
        }
        .joined(separator: "\n")
    }
}
