import Foundation
import TestSupport
import Testing

/// One scheduler (docs/ARCHITECTURE.md, "One scheduler"): only `NodeRunner` feeds a node its events
/// and holds the link's events behind writes; a host that did either would be a second copy of the
/// scheduler, which the simulator would then not test.
@Suite("One scheduler: only NodeRunner feeds a node")
struct SchedulerTests {
    /// Where a node is fed: `NodeRunner` feeds the `LinkedNode`, which feeds its inner node.
    static let feeders: Set<String> = ["NodeRunner.swift", "LinkedNode.swift"]

    /// The calls in `source` that feed a node events or hold link events, ignoring `//` comments.
    static func schedulingCalls(in source: String) -> [String] {
        codeWithoutComments(source).split(separator: "\n").map(String.init).filter { line in
            // A node's `handle` takes `reads:` (`ShelledNode`, `LinkedNode`); nothing else's does.
            line.contains(".handle(") && (line.contains("reads:") || line.contains("linkNow:"))
                || line.contains("LinkEventHold(")
        }
    }

    /// Every Swift file under Sources/, at any depth, as (path relative to the tree, contents).
    static func allSources() throws -> [(path: String, text: String)] {
        let root = "\(SourceTree.root)/Sources"
        return try FileManager.default.subpathsOfDirectory(atPath: root).sorted()
            .filter { $0.hasSuffix(".swift") }
            .map { ("Sources/\($0)", try String(contentsOfFile: "\(root)/\($0)", encoding: .utf8)) }
    }

    @Test("no source file but NodeRunner's and LinkedNode's feeds a node events or holds the link's events")
    func onlyTheRunnerFeedsNodes() throws {
        var found: [String] = []
        for (path, text) in try Self.allSources() {
            let name = String(path.split(separator: "/").last ?? "")
            guard !Self.feeders.contains(name) else { continue }
            found += Self.schedulingCalls(in: text).map { "\(path): \($0.trimmingCharacters(in: .whitespaces))" }
        }
        #expect(
            found.isEmpty, "only NodeRunner decides the order of a node's events:\n\(found.joined(separator: "\n"))")
    }

    @Test("the check is meaningful: a host that fed its node itself, or held link events, is caught")
    func checkCatchesASecondScheduler() {
        let host = """
            // node.handle(event, now: wallNow, linkNow: linkNow, reads: reads) in a comment is fine
            actions = try node.handle(event, now: wallNow, linkNow: linkNow, reads: reads)
            var hold = LinkEventHold()
            """
        #expect(Self.schedulingCalls(in: host).count == 2)
        #expect(Self.schedulingCalls(in: "engine.handle(.tick(now: now))").isEmpty)
    }
}
