import Foundation
import Nodes
import Testing

/// `LiveDriver.isLiveMessage` skips decoding a payload that cannot name a live kind; what it answers
/// must be what decoding the payload's `kind` answers.
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
        for text in payloads {
            let bytes = Array(text.utf8)
            #expect(LiveDriver.isLiveMessage(bytes) == Self.decoded(bytes), "\(text)")
            if Self.decoded(bytes) { live += 1 }
        }
        #expect(live == 5)
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
}
