/// Which side made an edit; breaks ties between stamps with the same time and counter.
package enum StampOrigin: String, Codable, Sendable, CaseIterable, Comparable {
    case phone
    case watch

    package static func < (lhs: StampOrigin, rhs: StampOrigin) -> Bool { lhs == .phone && rhs == .watch }
}

/// A hybrid-logical-clock stamp (Kulkarni et al., 2014): the clock's physical component (µs), a
/// logical counter for edits within one physical instant, and the origin. Totally ordered by
/// (time, counter, origin). A node's clock never issues a stamp at or below one it has seen, so an
/// edit made after seeing another always outranks it, whatever either wall clock says.
///
/// Text form (on disk and on the wire): `<ISO-8601 time>/<counter>/<origin>`, e.g.
/// `2026-11-30T21:34:39.123456Z/0/watch`.
package struct Stamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var time: Timestamp
    package var counter: Int
    package var origin: StampOrigin

    package init(time: Timestamp, counter: Int = 0, origin: StampOrigin) {
        self.time = time
        self.counter = counter
        self.origin = origin
    }

    package static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        (lhs.time, lhs.counter, lhs.origin) < (rhs.time, rhs.counter, rhs.origin)
    }

    package var description: String { "\(time.iso8601)/\(counter)/\(origin.rawValue)" }

    /// Parses the text form; nil for anything else (a negative or non-decimal counter included).
    package init?(text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let time = Timestamp(iso8601: String(parts[0])),
            parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let counter = Int(parts[1]),
            let origin = StampOrigin(rawValue: String(parts[2]))
        else { return nil }
        self.init(time: time, counter: counter, origin: origin)
    }
}

extension Stamp: TextCoded {
    package init?(codedText text: String) { self.init(text: text) }
    package static var textFormName: String { "a stamp (<ISO-8601 time>/<counter>/<phone|watch>)" }
}

/// A node's hybrid logical clock. `last` is its high-water mark — the largest (time, counter) it has
/// issued or seen — which the daemons persist so a restart never goes back.
package struct HybridLogicalClock: Sendable, Equatable {
    package let origin: StampOrigin
    package private(set) var last: Stamp?

    package init(origin: StampOrigin, highWater: Stamp? = nil) {
        self.origin = origin
        last = highWater.map { Stamp(time: $0.time, counter: $0.counter, origin: origin) }
    }

    /// The stamp for a local edit at wall-clock `physical` (the send rule): the physical time when
    /// it is ahead of everything seen, otherwise the high-water time with the counter bumped.
    package mutating func stamp(at physical: Timestamp) -> Stamp {
        let next: Stamp
        if let last, last.time >= physical {
            next = Stamp(time: last.time, counter: last.counter + 1, origin: origin)
        } else {
            next = Stamp(time: physical, counter: 0, origin: origin)
        }
        last = next
        return next
    }

    /// Notes a stamp received from the other side (the receive rule, its physical part deferred to
    /// the next `stamp(at:)`): the next local stamp is above it.
    package mutating func observe(_ stamp: Stamp) {
        guard let current = last else {
            last = Stamp(time: stamp.time, counter: stamp.counter, origin: origin)
            return
        }
        if (stamp.time, stamp.counter) > (current.time, current.counter) {
            last = Stamp(time: stamp.time, counter: stamp.counter, origin: origin)
        }
    }

    /// Notes every stamp of a run.
    package mutating func observe(_ run: WorkoutDocument) {
        observe(run.version)
    }
}
