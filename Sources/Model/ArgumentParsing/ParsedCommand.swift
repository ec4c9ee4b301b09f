/// What `CommandSpec.parse(_:)` produces: `.command`, `.help` or `.usageError`.
package enum ParseResult: Sendable, Equatable {
    /// The arguments select a runnable command with these values.
    case command(ParsedCommand)
    /// `-h`/`--help` was given, or a command group was invoked without a subcommand: print `text`
    /// to stdout and exit 0.
    case help(String)
    /// The arguments are wrong: print `Error: <message>` and `Usage: <usage>` to stderr and exit 64.
    /// `usage` is the usage line of the deepest command that was recognised, without the `Usage: ` prefix.
    case usageError(message: String, usage: String)
}

/// A user's mistake on the command line, in words that name the argument, option or flag.
///
/// Thrown by `ParsedCommand`'s typed accessors (`integer(_:)`…) and by a tool's own validation;
/// a CLI prints it as `Error: <message>` followed by its usage line, and exits 64.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sentence to show after `Error: `.
    package let message: String

    /// A usage error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}

/// A parsed command line: which command, and the values given to it.
///
/// Values are kept as the strings the user typed; the typed accessors convert them and throw a
/// `UsageError` naming the argument (`<count>`) or option (`--limit`) when they do not convert.
package struct ParsedCommand: Sendable, Equatable {
    /// The subcommand words below the root, e.g. `["session", "end"]`; empty for the root itself.
    package var path: [String]
    /// Positional values by argument name; a repeated argument holds every word, in order.
    package var positionals: [String: [String]]
    /// Option values by long name, in the order given.
    package var options: [String: [String]]
    /// The long names of the flags that were given.
    package var flags: Set<String>

    /// A parsed command with these values.
    package init(
        path: [String], positionals: [String: [String]] = [:], options: [String: [String]] = [:],
        flags: Set<String> = []
    ) {
        self.path = path
        self.positionals = positionals
        self.options = options
        self.flags = flags
    }

    /// Whether the flag `name` (long name, no dashes) was given.
    package func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// Every value given for `name` (a positional or an option), in order; empty if none.
    package func strings(_ name: String) -> [String] {
        positionals[name] ?? options[name] ?? []
    }

    /// The value of `name` (the last one, for an option given twice), or nil if it was not given.
    package func optionalString(_ name: String) -> String? {
        strings(name).last
    }

    /// The value of `name`; throws a `UsageError` naming it when it was not given.
    package func string(_ name: String) throws(UsageError) -> String {
        guard let value = optionalString(name) else { throw UsageError("Missing expected argument '\(label(name))'") }
        return value
    }

    /// The value of `name` as a decimal integer, or nil if it was not given; throws if it is not one.
    package func optionalInteger(_ name: String) throws(UsageError) -> Int? {
        guard let text = optionalString(name) else { return nil }
        guard let value = Int(text) else {
            throw UsageError("The value '\(text)' is invalid for '\(label(name))': expected an integer")
        }
        return value
    }

    /// The value of `name` as a decimal integer; throws if it is missing or not an integer.
    package func integer(_ name: String) throws(UsageError) -> Int {
        guard let value = try optionalInteger(name) else {
            throw UsageError("Missing expected argument '\(label(name))'")
        }
        return value
    }

    /// The value of `name` as a finite number, or nil if it was not given; throws if it is not one.
    package func optionalDouble(_ name: String) throws(UsageError) -> Double? {
        guard let text = optionalString(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw UsageError("The value '\(text)' is invalid for '\(label(name))': expected a number")
        }
        return value
    }

    /// The value of `name` as a finite number; throws if it is missing or not a number.
    package func double(_ name: String) throws(UsageError) -> Double {
        guard let value = try optionalDouble(name) else {
            throw UsageError("Missing expected argument '\(label(name))'")
        }
        return value
    }

    /// `<name>` for a positional, `--name` for an option, as errors spell it; a value that was not
    /// given at all cannot be told apart, so it is named plainly.
    private func label(_ name: String) -> String {
        if positionals[name] != nil { return "<\(name)>" }
        if options[name] != nil { return "--\(name)" }
        return name
    }
}
