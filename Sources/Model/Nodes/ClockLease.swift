import WorkoutModel

/// What a node persists of its clock: a mark a second ahead of the newest stamp it issued or saw,
/// written again only once a stamp reaches it. Edits in quick succession then write the clock file
/// about once a second instead of once each, and a restart, which starts the clock at the mark,
/// still never stamps at or below a stamp made before. The price is the restarted clock's first
/// stamps may run up to `lease` ahead of the wall clock, a skew the hybrid clock absorbs like any
/// other. (Each edit also observes its run's newest stamp before stamping, so even a lost mark
/// cannot order an edit below an older one of the same run.)
package struct ClockLease: Sendable, Equatable {
    package static let lease = Duration.seconds(1)
    /// The mark last handed out to be persisted.
    private var mark: Stamp?

    package init() {}

    /// The new mark to persist when `last` has reached the current one; nil when it still covers it.
    package mutating func renew(covering last: Stamp?) -> Stamp? {
        guard let last, mark.map({ last >= $0 }) ?? true else { return nil }
        let next = Stamp(time: last.time.advanced(by: Self.lease), counter: 0, origin: last.origin)
        mark = next
        return next
    }
}
