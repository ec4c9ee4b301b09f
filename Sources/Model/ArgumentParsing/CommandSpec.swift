/// One command of a command-line tool, declared as a value: its name, what it does, and what it accepts.
///
/// A tree of these describes a whole tool (`phonectl` → `session` → `end`). A command either groups
/// subcommands or takes positional arguments — not both, so a word after a group is always a
/// subcommand name. Options and flags declared on a command are also accepted by every command
/// below it (how `--socket PATH` works at every level); `-h`/`--help` is accepted everywhere
/// without being declared.
///
/// Parsing (`parse(_:)`) is pure: it turns the arguments into a `ParseResult` and never prints,
/// reads the environment or exits. Running the command is the caller's business.
package struct CommandSpec: Sendable, Equatable {
    /// The word that selects this command (for the root: the tool's name, used in usage lines).
    package var name: String
    /// One line saying what the command does, shown in its parent's subcommand list and as OVERVIEW.
    package var abstract: String
    /// Longer text shown in this command's help after the abstract; empty for none.
    package var discussion: String
    /// The commands this one groups, in the order help lists them.
    package var subcommands: [CommandSpec]
    /// Positional arguments in order. Only the last may be repeated.
    package var arguments: [ArgumentSpec]
    /// Options that take a value (`--limit 5`, `--limit=5`, `-n 5`).
    package var options: [OptionSpec]
    /// Boolean switches (`--json`, `-f`).
    package var flags: [FlagSpec]

    /// Declares a command.
    ///
    /// Traps if the declaration itself is inconsistent (a group with positionals, a repeated
    /// positional that is not last, a duplicate name): that is a programming error in the tool,
    /// found the first time its spec is built, never something a user's input can cause.
    package init(
        name: String, abstract: String, discussion: String = "", subcommands: [CommandSpec] = [],
        arguments: [ArgumentSpec] = [], options: [OptionSpec] = [], flags: [FlagSpec] = []
    ) {
        precondition(
            subcommands.isEmpty || arguments.isEmpty,
            "command \(name) declares both subcommands and positional arguments; a word after it would be ambiguous")
        for (index, argument) in arguments.enumerated() where argument.isRepeated {
            precondition(index == arguments.count - 1, "command \(name): only the last positional may be repeated")
        }
        let longNames = options.map(\.name) + flags.map(\.name) + ["help"]
        precondition(Set(longNames).count == longNames.count, "command \(name) declares a long name twice")
        let shortNames = options.compactMap(\.shortName) + flags.compactMap(\.shortName) + ["h"]
        precondition(Set(shortNames).count == shortNames.count, "command \(name) declares a short name twice")
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.subcommands = subcommands
        self.arguments = arguments
        self.options = options
        self.flags = flags
    }

    /// Whether this command only groups subcommands (invoking it alone shows its help).
    package var isGroup: Bool { !subcommands.isEmpty }

    /// The subcommand called `name`, if any.
    package func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// The chain of commands from this root down `path` (`["session", "end"]`); nil if a word is not
    /// a subcommand. The first element is always `self`.
    package func chain(for path: [String]) -> [CommandSpec]? {
        var chain = [self]
        for word in path {
            guard let next = chain[chain.count - 1].subcommand(named: word) else { return nil }
            chain.append(next)
        }
        return chain
    }

    /// This command with `options` and `flags` added to its own (and so accepted by every subcommand).
    package func adding(options: [OptionSpec] = [], flags: [FlagSpec] = []) -> CommandSpec {
        CommandSpec(
            name: name, abstract: abstract, discussion: discussion, subcommands: subcommands, arguments: arguments,
            options: self.options + options, flags: self.flags + flags)
    }

    /// This tree with `flag` on every leaf command that does not declare it yet.
    package func addingToEveryLeaf(_ flag: FlagSpec) -> CommandSpec {
        guard isGroup else { return flags.contains { $0.name == flag.name } ? self : adding(flags: [flag]) }
        return CommandSpec(
            name: name, abstract: abstract, discussion: discussion,
            subcommands: subcommands.map { $0.addingToEveryLeaf(flag) }, arguments: arguments, options: options,
            flags: flags)
    }
}

/// A positional argument: `<session-id>`, `[<limit>]`, `<file> ...`.
package struct ArgumentSpec: Sendable, Equatable {
    /// The key in `ParsedCommand.positionals`, shown as `<name>` in help.
    package var name: String
    /// One line for the ARGUMENTS section of help.
    package var help: String
    /// Whether the command runs without it.
    package var isOptional: Bool
    /// Whether it takes every remaining word (at least one unless also optional).
    package var isRepeated: Bool

    /// Declares a positional argument, required and single by default.
    package init(_ name: String, help: String, isOptional: Bool = false, isRepeated: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeated = isRepeated
    }

    /// How the argument reads in a usage line: `<id>`, `[<id>]`, `<id> ...`, `[<id> ...]`.
    var usageSynopsis: String {
        let core = isRepeated ? "<\(name)> ..." : "<\(name)>"
        return isOptional ? "[\(core)]" : core
    }
}

/// An option that takes a value: `--limit <count>`, also `--limit=5` and `-n 5`/`-n5`.
///
/// Given more than once, every value is kept in order; `ParsedCommand.string(_:)` reads the last.
package struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes; also the key in `ParsedCommand.options`.
    package var name: String
    /// A one-character short name without the dash, if any.
    package var shortName: Character?
    /// One line for the OPTIONS section of help.
    package var help: String
    /// What the value is called in help: `--limit <count>`.
    package var valueName: String
    /// Whether the command refuses to run without it.
    package var isRequired: Bool

    /// Declares an option; `valueName` defaults to `name`.
    package init(
        _ name: String, shortName: Character? = nil, help: String, valueName: String? = nil, isRequired: Bool = false
    ) {
        self.name = name
        self.shortName = shortName
        self.help = help
        self.valueName = valueName ?? name
        self.isRequired = isRequired
    }

    /// `--limit <count>`, as the option's own spelling in usage lines and errors.
    var synopsis: String { "--\(name) <\(valueName)>" }
}

/// A boolean switch: `--json`, `-f`. Present means on.
package struct FlagSpec: Sendable, Equatable {
    /// The long name without dashes; also the member of `ParsedCommand.flags`.
    package var name: String
    /// A one-character short name without the dash, if any.
    package var shortName: Character?
    /// One line for the OPTIONS section of help.
    package var help: String

    /// Declares a flag.
    package init(_ name: String, shortName: Character? = nil, help: String) {
        self.name = name
        self.shortName = shortName
        self.help = help
    }

    /// The `--json` flag every read verb should declare (STYLE.md §5).
    package static let json = FlagSpec("json", help: "Print machine-readable JSON instead of text.")
}
