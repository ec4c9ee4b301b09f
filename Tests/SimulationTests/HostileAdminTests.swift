import AdminCommands
import ArgumentParsing
import Foundation
import Nodes
import Simulation
import Testing
import WorkoutModel

/// The admin socket takes any bytes, not only what phonectl and watchctl send. Every verb's request,
/// with each number and string in it replaced by an extreme (negative, zero, the 64-bit bounds, a
/// huge age), goes through the daemons' one decoder; what it accepts must not trap a node. Before
/// the decoder held requests to the CLI's checks, `workouts` with a negative `limit`, `data send`
/// with a `count` of Int.min and a `trace` or `workouts` age past 64 bits each killed the daemon.
/// Here both daemons, under the simulator, take every such request.
@Suite("Hostile admin requests to both daemons")
struct HostileAdminTests {
    static var numbers: [Any] { [-1, 0, Int.min, Int.max, 1e308, -1e308] }
    static let strings = ["", "9999999999999999d", "-5m", String(repeating: "x", count: 70_000)]

    @Test("every verb with extreme values is refused or answered, and never traps phoned or watchd")
    func extremes() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        let starts = pair.starts
        var accepted = 0
        var refused = 0
        for request in Self.requests(PhoneCommands.spec, run: run, as: PhoneCommand.self) {
            switch AdminWire.decode(request, as: PhoneCommand.self) {
            case .success(let command):
                accepted += 1
                pair.phone(command)
            case .failure: refused += 1
            }
        }
        for request in Self.requests(WatchCommands.spec, run: run, as: WatchCommand.self) {
            switch AdminWire.decode(request, as: WatchCommand.self) {
            case .success(let command):
                accepted += 1
                pair.watch(command)
            case .failure: refused += 1
            }
        }
        #expect(accepted > 50 && refused > 100, "accepted \(accepted), refused \(refused)")
        // A daemon that exited is started again (a trap would end the test run itself).
        pair.advance(by: .seconds(3))
        #expect(pair.starts == starts, "a daemon exited")
    }

    /// Each leaf of `spec` as a valid request about `run`, then with every number and string in it
    /// replaced by each extreme in turn.
    static func requests<Command: AdminCommand>(
        _ spec: CommandSpec, run: DocumentID, as type: Command.Type
    ) -> [[UInt8]] {
        var requests: [[UInt8]] = []
        for (path, leaf) in leaves(spec) {
            guard case .command(let parsed) = spec.parse(arguments(path, leaf, run: run)),
                let command = try? Command(parsed),
                let object = try? JSONSerialization.jsonObject(with: Data(AdminWire.encode(command)))
            else {
                Issue.record("no valid request for \(path)")
                continue
            }
            for mutated in mutations(of: object) {
                if let data = try? JSONSerialization.data(withJSONObject: mutated) { requests.append(Array(data)) }
            }
        }
        return requests
    }

    static func leaves(_ spec: CommandSpec, path: [String] = []) -> [([String], CommandSpec)] {
        spec.subcommands.isEmpty ? [(path, spec)] : spec.subcommands.flatMap { leaves($0, path: path + [$0.name]) }
    }

    static func arguments(_ path: [String], _ leaf: CommandSpec, run: DocumentID) -> [String] {
        var words = path
        for argument in leaf.arguments {
            switch argument.name {
            case "exercise", "set", "sequence": words.append("1")
            case "position": words.append("up")
            case "payload", "text", "failure": words.append("00ff")
            case "path": words.append("/dev/null")
            default: words.append(run.description)
            }
        }
        for option in leaf.options where !["socket", "config", "unit"].contains(option.name) {
            switch option.name {
            case "exercise": words += ["--exercise", path.first == "split" ? "Squat:3x5@100" : "1"]
            case "name", "metadata", "failure": words += ["--\(option.name)", option.name == "metadata" ? "{}" : "X"]
            case "after", "run": words += ["--\(option.name)", run.description]
            case "since", "until": words += ["--\(option.name)", "5m"]
            default: words += ["--\(option.name)", "3"]
            }
        }
        return words
    }

    /// `value` with each number or string in it replaced by each extreme, one at a time.
    static func mutations(of value: Any) -> [Any] {
        switch value {
        case let object as [String: Any]:
            return object.keys.sorted().flatMap { key in
                mutations(of: object[key]!).map { replacement -> Any in
                    var copy = object
                    copy[key] = replacement
                    return copy
                }
            }
        case let array as [Any]:
            return array.indices.flatMap { index in
                mutations(of: array[index]).map { replacement -> Any in
                    var copy = array
                    copy[index] = replacement
                    return copy
                }
            }
        case is String: return strings
        case is Bool: return []  // JSONSerialization's booleans are NSNumbers too: test them first
        case is NSNumber: return numbers
        default: return []
        }
    }
}
