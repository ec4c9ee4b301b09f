import Foundation
import FuzzTargets
import TestSupport
import Testing

/// Replays the checked-in fuzz corpus (Tests/FuzzCorpus/<target>/, every crasher ever found included)
/// and the built-in seeds through the same checks the libFuzzer harnesses run (docs/FUZZING.md).
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    @Test("every corpus input and seed passes its target's properties", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let directory = "\(SourceTree.root)/Tests/FuzzCorpus/\(target.rawValue)"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        #expect(!names.isEmpty, "no corpus for \(target.rawValue) in \(directory)")
        var inputs = FuzzSeeds.inputs(for: target).enumerated().map { ("seed \($0.offset)", $0.element) }
        for name in names {
            inputs.append((name, Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)")))))
        }
        for (name, bytes) in inputs {
            #expect(throws: Never.self, "\(target.rawValue)/\(name)") { try target.check(bytes) }
        }
    }
}
