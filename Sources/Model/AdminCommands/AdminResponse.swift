import FoundationEssentials
import Trace
import WorkoutModel

/// A daemon's answer to one `AdminCommand`: the typed envelope of every reply.
///
/// Wire format: one JSON object and a newline, e.g.
/// `{"status":"ok","text":"link: up\n","json":"{\"link\":\"up\"}"}`. A long reply to a client that
/// asked for it in chunks is several: each chunk has `more: true` and the last one has none; the
/// reply is the chunks' `text` (and `json`) concatenated in order (docs/PROTOCOL.md, "Admin socket").
package struct AdminResponse: Codable, Sendable, Equatable {
    /// How the daemon disposed of the request.
    package enum Status: String, Codable, Sendable {
        /// Done; `text`/`json` hold the output. The CLI exits 0.
        case ok
        /// The daemon understood and declined (wrong state, unknown ID); `message` says why in words
        /// for the person. The CLI exits 1.
        case refused
        /// The request could not be handled (malformed, too large, an internal failure); `message`
        /// says what. The CLI exits 1.
        case error
    }

    /// How the daemon disposed of the request.
    package var status: Status
    /// For `refused` and `error`: what to tell the person, printed after `Error: `.
    package var message: String?
    /// Human-readable output, printed to stdout without `--json`.
    package var text: String?
    /// Machine-readable output — a complete JSON document as a string — printed with `--json`.
    /// In a chunked reply, each chunk's is a piece of that document.
    package var json: String?
    /// True on every chunk of a chunked reply but the last (always `ok`); nil on a whole reply and on
    /// a chunked reply's last response, which says how it ended.
    package var more: Bool?
    /// The daemon that answered (`AdminCommand.daemon`); nil from one that did not say.
    package var daemon: String?

    /// A response with every field given.
    package init(status: Status, message: String? = nil, text: String? = nil, json: String? = nil) {
        self.status = status
        self.message = message
        self.text = text
        self.json = json
    }

    /// One chunk of a reply still being produced: its text and JSON pieces, more to follow.
    package static func chunk(text: String, json: String) -> AdminResponse {
        var response = AdminResponse(status: .ok, text: text, json: json)
        response.more = true
        return response
    }

    /// Appends the next response of a chunked reply: its pieces are added and its status and message
    /// taken (the last one says how the reply ended).
    package mutating func append(_ next: AdminResponse) {
        status = next.status
        message = next.message
        more = next.more
        if let piece = next.text { text = (text ?? "") + piece }
        if let piece = next.json { json = (json ?? "") + piece }
    }

    /// Success with human and (optionally) machine output.
    package static func ok(text: String? = nil, json: String? = nil) -> AdminResponse {
        AdminResponse(status: .ok, text: text, json: json)
    }

    /// Success whose machine output is `value` encoded as JSON (sorted keys), with `text` for people.
    package static func ok(text: String, encoding value: some Encodable) -> AdminResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding a value of our own Codable types cannot fail; if it ever did, say so rather than trap.
        guard let data = try? encoder.encode(value) else {
            return .error("could not encode the JSON output of this command")
        }
        return AdminResponse(status: .ok, text: text, json: String(decoding: data, as: UTF8.self))
    }

    /// The daemon declines; `message` tells the person why and, ideally, what to do instead.
    package static func refused(_ message: String) -> AdminResponse {
        AdminResponse(status: .refused, message: message)
    }

    /// The request could not be handled; `message` says what went wrong.
    package static func error(_ message: String) -> AdminResponse {
        AdminResponse(status: .error, message: message)
    }

    /// The wire bytes: one JSON object and a newline, as `JSONEncoder` writes it with sorted keys
    /// and unescaped slashes (written by hand: a reply carries a run's JSON as a string, and
    /// `JSONEncoder` was a tenth of watchd's loop on an edit).
    package var encoded: [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(64 + (json?.utf8.count ?? 0) * 9 / 8 + (text?.utf8.count ?? 0))
        func key(_ name: String) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            TraceEvent.appendString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        for (name, value) in [("daemon", daemon), ("json", json), ("message", message)] {
            guard let value else { continue }
            key(name)
            TraceEvent.appendString(value, to: &bytes)
        }
        if let more {
            key("more")
            bytes += Array((more ? "true" : "false").utf8)
        }
        key("status")
        TraceEvent.appendString(status.rawValue, to: &bytes)
        if let text {
            key("text")
            TraceEvent.appendString(text, to: &bytes)
        }
        bytes += [UInt8(ascii: "}"), 0x0A]
        return bytes
    }
}

extension AdminResponse {
    /// The response one line holds, read with the documents' `JSONReader`: what `encoded` writes, and
    /// JSON's other spellings of it that the reader takes (space, any key order, `null` for an absent
    /// field). Nil on anything else (an unknown or repeated key, an escaped surrogate…), and the
    /// caller asks `JSONDecoder`, which gives the response or the exact error. The CLIs read every
    /// reply this way (`AdminClient`); the `admin-request` fuzz target holds it to `JSONDecoder`.
    package static func readByHand(_ bytes: UnsafeBufferPointer<UInt8>) -> AdminResponse? {
        var reader = JSONReader(bytes)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var response = AdminResponse(status: .ok)
        var (seen, first, closed) = (Set<String>(), true, false)
        var status: Status?
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let (name, field): (String, WritableKeyPath<AdminResponse, String?>?)
            switch key {
            case "status": (name, field) = ("status", nil)
            case "more": (name, field) = ("more", nil)
            case "daemon": (name, field) = ("daemon", \.daemon)
            case "json": (name, field) = ("json", \.json)
            case "message": (name, field) = ("message", \.message)
            case "text": (name, field) = ("text", \.text)
            default: return nil
            }
            guard seen.insert(name).inserted else { return nil }
            if let field {
                guard let value = reader.optionalString() else { return nil }
                response[keyPath: field] = value
            } else if name == "status" {
                status = reader.string { Status(rawValue: String(decoding: $0, as: UTF8.self)) }
                guard status != nil else { return nil }
            } else if !reader.null() {
                guard let value = reader.bool() else { return nil }
                response.more = value
            }
        }
        guard closed, reader.atEnd(), let status else { return nil }
        response.status = status
        return response
    }
}

extension JSONReader {
    /// A string, or `null` (`.some(nil)`); nil on anything else.
    fileprivate mutating func optionalString() -> String?? {
        if null() { return .some(nil) }
        return string().map { .some($0) }
    }
}

/// The `--json` forms of the write verbs' replies, typed so that daemon and tests share one shape
/// (read verbs answer with their documents and status values, Codable already).
package enum AdminReply {
    /// A plain acknowledgement: `{"ok":true}`.
    package struct Acknowledged: Codable, Equatable, Sendable {
        package var ok = true
        package init() {}
    }

    /// `split create`, `start`: the new document's ID.
    package struct Created: Codable, Equatable, Sendable {
        package var id: DocumentID
        package init(id: DocumentID) { self.id = id }
    }

    /// `clear-history`: how many completed runs were tombstoned.
    package struct Tombstoned: Codable, Equatable, Sendable {
        package var tombstoned: Int
        package init(tombstoned: Int) { self.tombstoned = tombstoned }
    }

    /// `queue cancel`: the cancelled transfer and whether it had already been sent.
    package struct Cancelled: Codable, Equatable, Sendable {
        package var cancelled: UInt64
        package var wasSent: Bool
        package init(cancelled: UInt64, wasSent: Bool) {
            self.cancelled = cancelled
            self.wasSent = wasSent
        }
    }

    /// `sync`: the request went out.
    package struct Requested: Codable, Equatable, Sendable {
        package var requested = true
        package init() {}
    }

    /// `wrist`: whether the watch app is now in the foreground.
    package struct Wrist: Codable, Equatable, Sendable {
        package var foreground: Bool
        package init(foreground: Bool) { self.foreground = foreground }
    }

    /// `complication push`: how the complication went (`complication` through the complication
    /// outbox, `userInfo` once the budget is spent), its sequence in that outbox, and what is left
    /// of today's budget.
    package struct ComplicationPushed: Codable, Equatable, Sendable {
        package var sentAs: String
        package var sequence: UInt64
        package var remaining: Int
        package init(sentAs: String, sequence: UInt64, remaining: Int) {
            self.sentAs = sentAs
            self.sequence = sequence
            self.remaining = remaining
        }
    }

    /// `watchctl wait`: how long the watch waited until no edit was left undelivered (0 when none was).
    package struct Synced: Codable, Equatable, Sendable {
        package var synced = true
        package var waitedMilliseconds: Double
        package init(waitedMilliseconds: Double) { self.waitedMilliseconds = waitedMilliseconds }
    }
}
