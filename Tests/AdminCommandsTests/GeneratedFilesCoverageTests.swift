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
        let leaves = spec.allChains.filter { !$0[$0.count - 1].isGroup }
        #expect(leaves.count > 20)
        for chain in leaves {
            let path = chain.dropFirst().map(\.name)
            let words = path.joined(separator: " ")
            #expect(bash.contains("\"\(words)\") words=\""), "bash: \(words)")
            #expect(zsh.contains("(\"\(words)\") candidates=("), "zsh: \(words)")
            let parent = path.dropLast().joined(separator: " ")
            #expect(
                fish.contains("-n '__\(spec.name)_at \\'\(parent)\\'' -a \(path[path.count - 1]) -d "), "fish: \(words)"
            )
            let usage = try #require(spec.usageLine(path: path)).replacing("-", with: "\\-")
            #expect(manPage.contains(".TP\n\\fB\(usage)\\fR\n"), "man: \(words)")
        }
    }
}
