import AdminCommands
import LinkProtocol

/// The admin requests that wait for the link's answer to a cancel (`queue cancel`, `complication
/// cancel`), by what they cancel, oldest first; and the answer they get.
package struct CancelWaits<Key: Hashable & Sendable>: Sendable {
    private var waiting: [Key: [AdminRequestID]] = [:]

    package init() {}

    mutating func wait(_ request: AdminRequestID, for key: Key) { waiting[key, default: []].append(request) }

    /// The oldest request waiting for `key`'s answer, no longer waiting.
    mutating func answered(_ key: Key) -> AdminRequestID? {
        guard var requests = waiting[key], !requests.isEmpty else { return nil }
        let request = requests.removeFirst()
        waiting[key] = requests.isEmpty ? nil : requests
        return request
    }
}

extension AdminOutcome {
    /// A cancelled transfer's answer; `peer` names the side that may already have it.
    static func cancelled(_ sequence: UInt64, wasSent: Bool, peer: String) -> AdminOutcome {
        let text =
            wasSent
            ? "cancelled \(sequence); it had been sent: if the \(peer) received it, the \(peer) keeps it "
                + "(its dedup makes the cancel a no-op there)"
            : "cancelled \(sequence) before it was sent"
        return .output(text: text, json: AdminOutcome.json(AdminReply.Cancelled(cancelled: sequence, wasSent: wasSent)))
    }
}
