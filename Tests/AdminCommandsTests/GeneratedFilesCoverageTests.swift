import AdminCommands
import ArgumentParsing
import Testing

@Suite("phonectl's and watchctl's completion scripts and man pages list every verb")
struct GeneratedFilesCoverageTests {
    @Test(
        "every leaf verb path is in the bash, zsh and fish scripts and the man page",
        arguments: ["phonectl", "watchctl"])
    func everyLeaf(tool: String) throws {
        let spec = tool == "phonectl" ? PhoneCommands.spec : WatchCommands.spec
        let bash = spec.bashCompletion()
        let zsh = spec.zshCompletion()
        let fish = spec.fishCompletion()
        let manPage = spec.manPage(manual: "WatchSync")
        // Walked here rather than with `allChains`, so a walk that missed a verb would be caught.
        func leafPaths(_ command: CommandSpec, _ path: [String]) -> [[String]] {
            command.isGroup ? command.subcommands.flatMap { leafPaths($0, path + [$0.name]) } : [path]
        }
        let leaves = leafPaths(spec, [])
        #expect(leaves.count > 20)
        for path in leaves {
            let words = path.joined(separator: " ")
            let parent = path.dropLast().joined(separator: " ")
            #expect(bash.contains("\"\(words)\") words=\""), "bash: \(words)")
            let offered = bash.split(separator: "\n").first { $0.hasPrefix("        \"\(parent)\") words=\"") }
            let offeredWords = offered?.split { $0 == " " || $0 == "\"" } ?? []
            #expect(offeredWords.contains(Substring(path[path.count - 1])), "bash offers \(words)")
            #expect(zsh.contains("(\"\(words)\") candidates=("), "zsh: \(words)")
            #expect(
                fish.contains("-n '__\(spec.name)_at \\'\(parent)\\'' -a \(path[path.count - 1]) -d "), "fish: \(words)"
            )
            let usage = try #require(spec.usageLine(path: path)).replacing("-", with: "\\-")
            #expect(manPage.contains(".TP\n\\fB\(usage)\\fR\n"), "man: \(words)")
        }
    }
}
