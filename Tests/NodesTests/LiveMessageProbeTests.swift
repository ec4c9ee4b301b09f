import Foundation
import Nodes
import Testing
import WorkoutModel

/// `LiveDriver.isLiveMessage` reads a payload's `kind` by hand where it can (`MessageKind`); what it
/// answers must be what decoding the payload's `kind` answers.
@Suite("Live message probe: the byte check agrees with decoding")
struct LiveMessageProbeTests {
    static func decoded(_ payload: [UInt8]) -> Bool {
        struct Probe: Decodable { var kind: String? }
        let kind = try? JSONDecoder().decode(Probe.self, from: Data(payload)).kind
        return kind == "progress" || kind == "ended"
    }

    @Test("live frames, workout updates, escaped kinds and damaged bytes")
    func agrees() {
        let payloads = [
            #"{"kind":"progress","run":"x"}"#, #"{"kind":"ended"}"#, #"{ "kind" : "ended" }"#,
            #"{"kind":"pr\u006fgress"}"#, #"{"\u006bind":"ended"}"#, #"{"kind":"workoutUpdate","schemaVersion":1}"#,
            #"{"kind":"requestSync","schemaVersion":1}"#, #"{"note":"ended","kind":"workoutUpdate"}"#,
            #"{"kind":"ended""#, #"["progress"]"#, #"{"kind":"progress\"}"#, #"{"endedAt":"x","kind":"x"}"#,
            "", "{", #"{"kind":null}"#, #"{"kind":"ende"}"#, #"{"kind":"Progress"}"#,
        ]
        var live = 0
        for text in payloads + Self.more {
            let bytes = Array(text.utf8)
            #expect(LiveDriver.isLiveMessage(bytes) == Self.decoded(bytes), "\(text)")
            if Self.decoded(bytes) { live += 1 }
        }
        #expect(live == 10)
        // Every prefix of a live frame, and each byte of it replaced by a quote or a backslash.
        let frame = Array(#"{"kind":"progress","version":3}"#.utf8)
        for end in 0...frame.count {
            #expect(LiveDriver.isLiveMessage(Array(frame[..<end])) == Self.decoded(Array(frame[..<end])))
        }
        for index in frame.indices {
            for byte in [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "x")] {
                var damaged = frame
                damaged[index] = byte
                #expect(LiveDriver.isLiveMessage(damaged) == Self.decoded(damaged))
            }
        }
    }

    /// A run's update as the watch sends it (slashes escaped, nested objects and arrays), and members
    /// the reader leaves to `JSONDecoder` or refuses.
    static let more = [
        Self.update,
        #"{"kind":"workoutUpdate","kind":"progress"}"#, #"{"kind":"progress","kind":"ended"}"#, #"{"kind":5}"#,
        #"{"kind":"progress"} x"#, #"{"kind":"progress"}{"#, #"{"run":{"kind":"progress"}}"#,
        #"{"kind":"pro\/gress"}"#, "\t{\n\"kind\" :\r\"ended\"\n}\n", #"{"kind":"progress","n":1e400}"#,
        #"{"kind":"progress","n":01}"#, #"{"kind":"ended","x":[1,{"y":[true,false,null]}]}"#,
    ]

    static let update =
        #"{"epoch":"2026-12-05T09:35:16.910263Z","kind":"workoutUpdate","schemaVersion":1,"workout":{"id":"D663A2CB","#
        + #""logs":[{"exercise":{"name":"Squat \"low\" bar"},"sets":[{"done":true,"reps":5,"weight":100.5}]}],"#
        + #""version":"2026-12-05T09:35:16.910263Z\/0\/watch"}}"#

    @Test("a run's update is read by hand, not decoded")
    func updateReadByHand() {
        #expect(MessageKind.readByHand(Array(Self.update.utf8)) == .some("workoutUpdate"))
        #expect(!LiveDriver.isLiveMessage(Array(Self.update.utf8)))
    }
}
