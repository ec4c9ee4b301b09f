import AdminCommands
import ArgumentParsing
import Foundation
import LinkProtocol
import Nodes
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

    /// The verbs that only read: they must succeed on a linked pair with a run.
    static let readVerbs: Set<String> = [
        "status", "splits", "workouts", "show", "settings", "settings show", "session show", "queue list", "live show",
        "trace", "metrics", "data received", "complication show", "file list",
        "file received",
    ]

    /// A command line for `leaf`: each positional and required option gets a plausible value, and
    /// `--json`, which every verb takes.
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
            case "payload", "text": words.append("hello")
            case "path": words.append("/dev/null")
            default: Issue.record("no value for <\(argument.name)> of \(leaf.path)")
            }
        }
        for option in leaf.spec.options where option.isRequired {
            words += ["--\(option.name)", option.name == "exercise" ? "Row:1x5@40" : "test"]
        }
        #expect(leaf.spec.flags.contains(.json), "\(leaf.path) does not take --json")
        return words + ["--json"]
    }

    @Test(
        "each verb of phonectl and watchctl is known to its daemon and answers --json; read verbs exit 0",
        arguments: [
            Device.phone, .watch,
        ])
    func everyVerbIsKnown(side: Device) async throws {
        let system = try SyncSystem("verbs")
        let (split, run) = try await system.startBothWithRun()
        let spec = side == .phone ? PhoneCommands.spec : WatchCommands.spec
        let daemon = side == .phone ? "phoned" : "watchd"
        let documented = try String(contentsOfFile: "\(SourceTree.root)/docs/CLI.md", encoding: .utf8)

        // Read verbs first, while the run and split exist; then the rest (refusals are fine there).
        let isRead = { (leaf: (path: [String], spec: CommandSpec)) in
            Self.readVerbs.contains(leaf.path.joined(separator: " "))
        }
        let all = Self.leaves(of: spec).sorted { isRead($0) && !isRead($1) }
        #expect(all.count > 20)
        for leaf in all {
            let verb = leaf.path.joined(separator: " ")
            #expect(documented.contains("`\(verb)"), "docs/CLI.md does not list `\(verb)`")
            let words = Self.arguments(leaf, run: run, split: split)
            let result = side == .phone ? try await system.phonectl(words) : try await system.watchctl(words)
            #expect(!result.standardError.contains("does not know"), "\(daemon) does not know `\(verb)`: \(result)")
            if isRead(leaf) { #expect(result.exitCode == 0, "\(words): \(result)") }
            if leaf.path == ["trace"] {
                // The raw journal: one JSON object per line, the daemon's start among them.
                let lines = result.standardOutput.split(separator: "\n")
                #expect(result.exitCode == 0 && lines.contains { $0.contains("\"event\":\"started\"") }, "\(result)")
                #expect(
                    lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(result)")
            } else if result.exitCode == 0 {
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) != nil,
                    "\(words) printed no JSON: \(result)")
            } else {
                #expect(result.exitCode == 1 && !result.standardError.isEmpty, "\(words): \(result)")
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
