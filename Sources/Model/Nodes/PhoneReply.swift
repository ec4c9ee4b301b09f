import WorkoutModel

/// The phone's answer to a watch message (a workout update or requestSync), as bytes on the wire:
/// `{"outcome":"merged","phoneTime":"2026-12-07T05:30:00.000000Z"}`. `outcome` is the intake's
/// (`SyncEngine.IngestOutcome`, or `pushed` for requestSync); `phoneTime` is the phone's wall clock
/// when it answered, from which the watch learns how far the two clocks are apart (`WatchNode`).
package enum PhoneReply {
    /// The answer's bytes.
    package static func encoded(outcome: String, phoneTime: Timestamp) -> [UInt8] {
        Array("{\"outcome\":\"\(outcome)\",\"phoneTime\":\"\(phoneTime.iso8601)\"}".utf8)
    }

    /// The phone's clock in an answer, or nil when it has none (a phoned from before it was added).
    package static func phoneTime(_ reply: [UInt8]) -> Timestamp? {
        let key = Array("\"phoneTime\":\"".utf8)
        guard reply.count >= key.count + Timestamp.iso8601Length,
            let start = (0...(reply.count - key.count)).first(where: { reply[$0..<($0 + key.count)].elementsEqual(key) }
            )
        else { return nil }
        let text = reply[(start + key.count)...].prefix { $0 != UInt8(ascii: "\"") }
        return Timestamp(iso8601: String(decoding: text, as: UTF8.self))
    }
}
