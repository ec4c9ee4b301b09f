/// A wall-clock instant with microsecond precision, UTC.
///
/// On disk and on the wire it is an ISO-8601 string with exactly six fractional digits,
/// `2026-11-29T20:31:01.123456Z`, so every value round-trips through the document coder
/// exactly (two edits 1 µs apart stay distinct). Parsing accepts 0–6 fractional digits and
/// requires the `Z` suffix; anything else is refused.
package struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    package var microsecondsSinceEpoch: Int64

    package init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    /// The instant `seconds` after the Unix epoch (fractions kept to the microsecond).
    package init(secondsSinceEpoch seconds: Double) {
        microsecondsSinceEpoch = Int64((seconds * 1_000_000).rounded())
    }

    package static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    /// The instant `duration` later (earlier when negative), truncated to the microsecond.
    package func advanced(by duration: Duration) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: microsecondsSinceEpoch + duration.wholeMicroseconds)
    }

    /// The signed duration from `self` to `later`.
    package func duration(to later: Timestamp) -> Duration {
        .microseconds(later.microsecondsSinceEpoch - microsecondsSinceEpoch)
    }

    /// The calendar year and month (UTC) of this instant; a run's file lives under `Workouts/<year>/<month>/`.
    package var yearAndMonth: (year: Int, month: Int) {
        let civil = CivilTime(self)
        return (civil.year, civil.month)
    }

    package var description: String { iso8601 }

    /// The canonical text form, e.g. `2026-11-29T20:31:01.123456Z`.
    package var iso8601: String {
        var written = true
        let text = String(unsafeUninitializedCapacity: Self.iso8601Length) { buffer in
            guard let length = write(into: buffer) else {
                written = false
                return 0
            }
            return length
        }
        return written ? text : slowISO8601
    }

    /// The length of the canonical form of a time in the years 0–9999.
    package static let iso8601Length = 27

    /// Writes the canonical form into `buffer` (at least `iso8601Length` bytes) and returns its length,
    /// or nil when the year is outside 0–9999 (then `slowISO8601` says it).
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let civil = CivilTime(self)
        guard (0...9_999).contains(civil.year) else { return nil }
        func put(_ value: Int, _ width: Int, at offset: Int) {
            var value = value
            for position in stride(from: offset + width - 1, through: offset, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(civil.year, 4, at: 0)
        buffer[4] = UInt8(ascii: "-")
        put(civil.month, 2, at: 5)
        buffer[7] = UInt8(ascii: "-")
        put(civil.day, 2, at: 8)
        buffer[10] = UInt8(ascii: "T")
        put(civil.hour, 2, at: 11)
        buffer[13] = UInt8(ascii: ":")
        put(civil.minute, 2, at: 14)
        buffer[16] = UInt8(ascii: ":")
        put(civil.second, 2, at: 17)
        buffer[19] = UInt8(ascii: ".")
        put(civil.microsecond, 6, at: 20)
        buffer[26] = UInt8(ascii: "Z")
        return Self.iso8601Length
    }

    /// The canonical form of any time (years before 0 or after 9999 included, however odd).
    private var slowISO8601: String {
        let civil = CivilTime(self)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))T"
            + "\(pad(civil.hour, 2)):\(pad(civil.minute, 2)):\(pad(civil.second, 2)).\(pad(civil.microsecond, 6))Z"
    }

    /// Parses the canonical form; returns nil for anything that is not `YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z`
    /// with fields in range.
    package init?(iso8601 text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// `init?(iso8601:)` on the text's UTF-8 bytes.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: UInt8) -> Bool {
            index < bytes.count && bytes[index] == character
        }
        guard byte(4, is: UInt8(ascii: "-")), byte(7, is: UInt8(ascii: "-")), byte(10, is: UInt8(ascii: "T")),
            byte(13, is: UInt8(ascii: ":")), byte(16, is: UInt8(ascii: ":")),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var microsecond = 0
        if byte(index, is: UInt8(ascii: ".")) {
            let start = index + 1
            var end = start
            while end < bytes.count, end - start < 7, bytes[end] != UInt8(ascii: "Z") { end += 1 }
            guard end > start, end - start <= 6, let fraction = number(start..<end) else { return nil }
            microsecond = fraction * [100_000, 10_000, 1_000, 100, 10, 1][end - start - 1]
            index = end
        }
        guard byte(index, is: UInt8(ascii: "Z")), index == bytes.count - 1 else { return nil }
        guard (1...12).contains(month), (1...CivilTime.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = Int64(CivilTime.daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
        return Timestamp(microsecondsSinceEpoch: seconds * 1_000_000 + Int64(microsecond))
    }
}

extension Timestamp: TextCoded {
    package init?(codedText text: String) { self.init(iso8601: text) }
    package static var textFormName: String { "an ISO-8601 UTC timestamp (YYYY-MM-DDTHH:MM:SS.ffffffZ)" }
}

extension Duration {
    /// This duration in whole microseconds, truncated toward zero.
    package var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// This duration in seconds as a floating-point number (for display and metrics).
    package var seconds: Double {
        Double(wholeMicroseconds) / 1_000_000
    }
}

/// Proleptic Gregorian calendar fields of a `Timestamp` (Howard Hinnant's `civil_from_days`).
struct CivilTime {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, microsecond: Int

    init(_ timestamp: Timestamp) {
        let micros = timestamp.microsecondsSinceEpoch
        let (seconds, micro) = Self.floorDivide(micros, 1_000_000)
        let (days, secondOfDay) = Self.floorDivide(seconds, 86_400)
        var z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        z -= era * 146_097
        let yearOfEra = (z - z / 1_460 + z / 36_524 - z / 146_096) / 365
        let dayOfYear = z - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = Int(secondOfDay / 3_600)
        minute = Int(secondOfDay % 3_600 / 60)
        second = Int(secondOfDay % 60)
        microsecond = Int(micro)
    }

    /// Days from 1970-01-01 to the given civil date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }
}

/// Issues a writer's `updatedAt` stamps: never earlier than the clock, and strictly later than the
/// previous stamp even when the clock has not moved (or went backwards), so a real edit is never
/// mistaken for an echo of the one before.
package struct EditStamper: Sendable, Equatable {
    /// The last stamp issued (or observed), if any.
    package private(set) var last: Timestamp?

    package init(last: Timestamp? = nil) {
        self.last = last
    }

    /// The stamp for an edit made at `now`: `max(now, last + 1 µs)`.
    package mutating func stamp(at now: Timestamp) -> Timestamp {
        var next = now
        if let last, next <= last {
            next = Timestamp(microsecondsSinceEpoch: last.microsecondsSinceEpoch + 1)
        }
        last = next
        return next
    }

    /// Notes a stamp seen on a document this writer is about to edit, so the next stamp is later than it.
    package mutating func observe(_ stamp: Timestamp) {
        if last.map({ stamp > $0 }) ?? true { last = stamp }
    }
}
