import LinkProtocol

/// How a shell feeds the link's events to its node while durable writes are in flight (`NodeShell`,
/// and the simulator's host): they wait, bytes from one connection joined into one event, and are
/// fed together once the writes have landed, so the node takes them in one batch and one round of
/// writes (group commit: phoned's intake, the watch's acknowledged transfers). Only the writes of
/// the link's intake hold them (`LinkedNode.Event.holdsLinkEvents`): while an admin request's are
/// the only ones in flight, what arrives is fed at once (a context coming back while the watch's
/// own edit syncs). A tick is never held (heartbeats go out, and silence is found, on time) and
/// takes what waits before it along, as does any event once the writes have been in flight for
/// `slowWrite`.
package struct LinkEventHold: Sendable {
    private var held: [LinkEngine.Event] = []
    private var heldBytes = 0
    /// Whether the event being fed raises writes that hold; the last such write sent, and the last
    /// write landed (numbered as the shell sends them, from 1).
    private var feedingHolds = true
    private var holdingThrough: UInt64 = 0
    private var landed: UInt64 = 0
    /// Writes in flight this long make the disk slow: what arrives is fed at once.
    package var slowWrite: Duration = .milliseconds(100)

    /// Bytes from one connection are joined up to this size (one engine event).
    static let maximumJoinedBytes = 64 << 10

    package init() {}

    /// The shell feeds `event` to the node next (its writes hold or not).
    package mutating func feeding<Inner>(_ event: LinkedNode<Inner>.Event) {
        feedingHolds = event.holdsLinkEvents(resuming: feedingHolds)
    }

    /// The shell sent durable write `number` for the event being fed.
    package mutating func sent(_ number: UInt64) {
        if feedingHolds { holdingThrough = number }
    }

    /// Writes through `number` have landed: what was held, once no write that holds is in flight.
    package mutating func landed(through number: UInt64) -> [LinkEngine.Event] {
        landed = number
        return isHolding ? [] : release()
    }

    /// Whether a write that holds the link's events is in flight.
    package var isHolding: Bool { landed < holdingThrough }

    /// What to feed the node now, in order, for `event`; `writesBusyFor`: how long durable writes have
    /// been in flight without a pause (nil: none are).
    package mutating func arrived(_ event: LinkEngine.Event, writesBusyFor: Duration?) -> [LinkEngine.Event] {
        guard isHolding, let busy = writesBusyFor, busy < slowWrite else { return release() + [event] }
        if case .tick = event { return release() + [event] }
        if case .bytesReceived(let connection, let more, let now) = event,
            case .bytesReceived(connection, let earlier, _) = held.last,
            earlier.count + more.count <= Self.maximumJoinedBytes
        {
            held[held.count - 1] = .bytesReceived(connection, earlier + more, now: now)
        } else {
            held.append(event)
        }
        if case .bytesReceived(_, let bytes, _) = event { heldBytes += bytes.count }
        return []
    }

    /// Everything held, in order (the writes landed).
    package mutating func release() -> [LinkEngine.Event] {
        defer {
            held = []
            heldBytes = 0
        }
        return held
    }

    package var isEmpty: Bool { held.isEmpty }

    /// Whether so much waits that the shell should stop reading (TCP then slows the peer).
    package var isFull: Bool { heldBytes > 1 << 20 || held.count > 64 }
}
