/// How the phone numbers its contexts so that a slot's write need not land before the slot is sent.
///
/// Generations only grow, across restarts too: the watch only acknowledges one at or below what it
/// applied from the phone. A slot whose write was lost (a crash before it landed) may still have
/// been sent, so the generations sent are bounded instead: at most `ahead` above the highest one
/// whose write landed before its send. A restarted phone numbers on from the slot it finds plus
/// `ahead`, and the first slot it makes lands before it is sent; then `ahead` more go out without
/// waiting. The slot found may be older than one the watch holds: it is sent again under its own
/// generation (the watch, holding a newer one, only acknowledges it), and the next update is a new
/// generation even when its payload equals it (docs/PROTOCOL.md, the context row).
package struct ContextGenerations: Equatable, Sendable {
    package static let ahead: UInt64 = 1 << 20

    /// The highest generation that may have been sent.
    package private(set) var used: UInt64
    /// The highest generation whose slot landed before it was sent; nil when none has.
    package private(set) var durable: UInt64?
    /// Whether the slot found at start may be older than one the watch holds.
    package private(set) var restoredUnconfirmed: Bool

    /// `current`: the phone stopped cleanly, so the slot found is the last one it made.
    package init(restored slot: ContextSlot?, current: Bool = false) {
        durable = slot?.generation
        // No slot on disk: none was sent (the first slot always lands before its send).
        let found = slot?.generation ?? 0
        restoredUnconfirmed = slot != nil && !current
        used = !restoredUnconfirmed ? found : found > .max - Self.ahead ? .max : found + Self.ahead
    }

    /// The watch holds `generation`, past every one this phone knows it used (its state directory
    /// went back): the next slot is numbered past it.
    package mutating func passed(_ generation: UInt64) {
        guard generation > used else { return }
        used = generation
        restoredUnconfirmed = false
    }

    /// The next slot's generation, and whether its write must land before it is sent.
    package mutating func next() -> (generation: UInt64, persistFirst: Bool) {
        precondition(used < .max, "context generations exhausted")
        used += 1
        restoredUnconfirmed = false
        let persistFirst = durable.map { used - $0 > Self.ahead } ?? true
        if persistFirst { durable = used }
        return (used, persistFirst)
    }
}
