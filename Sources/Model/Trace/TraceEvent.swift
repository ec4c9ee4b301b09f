import FoundationEssentials

/// One line of a daemon's event journal (docs/TRACE.md): what happened, on which side, when, and the
/// causal id that ties a send on one side to its receipt on the other.
///
/// Causal ids name the thing that crossed the link, so both sides compute the same one:
/// `ctx:<sender instance>/<generation>` for an application context, `msg:<sender instance>/<id>` for a
/// message, `xfer:<queue id>/<sequence>` for a transfer, `launch` for a launch. An acknowledgement or
/// reply carries the id of what it answers.
package struct TraceEvent: Codable, Equatable, Sendable {
    /// Which daemon wrote the line.
    package enum Side: String, Codable, Sendable, CaseIterable {
        case phone, watch

        package var peer: Side { self == .phone ? .watch : .phone }
    }

    package var side: Side
    /// The daemon's instance ID (kept for the state directory's life).
    package var instance: String
    /// Microseconds since the Unix epoch (orders the two journals against each other on one host).
    package var wall: Int64
    /// Microseconds since this daemon process started (monotonic; orders one journal exactly).
    package var mono: Int64
    package var event: TraceEventKind
    package var cause: String?
    /// The run (document ID) the event is about, when the daemon knows it.
    package var run: String?
    /// A short human detail: a decision, a reason, a frame's sizes.
    package var detail: String?

    package init(
        side: Side, instance: String, wall: Int64, mono: Int64, event: TraceEventKind, cause: String? = nil,
        run: String? = nil, detail: String? = nil
    ) {
        self.side = side
        self.instance = instance
        self.wall = wall
        self.mono = mono
        self.event = event
        self.cause = cause
        self.run = run
        self.detail = detail
    }

    /// Causal id of a context generation from `sender`.
    package static func contextCause(sender: String, generation: UInt64) -> String { "ctx:\(sender)/\(generation)" }
    /// Causal id of message `id` sent by `sender`.
    package static func messageCause(sender: String, id: UInt64) -> String { "msg:\(sender)/\(id)" }
    /// Causal id of transfer `sequence` of `queue`.
    package static func transferCause(queue: String, sequence: UInt64) -> String { "xfer:\(queue)/\(sequence)" }
}

/// What a journal line records. A `…Send` and its `…Receive` with the same causal id are one arrow
/// between the two daemons; the rest happen on one side.
package enum TraceEventKind: String, Codable, Sendable, CaseIterable {
    case started = "started"
    case linkUp = "link.up"
    case linkDown = "link.down"
    case reachability = "reachability"
    case contextSend = "context.send"
    case contextReceive = "context.receive"
    case contextAckSend = "context.ack.send"
    case contextAckReceive = "context.ack.receive"
    /// The app asked to send a message (nothing may reach the wire: see `messageFailed`).
    case messageAttempt = "message.attempt"
    case messageSend = "message.send"
    case messageReceive = "message.receive"
    case messageReplySend = "message.reply.send"
    case messageReplyReceive = "message.reply.receive"
    /// The message's outcome was a failure (not reachable, timed out, refused by the peer).
    case messageFailed = "message.failed"
    /// A transfer was appended to the durable outbox.
    case transferQueued = "transfer.queued"
    case transferSend = "transfer.send"
    case transferReceive = "transfer.receive"
    case transferAckSend = "transfer.ack.send"
    case transferAckReceive = "transfer.ack.receive"
    case transferFailed = "transfer.failed"
    case transferCancelled = "transfer.cancelled"
    case launchSend = "launch.send"
    case launchReceive = "launch.receive"
    case launchDropped = "launch.dropped"
    /// The phone's intake decided about a watch update (merged, vetoed, staged, dropped, …).
    case ingest = "ingest"
    /// The phone's SyncEngine built a state push (the `context.send` after it carries its generation;
    /// an unchanged state sends none).
    case push = "push"
    /// A document file was written (phone) or cached (watch).
    case fileWritten = "file.written"
    /// The watch's workout session changed state (running, ended …).
    case session = "session"
    /// The app launched (and its session activated: `activationDidComplete`) or stopped running.
    case app = "app"

    /// The step this event is of an exchange across the link, if it is one.
    package var crossing: (family: String, isSend: Bool)? {
        let parts = rawValue.split(separator: ".")
        guard let last = parts.last, last == "send" || last == "receive" else { return nil }
        return (parts.dropLast().joined(separator: "."), last == "send")
    }
}

extension TraceEvent {
    /// One JSON object without newlines: a journal line (the newline is the writer's).
    package func jsonLine() -> String { String(decoding: jsonLineBytes(), as: UTF8.self) }

    /// `jsonLine()`'s bytes, written by hand (a daemon writes several lines per edit on its loop):
    /// `JSONEncoder`'s with sorted keys and slashes left unescaped, byte for byte (`TraceEventTests`).
    package func jsonLineBytes() -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(160 + (detail?.utf8.count ?? 0))
        func member(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            field(key)
            Self.appendString(value, to: &bytes)
        }
        func field(_ key: StaticString) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: "\":".utf8)
        }
        member("cause", cause)
        member("detail", detail)
        member("event", event.rawValue)
        member("instance", instance)
        field("mono")
        bytes.append(contentsOf: mono.description.utf8)
        member("run", run)
        member("side", side.rawValue)
        field("wall")
        bytes.append(contentsOf: wall.description.utf8)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `text` as a JSON string, as `JSONEncoder` with `.withoutEscapingSlashes` writes it (the admin
    /// replies share it): `"` and `\\` escaped, control characters as `\\b \\f \\n \\r \\t` or
    /// `\\u00xx`, every other UTF-8 byte as it is.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        appendQuoted(text, to: &bytes, escapingDelete: false) { byte in
            switch byte {
            case 0x08: UInt8(ascii: "b")
            case 0x0C: UInt8(ascii: "f")
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            default: nil
            }
        }
    }

    /// `text` between double quotes: `"` and `\\` escaped, each control byte `letter` names as a
    /// backslash and that letter, every other byte below 0x20 (and DEL with `escapingDelete`) as
    /// `\\u00xx`, every other UTF-8 byte as it is (JSON's strings, and the log's quoted values).
    package static func appendQuoted(
        _ text: String, to bytes: inout [UInt8], escapingDelete: Bool, letter: (UInt8) -> UInt8?
    ) {
        // Byte by byte, with no array made per escape: an admin reply carries a run's JSON (kilobytes,
        // a quote every few bytes) as one string.
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            } else if byte < 0x20 || escapingDelete && byte == 0x7F {
                if let letter = letter(byte) {
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(letter)
                } else {
                    bytes.append(contentsOf: #"\u00"#.utf8)
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0xF))
                }
            } else {
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The lowercase hexadecimal digit for `value` (0...15).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Parses one journal line; nil for a line that is not one (a torn last line after a crash).
    package static func parse(_ line: some StringProtocol) -> TraceEvent? {
        try? JSONDecoder().decode(TraceEvent.self, from: Data(line.utf8))
    }

    /// Every event in `text` (journal lines), skipping lines that do not parse.
    package static func parseLines(_ text: String) -> [TraceEvent] {
        text.split(separator: "\n").compactMap { parse($0) }
    }

    /// The default human form: `2026-12-01T01:02:03.456Z watch transfer.send xfer:…/3 run=… detail`.
    package var humanLine: String {
        var line = "\(TraceTime.iso8601(micros: wall)) \(side.rawValue) \(event.rawValue)"
        if let cause { line += " \(cause)" }
        if let run { line += " run=\(run)" }
        if let detail { line += " \(detail)" }
        return line
    }
}
