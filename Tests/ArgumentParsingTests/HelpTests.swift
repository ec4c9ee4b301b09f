import ArgumentParsing
import Testing

@Suite("Help: -h/--help at every level")
struct HelpTests {
    private let rootHelp = """
        OVERVIEW: Administers phoned.

        Talks to phoned over its admin socket.

        USAGE: phonectl [--socket <path>] <subcommand>

        OPTIONS:
          --socket <path>         The admin socket.
          -h, --help              Show help information.

        SUBCOMMANDS:
          status                  Shows the link and sync state.
          session                 Manages workout sessions.
          runs                    Lists recent runs.
          tag                     Tags documents.
          export                  Exports documents.

          See 'phonectl <subcommand> --help' for detailed help.

        """

    @Test("help at the root, by -h, --help, or no subcommand at all", arguments: [["-h"], ["--help"], []])
    func rootHelp(arguments: [String]) {
        #expect(sampleTool.parse(arguments) == .help(rootHelp))
    }

    @Test("help for a nested leaf lists arguments, its options, inherited options and -h")
    func leafHelp() {
        let expected = """
            OVERVIEW: Ends a workout session.

            USAGE: phonectl session end [--reason <text>] [--json] [--force] <session-id>

            ARGUMENTS:
              <session-id>            The session to end.

            OPTIONS:
              -r, --reason <text>     Why it ended.
              --json                  Print machine-readable JSON instead of text.
              -f, --force             End it even if the watch disagrees.
              --socket <path>         The admin socket.
              -h, --help              Show help information.

            """
        #expect(sampleTool.parse(["session", "end", "--help"]) == .help(expected))
        #expect(sampleTool.parse(["session", "end", "S-1", "-h"]) == .help(expected))
        #expect(sampleTool.helpText(path: ["session", "end"]) == expected)
    }

    @Test("help for a nested group, by flag or by naming the group alone")
    func groupHelp() {
        let expected = """
            OVERVIEW: Manages workout sessions.

            USAGE: phonectl session <subcommand>

            OPTIONS:
              --socket <path>         The admin socket.
              -h, --help              Show help information.

            SUBCOMMANDS:
              end                     Ends a workout session.
              list                    Lists sessions.

              See 'phonectl session <subcommand> --help' for detailed help.

            """
        #expect(sampleTool.parse(["session"]) == .help(expected))
        #expect(sampleTool.parse(["session", "-h"]) == .help(expected))
        #expect(sampleTool.parse(["--help", "session"]) == .help(expected))
    }

    @Test("help wins over errors elsewhere on the line, and skips option values")
    func helpWinsOverErrors() {
        guard case .help(let text) = sampleTool.parse(["runs", "--bogus", "x", "y", "--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(text.hasPrefix("OVERVIEW: Lists recent runs."))
        #expect(text.contains("  -n, --limit <count>     At most this many."))
        #expect(text.contains("  --pace <minutes-per-km>\n                          Minimum pace."))
        #expect(text.contains("  <kind>                  Which runs."))
        // "session" here is --socket's value, not the subcommand.
        guard case .help(let root) = sampleTool.parse(["--socket", "session", "-h"]) else {
            Issue.record("expected help")
            return
        }
        #expect(root.hasPrefix("OVERVIEW: Administers phoned."))
    }

    @Test("after --, -h is a positional, not a help request")
    func helpAfterDoubleDash() {
        #expect(
            sampleTool.parse(["tag", "t", "--", "-h"])
                == .command(ParsedCommand(path: ["tag"], positionals: ["tag": ["t"], "documents": ["-h"]])))
    }

    @Test("a repeated argument reads as <name> ... in help; unknown paths have no help")
    func repeatedInHelp() {
        #expect(sampleTool.helpText(path: ["tag"])?.contains("  <documents> ...         The documents to tag.") == true)
        #expect(sampleTool.usageLine(path: ["tag"]) == "phonectl tag <tag> <documents> ...")
        #expect(sampleTool.helpText(path: ["nope"]) == nil)
    }
}
