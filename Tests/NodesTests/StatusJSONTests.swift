import AdminCommands
import Foundation
import Nodes
import Testing

/// `status --json` names every key docs/CLI.md documents, with `null` for what is absent.
@Suite("status --json: absent values are null, never missing keys")
struct StatusJSONTests {
    static func object(_ response: AdminResponse) throws -> [String: Any] {
        let json = try #require(response.json)
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("phoned: pushError, the edit locks and the heartbeat are null before they have a value")
    func phone() throws {
        var pair = NodePair()
        let status = try Self.object(pair.phonectl(.status))
        for key in ["pushError", "editingWorkoutID", "editingSplitID", "watchInstance", "lastPushAt"] {
            #expect(status.keys.contains(key), "\(key) missing: \(status.keys.sorted())")
            #expect(status[key] is NSNull, "\(key): \(String(describing: status[key]))")
        }
        #expect(status["splits"] as? Int == 0)
    }

    @Test("watchd: the locks, the last skipped context and the complication are null before they have a value")
    func watch() throws {
        var pair = NodePair()
        let status = try Self.object(pair.watchctl(.status))
        for key in ["editingWorkoutID", "editingSplitID", "lastSkippedContext", "complication", "complicationSentAt"] {
            #expect(status.keys.contains(key), "\(key) missing: \(status.keys.sorted())")
            #expect(status[key] is NSNull, "\(key): \(String(describing: status[key]))")
        }
        #expect(status["workouts"] as? Int == 0)
    }
}
