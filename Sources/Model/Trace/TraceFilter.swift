/// Narrows journal events to a time window and, optionally, to one run.
package struct TraceFilter: Equatable, Sendable {
    /// Inclusive bounds in microseconds since the Unix epoch.
    package var since: Int64?
    package var until: Int64?
    /// A run's document ID: its events, and every event sharing a causal id with one of them (the
    /// transfer that carried it, its acknowledgement, the push that answered it).
    package var run: String?

    package init(since: Int64? = nil, until: Int64? = nil, run: String? = nil) {
        self.since = since
        self.until = until
        self.run = run
    }

    package func apply(_ events: [TraceEvent]) -> [TraceEvent] {
        let windowed = events.filter { event in
            (since.map { event.wall >= $0 } ?? true) && (until.map { event.wall <= $0 } ?? true)
        }
        guard let run else { return windowed }
        let causes = Set(windowed.filter { $0.run == run }.compactMap(\.cause))
        return windowed.filter { $0.run == run || $0.cause.map(causes.contains) == true }
    }
}
