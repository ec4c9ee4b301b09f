/// The complication's data the phone sends the watch (`transferCurrentComplicationUserInfo`, or
/// ordinary userInfo once the day's budget is spent), and the newest one the watch keeps in
/// `<cache>/complication.json`.
///
/// JSON, version 1: `{"kind":"complication","order":"2026-12-01T04:00:00.000000Z","schemaVersion":1,
/// "sentAt":"2026-12-01T04:00:00.000000Z","text":"3 sets left"}`. `kind` tells it from the other
/// userInfo payloads; `text` is at most `maximumTextBytes` bytes; `order` is absent in payloads
/// written before it existed (read as `sentAt`).
package struct ComplicationPayload: VersionedDocument {
    package static let currentSchemaVersion = 1
    /// What a complication shows is short; the limit keeps a payload far below the userInfo limit.
    package static let maximumTextBytes = 1024

    package var schemaVersion: Int
    package var kind: String
    package var text: String
    /// When the phone sent it, by its wall clock (what a person reads).
    package var sentAt: Timestamp
    /// Which of two is newer: of two that arrive, the one with the later order is shown. The
    /// phone's wall clock when it sent it, but never at or before the order of the one it sent
    /// last (`ComplicationBudget.nextOrder`), so a clock stepped back does not make its next
    /// complication look older than the one shown; the two queues it goes by may reorder them.
    package var order: Timestamp

    package init(text: String, sentAt: Timestamp, order: Timestamp? = nil) {
        schemaVersion = Self.currentSchemaVersion
        kind = "complication"
        self.text = text
        self.sentAt = sentAt
        self.order = order ?? sentAt
    }

    private enum CodingKeys: String, CodingKey { case schemaVersion, kind, text, sentAt, order }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        kind = try container.decode(String.self, forKey: .kind)
        text = try container.decode(String.self, forKey: .text)
        sentAt = try container.decode(Timestamp.self, forKey: .sentAt)
        order = try container.decodeIfPresent(Timestamp.self, forKey: .order) ?? sentAt
    }

    package func validate() throws(DocumentError) {
        guard kind == "complication" else {
            throw .malformed(type: "ComplicationPayload", field: "kind", reason: "expected complication, found \(kind)")
        }
        guard text.utf8.count <= Self.maximumTextBytes else {
            throw .malformed(
                type: "ComplicationPayload", field: "text",
                reason: "\(text.utf8.count) bytes, more than \(Self.maximumTextBytes)")
        }
    }

    /// The wire bytes: compact JSON with sorted keys.
    package func encoded() -> [UInt8] { DocumentCoder.encodeCompact(self) }
}

/// How much of today's complication budget (`remainingComplicationUserInfoTransfers`) the phone
/// has spent, and the order of the last complication sent: `<state>/complication-budget.json`,
/// `{"day":"2026-12-01","lastOrder":"2026-12-01T04:00:00.000000Z","schemaVersion":1,"used":3}`.
/// Days are UTC calendar days; a new day starts with nothing spent.
package struct ComplicationBudget: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// The UTC day (`YYYY-MM-DD`) `used` counts.
    package var day: String
    package var used: Int
    /// The order of the complication sent last (absent until one is): see `nextOrder(at:)`.
    package var lastOrder: Timestamp?

    package init(day: String = "", used: Int = 0) {
        schemaVersion = Self.currentSchemaVersion
        self.day = day
        self.used = used
    }

    package func validate() throws(DocumentError) {
        guard used >= 0 else {
            throw .malformed(type: "ComplicationBudget", field: "used", reason: "\(used) is negative")
        }
    }

    /// Transfers left at `now` out of `perDay`; none while the complication is not on the watch face.
    package func remaining(at now: Timestamp, perDay: Int, complicationEnabled: Bool) -> Int {
        guard complicationEnabled else { return 0 }
        return max(0, perDay - (day == Self.day(of: now) ? used : 0))
    }

    /// Counts one transfer at `now` (a new day starts from zero).
    package mutating func spend(at now: Timestamp) {
        let today = Self.day(of: now)
        if day != today { (day, used) = (today, 0) }
        used += 1
    }

    /// The order for a complication sent at `now`: `now`, or just after the last one's when the
    /// clock has stepped back since; kept as the last.
    package mutating func nextOrder(at now: Timestamp) -> Timestamp {
        let order = max(now, lastOrder.map { $0.advanced(by: .microseconds(1)) } ?? now)
        lastOrder = order
        return order
    }

    /// Gives back a transfer counted at `now` that the link did not take.
    package mutating func refund(at now: Timestamp) {
        if day == Self.day(of: now), used > 0 { used -= 1 }
    }

    private static func day(of time: Timestamp) -> String { String(time.iso8601.prefix(10)) }
}
