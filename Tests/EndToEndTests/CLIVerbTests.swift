import AdminCommands
import ArgumentParsing
import Foundation
import TestSupport
import Testing

/// Every verb the CLIs parse, run against the real daemons: a verb the CLI accepts but the daemon
/// does not know (as `phonectl settings show` once was) exits 1 only when someone tries it.
@Suite("Every CLI verb against its daemon")
struct CLIVerbTests {
    /// Every leaf command below `spec`, as its path of words.
    static func leaves(of spec: CommandSpec, path: [String] = []) -> [(path: [String], spec: CommandSpec)] {
        spec.subcommands.isEmpty
            ? [(path, spec)] : spec.subcommands.flatMap { leaves(of: $0, path: path + [$0.name]) }
    }

    /// A command line for `leaf`: each positional and required option gets a plausible value; read
    /// verbs get `--json`.
    static func arguments(
        _ leaf: (path: [String], spec: CommandSpec), run: String, split: String
    ) -> [String] {
        let splitFirst = leaf.path.contains("split") || leaf.path == ["start"]
        var words = leaf.path
        for argument in leaf.spec.arguments {
            switch argument.name {
            case "run": words.append(run)
            case "id", "split": words.append(splitFirst ? split : run)
            case "exercise", "set", "sequence": words.append("1")
            case "position": words.append("up")
            default: Issue.record("no value for <\(argument.name)> of \(leaf.path)")
            }
        }
        for option in leaf.spec.options where option.isRequired {
            words += ["--\(option.name)", option.name == "exercise" ? "Row:1x5@40" : "test"]
        }
        if leaf.spec.flags.contains(.json) { words.append("--json") }
        return words
    }

    @Test("each verb of phonectl and watchctl is known to its daemon; read verbs exit 0 with JSON", arguments: [
        Device.phone, .watch,
    ])
    func everyVerbIsKnown(side: Device) async throws {
        let system = try SyncSystem("verbs")
        let (split, run) = try await system.startBothWithRun()
        let spec = side == .phone ? PhoneCommands.spec : WatchCommands.spec
        let daemon = side == .phone ? "phoned" : "watchd"
        let documented = try String(contentsOfFile: "\(SourceTree.root)/docs/CLI.md", encoding: .utf8)

        // Read verbs first, while the run and split exist; then the rest (refusals are fine there).
        let all = Self.leaves(of: spec).sorted { $0.spec.flags.contains(.json) && !$1.spec.flags.contains(.json) }
        #expect(all.count > 20)
        for leaf in all {
            let verb = leaf.path.joined(separator: " ")
            #expect(documented.contains("`\(verb)"), "docs/CLI.md does not list `\(verb)`")
            let words = Self.arguments(leaf, run: run, split: split)
            let result = side == .phone ? try await system.phonectl(words) : try await system.watchctl(words)
            #expect(!result.standardError.contains("does not know"), "\(daemon) does not know `\(verb)`: \(result)")
            if leaf.path == ["trace"] {
                // The raw journal: one JSON object per line, the daemon's start among them.
                let lines = result.standardOutput.split(separator: "\n")
                #expect(result.exitCode == 0 && lines.contains { $0.contains("\"event\":\"started\"") }, "\(result)")
                #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(result)")
            } else if leaf.spec.flags.contains(.json) {
                #expect(result.exitCode == 0, "\(words): \(result)")
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) != nil,
                    "\(words) printed no JSON: \(result)")
            } else {
                #expect(result.exitCode == 0 || result.exitCode == 1, "\(words): \(result)")
            }
        }
    }

    @Test("docs/CLI.md quotes the lock refusal watchd prints")
    func lockRefusalAsDocumented() async throws {
        let system = try SyncSystem("lockdoc")
        let (_, run) = try await system.startBothWithRun()
        _ = try await system.phone("lock", "workout", run)
        try await system.waitForWatchStatus("the lock reached the watch") {
            $0.editingWorkoutID?.uppercased() == run.uppercased()
        }
        let refused = try await system.watchctl("complete", run, "1", "1")
        #expect(refused.exitCode == 1)
        let quoted = refused.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: run, with: "RUN", options: .caseInsensitive)
        let documented = try String(contentsOfFile: "\(SourceTree.root)/docs/CLI.md", encoding: .utf8)
        #expect(documented.contains(quoted), "docs/CLI.md does not quote `\(quoted)`")
    }
}
