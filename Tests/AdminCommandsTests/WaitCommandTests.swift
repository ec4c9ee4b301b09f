import AdminCommands
import ArgumentParsing
import Testing

@Suite("watchctl wait: its timeout")
struct WaitCommandTests {
    @Test(
        "the timeout is parsed in seconds, 0 to 25; anything else is a usage error",
        arguments: [
            (["wait"], 10_000), (["wait", "--timeout", "0"], 0), (["wait", "--timeout", "2.5"], 2_500),
            (["wait", "--timeout", "25"], 25_000), (["wait", "--timeout", "25.1"], nil),
            (["wait", "--timeout", "-1"], nil),
            (["wait", "--timeout", "nan"], nil), (["wait", "--timeout", "1e300"], nil),
            (["wait", "--timeout", "soon"], nil),
        ] as [([String], Int?)])
    func parsing(words: [String], milliseconds: Int?) throws {
        guard case .command(let parsed) = WatchCommands.spec.parse(words) else {
            Issue.record("\(words) did not parse")
            return
        }
        let command = try? WatchCommand(parsed)
        if let milliseconds {
            #expect(command == .waitSynced(milliseconds: milliseconds))
        } else {
            #expect(command == nil)
        }
    }

    @Test("a wait decoded off the socket with a timeout out of range is refused before it is served")
    func wireValidation() {
        #expect(throws: UsageError.self) { try WatchCommand.waitSynced(milliseconds: 25_001).validate() }
        #expect(throws: UsageError.self) { try WatchCommand.waitSynced(milliseconds: -1).validate() }
    }
}
