import LinkProtocol
import WorkoutModel

/// A node as its shell runs it: events in, ordered actions out (`PhoneNode`, `WatchNode`).
package protocol ShelledNode: Sendable {
    associatedtype Event: Sendable
    associatedtype Action: Sendable
    /// Handles one event at the wall clock `now` and the monotonic `linkNow` (a wall clock may be
    /// stepped; `linkNow` only advances).
    mutating func handle(
        _ event: Event, now: Timestamp, linkNow: LinkInstant, reads: Reads
    ) throws(NeedsReads) -> [Action]
    /// The event that tells the node what one of its actions produced.
    static func reported(_ report: ShellReport) -> Event
    /// The node's part of an action, when it is one the shared shell carries out.
    static func nodeAction(_ action: Action) -> NodeAction?
    /// The event for a link notification.
    static func linkNotified(_ notification: LinkNotification) -> Event
    /// Whether `event` is an admin request that only reads: its reply need not wait for the writes
    /// before it (docs/PROTOCOL.md, "The order of writes").
    static func isQuery(_ event: Event) -> Bool
    /// Whether `event` is an admin request: its writes are a command's, not the link's intake
    /// (`LinkedNode.Event.holdsLinkEvents`).
    static func isAdminRequest(_ event: Event) -> Bool
    /// Whether `action` is a durable write of the node's own store (it goes to the write queue).
    static func isStoreWrite(_ action: Action) -> Bool
}

extension PhoneNode: ShelledNode {
    /// The phone records on its own wall clock: `linkNow` is not needed.
    package mutating func handle(
        _ event: Event, now: Timestamp, linkNow _: LinkInstant, reads: Reads
    ) throws(NeedsReads) -> [Action] {
        try handle(event, now: now, reads: reads)
    }

    package static func isQuery(_ event: Event) -> Bool {
        if case .admin(_, let command, _, _) = event { command.isQuery } else { false }
    }

    package static func isAdminRequest(_ event: Event) -> Bool {
        if case .admin = event { true } else { false }
    }

    package static func isStoreWrite(_ action: Action) -> Bool {
        if case .store = action { true } else { false }
    }

    package static func reported(_ report: ShellReport) -> Event { .reported(report) }
    package static func linkNotified(_ notification: LinkNotification) -> Event { .link(notification) }

    package static func nodeAction(_ action: Action) -> NodeAction? {
        guard case .node(let shared) = action else { return nil }
        return shared
    }
}

extension WatchNode: ShelledNode {
    package static func isQuery(_ event: Event) -> Bool {
        if case .admin(_, let command, _) = event { command.isQuery } else { false }
    }

    package static func isAdminRequest(_ event: Event) -> Bool {
        if case .admin = event { true } else { false }
    }

    package static func isStoreWrite(_ action: Action) -> Bool {
        if case .store = action { true } else { false }
    }

    package static func reported(_ report: ShellReport) -> Event { .reported(report) }
    package static func linkNotified(_ notification: LinkNotification) -> Event { .link(notification) }

    package static func nodeAction(_ action: Action) -> NodeAction? {
        guard case .node(let shared) = action else { return nil }
        return shared
    }
}
