import LinkProtocol

/// The node's messages in flight. The node numbers every message it asks the link to send, keeps
/// why it was sent, and so routes the link's `messageCompleted(id:)` back to what sent it. It also
/// keeps whether the peer is reachable, as the link's notifications last said: a failed message is
/// retried only while it is (the live mirror). No shell keeps any of this.
package struct MessageLedger: Sendable {
    private var lastID: UInt64 = 0
    private var purposes: [UInt64: MessagePurpose] = [:]
    /// Whether the peer is reachable for messages: `reachabilityChanged`, and false from `linkLost` on
    /// (the link fails the messages in flight right after it, before it reports reachability).
    package private(set) var reachable = false

    /// Numbers from `life << 32` on: `life` counts the daemon's starts over its state directory, so
    /// no two messages of one instance share an id across restarts, and the trace's causal ids
    /// (`msg:<instance>/<id>`) each name one exchange (`trace --run`).
    package init(life: Int = 0) {
        lastID = UInt64(max(life, 0)) << 32
    }

    /// The messages sent and not yet ended.
    package var inFlight: Int { purposes.count }

    /// `command` with its message numbered (any other command as it is).
    mutating func number(_ command: LinkCommand) -> LinkCommand {
        switch command {
        case .sendMessage(let payload, let wantsReply, let run, let purpose, 0):
            return .sendMessage(payload, wantsReply: wantsReply, run: run, purpose, id: issue(purpose))
        case .sendMessageData(let payload, let wantsReply, let purpose, 0):
            return .sendMessageData(payload, wantsReply: wantsReply, purpose, id: issue(purpose))
        default:
            return command
        }
    }

    private mutating func issue(_ purpose: MessagePurpose) -> UInt64 {
        lastID += 1
        purposes[lastID] = purpose
        return lastID
    }

    /// What the link's `notification` tells the ledger: reachability, and which message ended.
    mutating func observe(_ notification: LinkNotification) {
        switch notification {
        case .reachabilityChanged(let isReachable): reachable = isReachable
        case .linkLost: reachable = false
        default: break
        }
    }

    /// Why message `id` was sent, while it is in flight.
    func purpose(of id: UInt64) -> MessagePurpose? { purposes[id] }

    /// Message `id` ended (its outcome was handled).
    mutating func ended(_ id: UInt64) { purposes[id] = nil }
}
