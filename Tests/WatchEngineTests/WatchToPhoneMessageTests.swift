import TestSupport
import Testing
import WatchEngine
import WorkoutModel

@Suite("Watch → phone payload")
struct WatchToPhoneMessageTests {
    @Test("requestSync has a fixed, versioned JSON shape")
    func requestSyncShape() {
        #expect(
            String(decoding: WatchToPhoneMessage.requestSync.encoded(), as: UTF8.self)
                == #"{"kind":"requestSync","schemaVersion":1}"#)
    }

    @Test("a workout update carries the whole document and round-trips")
    func workoutUpdateRoundTrips() throws {
        var run = try newRun(100)
        try run.pause(at: at(3))
        let message = WatchToPhoneMessage.workoutUpdate(run)
        let text = String(decoding: message.encoded(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"kind":"workoutUpdate","schemaVersion":1,"workout":{"#))
        #expect(try DocumentCoder.decode(WatchToPhoneMessage.self, from: message.encoded()) == message)
        #expect(message.runID == id(100))
    }

    @Test("an unknown version, an unknown kind or a document of an unknown schema is refused")
    func refusals() throws {
        #expect(throws: DocumentError.unsupportedSchemaVersion(type: "WatchToPhoneMessage", found: 2, supported: 1)) {
            try DocumentCoder.decode(
                WatchToPhoneMessage.self, from: Array(#"{"kind":"requestSync","schemaVersion":2}"#.utf8))
        }
        #expect(throws: DocumentError.self) {
            try DocumentCoder.decode(WatchToPhoneMessage.self, from: Array(#"{"kind":"shout","schemaVersion":1}"#.utf8))
        }
        var run = try newRun(100)
        run.schemaVersion = 3
        #expect(throws: DocumentError.unsupportedSchemaVersion(type: "WorkoutDocument", found: 3, supported: 2)) {
            try DocumentCoder.decode(WatchToPhoneMessage.self, from: WatchToPhoneMessage.workoutUpdate(run).encoded())
        }
    }

    @Test("a launch request names its run and round-trips")
    func launchRequest() throws {
        let request = WorkoutLaunchRequest(runID: id(100))
        #expect(String(decoding: request.encoded(), as: UTF8.self) == #"{"runID":"\#(id(100))","schemaVersion":1}"#)
        #expect(try DocumentCoder.decode(WorkoutLaunchRequest.self, from: request.encoded()) == request)
    }
}
