import AdminCommands
import ArgumentParsing
import Testing

@Suite("phonectl and watchctl grammars")
struct CommandGrammarTests {
    @Test(
        "every phonectl verb parses with its arguments",
        arguments: [
            (["status", "--json"], ["status"]),
            (["workouts", "--all"], ["workouts"]),
            (
                ["split", "create", "--name", "Legs", "-e", "Squat:3x5@100:barbell", "-e", "Row:1x10@40"],
                ["split", "create"]
            ),
            (["start", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "--end-others"], ["start"]),
            (["complete", "R", "1", "2", "--reps", "5", "--weight", "100"], ["complete"]),
            (["settings", "set", "--rest", "60"], ["settings", "set"]),
            (["lock", "split", "X"], ["lock", "split"]),
            (["unlock", "workout"], ["unlock", "workout"]),
            (["status", "--socket", "/tmp/p.sock"], ["status"]),
        ])
    func phoneVerbs(arguments: [String], path: [String]) throws {
        guard case .command(let parsed) = PhoneCommands.spec.parse(arguments) else {
            Issue.record("\(arguments) did not parse")
            return
        }
        #expect(parsed.path == path)
    }

    @Test("phonectl values reach the parsed command")
    func phoneValues() throws {
        guard
            case .command(let parsed) = PhoneCommands.spec.parse([
                "split", "create", "-n", "Legs", "-e", "A:1x1@0", "-e", "B:2x2@2",
            ])
        else {
            Issue.record("did not parse")
            return
        }
        #expect(try parsed.string("name") == "Legs")
        #expect(parsed.strings("exercise") == ["A:1x1@0", "B:2x2@2"])
    }

    @Test(
        "usage errors name the problem",
        arguments: [
            ["complete", "R", "1"], ["show"], ["split", "create"], ["frobnicate"], ["status", "--bogus"],
        ])
    func phoneUsageErrors(arguments: [String]) {
        guard case .usageError(let message, _) = PhoneCommands.spec.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
        #expect(!message.isEmpty)
    }

    @Test(
        "help is available at every level of both CLIs",
        arguments: [
            ["--help"], ["split", "--help"], ["split", "create", "-h"], ["lock"], ["settings"],
        ])
    func phoneHelp(arguments: [String]) {
        guard case .help(let text) = PhoneCommands.spec.parse(arguments) else {
            Issue.record("\(arguments) should print help")
            return
        }
        #expect(text.contains("USAGE") || text.contains("Usage") || text.contains("usage"))
    }

    @Test(
        "every watchctl verb parses",
        arguments: [
            ["status"], ["workouts", "--json"], ["complete", "R", "1", "1"], ["finish", "R"], ["session", "show"],
            ["session", "end", "--failure", "heart rate sensor lost"], ["queue", "list", "--json"],
            ["queue", "cancel", "3"],
            ["sync"], ["wrist", "down"],
        ])
    func watchVerbs(arguments: [String]) {
        guard case .command = WatchCommands.spec.parse(arguments) else {
            Issue.record("\(arguments) did not parse")
            return
        }
    }

    @Test("watchctl help and usage errors", arguments: [["--help"], ["session", "--help"], ["queue"]])
    func watchHelp(arguments: [String]) {
        guard case .help = WatchCommands.spec.parse(arguments) else {
            Issue.record("\(arguments) should print help")
            return
        }
        guard case .usageError = WatchCommands.spec.parse(["session", "end"]) else {
            Issue.record("--failure is required")
            return
        }
    }

    @Test("queue cancel's help says a sent transfer the phone has not acknowledged can be cancelled too")
    func queueCancelHelp() throws {
        let help = try #require(WatchCommands.spec.helpText(path: ["queue", "cancel"]))
        let text = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(!text.contains("not been sent"), "\(text)")
        #expect(text.contains("sent or not"), "\(text)")
        #expect(text.contains("the phone keeps it"), "\(text)")
        let group = try #require(WatchCommands.spec.helpText(path: ["queue"]))
        #expect(!group.contains("not been sent"), "\(group)")
    }
}
