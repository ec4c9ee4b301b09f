import AdminCommands
import LinkProtocol
import WorkoutModel

/// The app side of `sendMessageData`, the same in both nodes: the `data` verbs and the data
/// messages the peer sends.
///
/// Received bytes are never decoded: the model app keeps the newest `keptCount` for `data received`
/// and answers each at once, echoing the bytes when the sender asked for a reply (so a round trip
/// can be checked byte for byte) and `handled` otherwise. A `data send` is answered when its one
/// outcome comes back from the link (`MessagePurpose.dataCommand`): replied, delivered, or the
/// error — `notReachable`, `payloadTooLarge`, `messageReplyTimedOut`, `deliveryFailed` — as a
/// refusal (exit 1).
package struct DataMessages: Sendable {
    /// How many received messages `data received` keeps.
    package static let keptCount = 32

    package private(set) var received: [AdminReply.DataReceived] = []
    package private(set) var receivedCount = 0
    package private(set) var sentCount = 0
    /// The size of each `data send` still waiting for its outcome, and when it was sent.
    private var sending: [AdminRequestID: (bytes: Int, at: Timestamp)] = [:]

    package init() {}

    /// A data message from the peer: kept, then answered.
    mutating func received(id: UInt64, payload: [UInt8], wantsReply: Bool, now: Timestamp) -> [NodeAction] {
        receivedCount += 1
        received.append(
            AdminReply.DataReceived(
                receivedAt: now.iso8601, bytes: payload.count, hex: DataCommand.hex(payload), wantsReply: wantsReply))
        if received.count > Self.keptCount { received.removeFirst(received.count - Self.keptCount) }
        return [
            .log(LogLine(.info, "link", "data message received", [("bytes", "\(payload.count)")])),
            .link(.answerMessage(id: id, wantsReply ? .reply(payload) : .handled)),
        ]
    }

    /// Serves a `data` verb: `received` is answered now; `send` goes to the link and is answered
    /// with its outcome (`sendEnded`).
    mutating func serve(_ command: DataCommand, request: AdminRequestID, now: Timestamp) -> [NodeAction] {
        switch command {
        case .send(let bytes, let wantsReply):
            sentCount += 1
            sending[request] = (bytes.count, now)
            return [.link(.sendMessageData(bytes, wantsReply: wantsReply, .dataCommand(request)))]
        case .received:
            let text = received.map { message in
                "\(message.receivedAt)  \(message.bytes) bytes  \(message.hex.prefix(64))"
                    + (message.hex.count > 64 ? "…" : "") + (message.wantsReply ? "  (replied)" : "")
            }
            let outcome = AdminOutcome.output(
                text: AdminOutcome.lines(text, empty: "no data messages"), json: AdminOutcome.json(received))
            return [.reply(request, outcome.response)]
        }
    }

    /// The reply to request N's `data send`, from its message's outcome; a refusal is logged.
    mutating func sendEnded(_ request: AdminRequestID, _ outcome: MessageOutcome, now: Timestamp) -> [NodeAction] {
        let sent = sending.removeValue(forKey: request)
        let bytes = sent?.bytes ?? 0
        let milliseconds = sent.map { Double($0.at.duration(to: now).wholeMicroseconds) / 1000 }
        let reply: AdminOutcome
        switch outcome {
        case .replied(let bytesBack):
            let sent = AdminReply.DataSent(
                outcome: "replied", bytes: bytes, reply: DataCommand.hex(bytesBack), roundTripMilliseconds: milliseconds)
            reply = .output(
                text: "replied with \(bytesBack.count) bytes: \(sent.reply ?? "")", json: AdminOutcome.json(sent))
        case .delivered:
            let sent = AdminReply.DataSent(
                outcome: "delivered", bytes: bytes, reply: nil, roundTripMilliseconds: milliseconds)
            reply = .output(text: "delivered \(bytes) bytes", json: AdminOutcome.json(sent))
        case .failed(let error):
            return [
                .log(LogLine(.notice, "admin", "refused admin request", [("command", "data send"), ("reason", "\(error)")])),
                .reply(request, AdminOutcome.refused("\(error)").response),
            ]
        }
        return [.reply(request, reply.response)]
    }
}
