import ArgumentParsing
import Foundation
import TestSupport
import Testing

@Suite("Completion scripts and man page generated from the grammar")
struct GeneratedFilesTests {
    @Test("bash: one case per command with its subcommands, own and inherited options, and -h")
    func bashCases() {
        let script = sampleTool.bashCompletion()
        #expect(script.contains("complete -F _phonectl phonectl\n"))
        #expect(script.contains(#""") words="status session runs tag export --socket -h --help" ;;"#))
        #expect(script.contains(#""session") words="end list --socket -h --help" ;;"#))
        #expect(script.contains(#""session end") words="--reason -r --json --force -f --socket -h --help" ;;"#))
        // The words after these are values, never subcommands.
        #expect(script.contains("--socket | --reason | -r | --limit | -n | --pace | --to) skip=true ;;"))
    }

    @Test(
        "bash: sourced in a real bash, completes verbs after options and options after positionals",
        arguments: [
            (["phonectl", "--socket", "/s", "session", "e"], "end"),
            (["phonectl", "se"], "session"),
            (["phonectl", "runs", "-n", "5", "--p"], "--pace"),
            (["phonectl", "session", "end", "some-id", "--f"], "--force"),
            (["phonectl", "tag", "session", "--"], "--socket --help"),
        ])
    func bashCompletes(words: [String], expected: String) async throws {
        let script =
            sampleTool.bashCompletion() + """
                complete -p phonectl
                COMP_WORDS=(\(words.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
                _phonectl
                echo "${COMPREPLY[*]}"
                """
        let directory = try TemporaryDirectory("completion")
        let bash = try await CommandResult.run(
            "/usr/bin/env", ["bash", "--norc", "-c", script], scratch: directory.appending("bash"))
        #expect(bash.exitCode == 0, "\(bash)")
        let text = bash.standardOutput
        #expect(text == "complete -F _phonectl phonectl\n\(expected)\n")
    }

    @Test("zsh: a #compdef file with one case per command")
    func zshCases() {
        let script = sampleTool.zshCompletion()
        #expect(script.hasPrefix("#compdef phonectl\n"))
        #expect(script.contains(#"("session end") candidates=(--reason -r --json --force -f --socket -h --help) ;;"#))
        #expect(script.contains("(--socket|--reason|-r|--limit|-n|--pace|--to) skip=1 ;;"))
    }

    @Test("fish: each subcommand and option under the exact path it belongs to, with its help quoted")
    func fishLines() {
        let script = sampleTool.fishCompletion()
        #expect(
            script.contains(#"complete -c phonectl -n '__phonectl_at \'session\'' -a end -d 'Ends a workout session.'"#)
        )
        #expect(
            script.contains(
                #"complete -c phonectl -n '__phonectl_at \'session end\'' -l reason -s r -r -d 'Why it ended.'"#))
        #expect(script.contains(#"complete -c phonectl -n '__phonectl_at \'\'' -l socket -r -d 'The admin socket.'"#))
        let quoted = CommandSpec(
            name: "tool", abstract: "A tool.",
            subcommands: [CommandSpec(name: "go", abstract: #"The user's C:\ drive."#)])
        #expect(quoted.fishCompletion().contains(#"-a go -d 'The user\'s C:\\ drive.'"#))
    }

    @Test("man page: NAME, SYNOPSIS, DESCRIPTION, root OPTIONS, every leaf under COMMANDS, escaped for roff")
    func manPage() {
        let page = sampleTool.manPage(manual: "WatchSync")
        #expect(page.hasPrefix(#".TH PHONECTL 1 "" "WatchSync" "WatchSync Manual""# + "\n"))
        #expect(page.contains(".SH NAME\nphonectl \\- Administers phoned.\n"))
        #expect(page.contains(".SH SYNOPSIS\nphonectl [\\-\\-socket <path>] <subcommand>\n"))
        #expect(page.contains(".SH DESCRIPTION\nAdministers phoned.\n.PP\nTalks to phoned over its admin socket.\n"))
        #expect(page.contains(".TP\n\\fB\\-\\-socket\\fR \\fI<path>\\fR\nThe admin socket.\n"))
        let end = """
            .TP
            \\fBphonectl session end [\\-\\-reason <text>] [\\-\\-json] [\\-\\-force] <session\\-id>\\fR
            Ends a workout session.
            .RS
            .TP
            \\fI<session\\-id>\\fR
            The session to end.
            .TP
            \\fB\\-r\\fR, \\fB\\-\\-reason\\fR \\fI<text>\\fR
            Why it ended.
            .TP
            \\fB\\-\\-json\\fR
            Print machine\\-readable JSON instead of text.
            .TP
            \\fB\\-f\\fR, \\fB\\-\\-force\\fR
            End it even if the watch disagrees.
            .RE

            """
        #expect(page.contains(end))
        #expect(!page.contains("\\fBphonectl session <subcommand>"), "groups are not commands of their own")
        #expect(!page.contains("EXIT STATUS"), "the discussion names no exit codes")
    }

    @Test("man page: the discussion's exit codes become EXIT STATUS; a leading dot cannot start a roff request")
    func manPageExitStatus() {
        let tool = CommandSpec(
            name: "tool", abstract: ".dot first.",
            discussion: """
                Does things with a \\ backslash. Exit codes: 0 ok,
                64 usage error.
                """,
            subcommands: [CommandSpec(name: "go", abstract: "Goes.")])
        let page = tool.manPage(section: 8, manual: "Suite")
        #expect(page.hasPrefix(#".TH TOOL 8 "" "Suite" "Suite Manual""#))
        #expect(page.contains(".SH NAME\ntool \\- \\&.dot first.\n"))
        #expect(page.contains(".SH DESCRIPTION\n\\&.dot first.\n.PP\nDoes things with a \\e backslash.\n"))
        #expect(page.hasSuffix(".SH EXIT STATUS\nExit codes: 0 ok, 64 usage error.\n"))
    }

    @Test("the hidden root options select a generated file; anything else is parsed as usual")
    func generatedFileRequests() {
        #expect(
            sampleTool.generatedFile(["--generate-completion", "bash"], manual: "M")
                == .help(sampleTool.bashCompletion()))
        #expect(
            sampleTool.generatedFile(["--generate-completion", "zsh"], manual: "M") == .help(sampleTool.zshCompletion())
        )
        #expect(
            sampleTool.generatedFile(["--generate-completion", "fish"], manual: "M")
                == .help(sampleTool.fishCompletion()))
        #expect(sampleTool.generatedFile(["--generate-manpage"], manual: "M") == .help(sampleTool.manPage(manual: "M")))
        #expect(
            sampleTool.generatedFile(["--generate-completion", "tcsh"], manual: "M")
                == .usageError(
                    message: "unknown shell 'tcsh' (bash, zsh or fish)",
                    usage: "phonectl --generate-completion bash|zsh|fish"))
        #expect(
            sampleTool.generatedFile(["--generate-completion"], manual: "M")
                == .usageError(
                    message: "missing shell for --generate-completion",
                    usage: "phonectl --generate-completion bash|zsh|fish"))
        #expect(sampleTool.generatedFile(["status"], manual: "M") == nil)
        #expect(sampleTool.generatedFile(["status", "--generate-manpage"], manual: "M") == nil)
        #expect(!String(describing: sampleTool.parse(["--help"])).contains("generate"), "hidden from help")
    }
}
