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

    package var description: String {
        // `<time>/<counter>/<origin>` written in place: every run carries dozens of stamps.
        let originText = origin.rawValue
        guard counter >= 0 else { return "\(time.iso8601)/\(counter)/\(originText)" }
        var digits = 1
        var rest = counter / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var written = true
        let text = String(unsafeUninitializedCapacity: Timestamp.iso8601Length + digits + 2 + originText.utf8.count) {
            buffer in
            guard var offset = time.write(into: buffer) else {
                written = false
                return 0
            }
            buffer[offset] = UInt8(ascii: "/")
            var value = counter
            for position in stride(from: offset + digits, to: offset, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            offset += digits + 1
            buffer[offset] = UInt8(ascii: "/")
            offset += 1
            for byte in originText.utf8 {
                buffer[offset] = byte
                offset += 1
            }
            return offset
        }
        return written ? text : "\(time.iso8601)/\(counter)/\(originText)"
    }

    /// Parses the text form; nil for anything else (a negative or non-decimal counter included).
    package init?(text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// `init?(text:)` on the text's UTF-8 bytes: exactly two slashes, a canonical time, a decimal
    /// counter that fits an `Int`, and an origin.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Stamp? {
        var first: Int?
        var second: Int?
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") {
            if first == nil {
                first = index
            } else if second == nil {
                second = index
            } else {
                return nil
            }
        }
        guard let first, let second, let time = Timestamp.parse(UnsafeBufferPointer(rebasing: bytes[..<first]))
        else { return nil }
        let counterBytes = bytes[(first + 1)..<second]
        guard !counterBytes.isEmpty else { return nil }
        var counter = 0
        for byte in counterBytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowed) = counter.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            counter = sum
        }
        let originBytes = bytes[(second + 1)...]
        guard let origin = origins.first(where: { originBytes.elementsEqual($0.text) })?.origin else { return nil }
        return Stamp(time: time, counter: counter, origin: origin)
    }

    private static let origins = StampOrigin.allCases.map { (origin: $0, text: Array($0.rawValue.utf8)) }
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
