import AdminCommands
import Foundation
import Nodes
import Simulation
import Testing
import WorkoutModel

/// `status --json` names every key docs/CLI.md documents, with `null` for what is absent.
@Suite("status --json: absent values are null, never missing keys")
struct StatusJSONTests {
    static func object(_ response: AdminResponse?) throws -> [String: Any] {
        let json = try #require(response?.json)
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// Each of `keys` is in the status and null.
    static func expectNull(_ keys: [String], in status: [String: Any]) {
        for key in keys {
            #expect(status.keys.contains(key), "\(key) missing: \(status.keys.sorted())")
            #expect(status[key] is NSNull, "\(key): \(String(describing: status[key]))")
        }
    }

    @Test("phoned: pushError, the edit locks and the heartbeat are null before they have a value")
    func phone() throws {
        let pair = Simulator.scripted(linked: false)
        let status = try Self.object(pair.phone(.status))
        Self.expectNull(["pushError", "editingWorkoutID", "editingSplitID", "watchInstance", "lastPushAt"], in: status)
        #expect(status["splits"] as? Int == 0)
    }

    @Test("watchd: the locks, the last skipped context and the complication are null before they have a value")
    func watch() throws {
        let pair = Simulator.scripted(linked: false)
        let status = try Self.object(pair.watch(.status))
        Self.expectNull(
            ["editingWorkoutID", "editingSplitID", "lastSkippedContext", "complication", "complicationSentAt"],
            in: status)
        #expect(status["workouts"] as? Int == 0)
    }

    @Test("a status decodes back: a null as nil, a missing optional key as nil, a value as itself")
    func decodesBack() throws {
        let pair = Simulator.scripted(linked: false)
        let json = try #require(pair.watch(.status)?.json)
        var status = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        status["complicationSentAt"] = nil
        status["contextSender"] = "phone-1"
        let decoded = try JSONDecoder().decode(
            WatchStatus.self, from: try JSONSerialization.data(withJSONObject: status))
        #expect(decoded.complicationSentAt == nil)
        #expect(decoded.editingWorkoutID == nil)
        #expect(decoded.contextSender == "phone-1")
        let again = try Self.object(AdminResponse(status: .ok, json: AdminOutcome.json(decoded)))
        Self.expectNull(["complicationSentAt", "editingWorkoutID"], in: again)
    }

    @Test("splits the push leaves out to fit are counted in status, and said in its text")
    func heldBackSplits() throws {
        let pair = Simulator.scripted()
        // Nine splits of as many one-set exercises with the longest names and equipment as a run of
        // them may hold (`SplitDocument.ruleProblem`): about 33 KB each, over the 262,144-byte context
        // together, while all splits get half of it when everything does not fit.
        let long = String(repeating: "x", count: SplitDocument.maximumNameBytes)
        var exercises = (1...SplitDocument.maximumExercises).map { _ in
            ExerciseTemplate(name: long, equipment: long, targetSets: 1, targetReps: 5, targetWeight: 10)
        }
        while SplitDocument.ruleProblem(name: "Big 9", exercises: exercises) != nil { exercises.removeLast() }
        #expect(exercises.count > 40, "\(exercises.count)")
        for n in 1...9 { _ = pair.phone(.createSplit(name: "Big \(n)", exercises: exercises)) }
        let status = try Self.object(pair.phone(.status))
        let held = try #require(status["heldBackSplits"] as? Int)
        #expect(held > 0 && held < 9, "\(held)")
        #expect(status["splits"] as? Int == 9)
        #expect(pair.phone(.status)?.text?.contains("\(held) splits held back to fit") == true)
    }
}

@Suite("watchd status: skipped cache files")
struct SkippedCacheFileTests {
    @Test("a cache file skipped at start-up leaves the list once the watch writes that file itself")
    func rewrittenFileLeaves() throws {
        let (pair, _) = try ScriptedScenarioTests.started()
        let split = try #require(pair.watchNode?.engine.cache.splits.keys.first)
        let skipped = [
            "/cache/Splits/\(split).json: malformed", "/cache/Splits/notes.txt: not a <UUID>.json document file",
        ]
        pair.killWatch()
        pair.restartWatch(skippedCacheFiles: skipped)
        pair.advance(by: .seconds(3))
        #expect(pair.watchNode?.skippedCacheFiles == skipped)
        #expect(pair.watch(.status)?.text?.contains("skipped cache files: 2") == true)
        _ = pair.phone(.editSplit(id: split, name: "Renamed", exercises: nil))
        #expect(pair.watchNode?.skippedCacheFiles == [skipped[1]])
        let text = try #require(pair.watch(.status)?.text)
        #expect(text.contains("skipped cache files: 1\n  \(skipped[1])"), "\(text)")
        #expect(text.contains("live frames: 0 sent, 0 received"), "\(text)")
    }
}
