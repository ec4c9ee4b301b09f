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
    /// Each `data send` still going: what it sends, how many sends are left after the one in
    /// flight, when that one went, and the round trips so far.
    private var sending: [AdminRequestID: Sending] = [:]

    private struct Sending: Sendable {
        var bytes: [UInt8]
        var wantsReply: Bool
        var left: Int
        var at: Timestamp
        var roundTrips: [Double] = []
    }

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
        case .send(let bytes, let wantsReply, let count):
            sentCount += 1
            sending[request] = Sending(bytes: bytes, wantsReply: wantsReply, left: count - 1, at: now)
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

    /// The outcome of request N's message: the next send of a `--count`, or the reply (from the
    /// last outcome, with every round trip); a failure ends it, refused and logged.
    mutating func sendEnded(_ request: AdminRequestID, _ outcome: MessageOutcome, now: Timestamp) -> [NodeAction] {
        guard var sent = sending.removeValue(forKey: request) else { return [] }
        let milliseconds = Double(sent.at.duration(to: now).wholeMicroseconds) / 1000
        sent.roundTrips.append(milliseconds)
        let reply: AdminOutcome
        switch outcome {
        case .replied, .delivered:
            if sent.left > 0 {
                sent.left -= 1
                sent.at = now
                sentCount += 1
                sending[request] = sent
                return [.link(.sendMessageData(sent.bytes, wantsReply: sent.wantsReply, .dataCommand(request)))]
            }
            var bytesBack: [UInt8]?
            if case .replied(let bytes) = outcome { bytesBack = bytes }
            let summary = AdminReply.DataSent(
                outcome: bytesBack == nil ? "delivered" : "replied", bytes: sent.bytes.count,
                reply: bytesBack.map { DataCommand.hex($0) }, roundTripMilliseconds: milliseconds,
                roundTripsMilliseconds: sent.roundTrips.count > 1 ? sent.roundTrips : nil)
            var text =
                bytesBack.map { "replied with \($0.count) bytes: \(DataCommand.hex($0))" }
                ?? "delivered \(sent.bytes.count) bytes"
            if sent.roundTrips.count > 1 {
                let sorted = sent.roundTrips.sorted()
                let p99 = sorted[max(0, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
                text +=
                    "\n\(sorted.count) sent; round trip p50 \(sorted[sorted.count / 2]) ms, p99 \(p99) ms, max \(sorted.last ?? 0) ms"
            }
            reply = .output(text: text, json: AdminOutcome.json(summary))
        case .failed(let error):
            return [
                .log(
                    LogLine(
                        .notice, "admin", "refused admin request", [("command", "data send"), ("reason", "\(error)")])),
                .reply(request, AdminOutcome.refused("\(error)").response),
            ]
        }
        return [.reply(request, reply.response)]
    }
}
