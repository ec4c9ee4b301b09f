import Nodes
import Testing
import WorkoutModel

@Suite("The phone's answer to a watch message")
struct PhoneReplyTests {
    @Test("carries the phone's clock, read back as it was written; an older phoned's answer has none")
    func phoneTimeRoundTrips() throws {
        let now = try #require(Timestamp(iso8601: "2026-12-07T05:30:00.123456Z"))
        let reply = PhoneReply.encoded(outcome: "merged", phoneTime: now)
        #expect(
            String(decoding: reply, as: UTF8.self) == #"{"outcome":"merged","phoneTime":"2026-12-07T05:30:00.123456Z"}"#
        )
        #expect(PhoneReply.phoneTime(reply) == now)
        #expect(PhoneReply.phoneTime(Array(#"{"outcome":"pushed"}"#.utf8)) == nil)
        #expect(PhoneReply.phoneTime(Array(#"{"phoneTime":"yesterday"}"#.utf8)) == nil)
        #expect(PhoneReply.phoneTime([]) == nil)
    }
}
