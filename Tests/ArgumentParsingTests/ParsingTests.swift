import ArgumentParsing
import Testing

@Suite("Parsing: argv to a command value")
struct ParsingTests {
    /// The parsed command, or a test failure describing what came back instead.
    private func command(_ arguments: [String]) throws -> ParsedCommand {
        let result = sampleTool.parse(arguments)
        guard case .command(let parsed) = result else {
            Issue.record("expected a command for \(arguments), got \(result)")
            throw UsageError("not a command")
        }
        return parsed
    }

    /// The usage error's message and usage line, or a test failure.
    private func usageError(_ arguments: [String]) throws -> (message: String, usage: String) {
        let result = sampleTool.parse(arguments)
        guard case .usageError(let message, let usage) = result else {
            Issue.record("expected a usage error for \(arguments), got \(result)")
            throw UsageError("not a usage error")
        }
        return (message, usage)
    }

    @Test("a nested command yields its path, positionals, options and flags")
    func nestedCommand() throws {
        let parsed = try command(["session", "end", "S-1", "--reason", "done", "-f"])
        #expect(
            parsed
                == ParsedCommand(
                    path: ["session", "end"], positionals: ["session-id": ["S-1"]], options: ["reason": ["done"]],
                    flags: ["force"]))
    }

    @Test(
        "--json is accepted anywhere after the verb",
        arguments: [
            ["session", "end", "--json", "S-1"], ["session", "end", "S-1", "--json"],
            ["session", "end", "-f", "--json", "S-1"],
        ])
    func jsonAnywhere(arguments: [String]) throws {
        let parsed = try command(arguments)
        #expect(parsed.flag("json"))
        #expect(try parsed.string("session-id") == "S-1")
    }

    @Test("--json before the verb that declares it is unknown at that level")
    func jsonBeforeVerb() throws {
        let error = try usageError(["--json", "status"])
        #expect(error.message == "Unknown option '--json'")
        #expect(error.usage == "phonectl [--socket <path>] <subcommand>")
    }

    @Test("an option declared on the root is accepted before and after the verb")
    func inheritedOption() throws {
        #expect(try command(["--socket", "/a", "status"]).optionalString("socket") == "/a")
        #expect(try command(["status", "--socket=/b"]).optionalString("socket") == "/b")
        #expect(try command(["session", "list", "--socket", "/c"]).options == ["socket": ["/c"]])
    }

    @Test("--opt=value, -n value and -nvalue all set the option; the last of several wins")
    func optionForms() throws {
        #expect(try command(["runs", "--limit=5"]).integer("limit") == 5)
        #expect(try command(["runs", "-n", "6"]).integer("limit") == 6)
        #expect(try command(["runs", "-n7"]).integer("limit") == 7)
        let twice = try command(["runs", "--limit", "1", "--limit", "2"])
        #expect(twice.strings("limit") == ["1", "2"])
        #expect(try twice.integer("limit") == 2)
        #expect(try command(["runs", "--pace=-4.5"]).double("pace") == -4.5)
        #expect(try command(["runs", "--pace", "-4.5"]).double("pace") == -4.5)
        #expect(try command(["session", "end", "--reason=", "S"]).string("reason") == "")
        #expect(try command(["session", "end", "--reason=a=b", "S"]).string("reason") == "a=b")
    }

    @Test("combined short flags set each flag; an unknown letter is named")
    func combinedShortFlags() throws {
        #expect(try command(["session", "end", "-f", "S"]).flags == ["force"])
        let error = try usageError(["session", "end", "-fx", "S"])
        #expect(error.message == "Unknown option '-x'")
    }

    @Test("a repeated positional takes every remaining word; optional positionals may be absent")
    func repeatedAndOptional() throws {
        let parsed = try command(["tag", "blue", "a.json", "b.json", "c.json"])
        #expect(parsed.positionals == ["tag": ["blue"], "documents": ["a.json", "b.json", "c.json"]])
        #expect(parsed.optionalString("documents") == "c.json")
        #expect(try command(["runs"]).optionalString("kind") == nil)
        #expect(try command(["runs", "recent"]).string("kind") == "recent")
    }

    @Test("-- ends options: later words are positional even when they look like options")
    func doubleDash() throws {
        let parsed = try command(["tag", "--", "-weird", "--json", "-h"])
        #expect(parsed.positionals == ["tag": ["-weird"], "documents": ["--json", "-h"]])
        #expect(parsed.flags.isEmpty)
        #expect(try command(["session", "end", "--", "--force"]).positionals == ["session-id": ["--force"]])
    }

    @Test("a negative number is a positional value, not an option")
    func negativeNumber() throws {
        #expect(try command(["runs", "-3"]).integer("kind") == -3)
    }

    @Test(
        "every kind of mistake is a usage error naming the argument",
        arguments: [
            (
                ["bogus"],
                "Unknown subcommand 'bogus' for 'phonectl' (expected one of: status, session, runs, tag, export)",
                "phonectl [--socket <path>] <subcommand>"
            ),
            (
                ["session", "stop"], "Unknown subcommand 'stop' for 'phonectl session' (expected one of: end, list)",
                "phonectl session <subcommand>"
            ),
            (["status", "--verbose"], "Unknown option '--verbose'", "phonectl status [--json]"),
            (["status", "-v"], "Unknown option '-v'", "phonectl status [--json]"),
            (["status", "--json=yes"], "The flag '--json' does not take a value", "phonectl status [--json]"),
            (
                ["session", "end"], "Missing expected argument '<session-id>'",
                "phonectl session end [--reason <text>] [--json] [--force] <session-id>"
            ),
            (
                ["session", "end", "a", "b"], "Unexpected argument 'b'",
                "phonectl session end [--reason <text>] [--json] [--force] <session-id>"
            ),
            (["status", "extra"], "Unexpected argument 'extra'", "phonectl status [--json]"),
            (
                ["runs", "--limit"], "Missing value for '--limit <count>'",
                "phonectl runs [--limit <count>] [--pace <minutes-per-km>] [--json] [<kind>]"
            ),
            (
                ["runs", "--limit", "--json"], "Missing value for '--limit <count>'",
                "phonectl runs [--limit <count>] [--pace <minutes-per-km>] [--json] [<kind>]"
            ),
            (
                ["runs", "-n"], "Missing value for '-n <count>'",
                "phonectl runs [--limit <count>] [--pace <minutes-per-km>] [--json] [<kind>]"
            ),
            (["tag", "blue"], "Missing expected argument '<documents> ...'", "phonectl tag <tag> <documents> ..."),
            (["export"], "Missing expected argument '--to <path>'", "phonectl export --to <path>"),
            (["--socket"], "Missing value for '--socket <path>'", "phonectl [--socket <path>] <subcommand>"),
        ])
    func usageErrors(arguments: [String], message: String, usage: String) throws {
        let error = try usageError(arguments)
        #expect(error.message == message)
        #expect(error.usage == usage)
    }

    @Test("typed accessors throw a usage error naming the argument or option")
    func typedAccessors() throws {
        let parsed = try command(["runs", "fast", "--limit", "many", "--pace", "quick"])
        #expect(throws: UsageError("The value 'many' is invalid for '--limit': expected an integer")) {
            try parsed.integer("limit")
        }
        #expect(throws: UsageError("The value 'quick' is invalid for '--pace': expected a number")) {
            try parsed.double("pace")
        }
        #expect(throws: UsageError("The value 'fast' is invalid for '<kind>': expected an integer")) {
            try parsed.optionalInteger("kind")
        }
        #expect(throws: UsageError("Missing expected argument 'socket'")) { try parsed.string("socket") }
        #expect(try parsed.optionalInteger("socket") == nil)
        let infinite = try command(["runs", "--pace", "inf"])
        #expect(throws: UsageError.self) { try infinite.double("pace") }
    }

    @Test("a root that is not a group parses to an empty path")
    func leafRoot() throws {
        let tool = CommandSpec(name: "tool", abstract: "A tool.", arguments: [ArgumentSpec("x", help: "X.")])
        #expect(tool.parse(["1"]) == .command(ParsedCommand(path: [], positionals: ["x": ["1"]])))
    }
}
