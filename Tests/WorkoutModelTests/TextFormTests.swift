import LinkProtocol
import Testing
import WorkoutModel

/// `Timestamp` and `Stamp` write and parse their text forms byte by byte; these tests hold them to the
/// string-based code they replaced (kept here as the reference), over random values and random text.
@Suite("Text forms: seeded property tests against the reference implementations")
struct TextFormTests {
    static func referenceISO8601(_ timestamp: Timestamp) -> String {
        let micros = timestamp.microsecondsSinceEpoch
        func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
            let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
            return (quotient, value - quotient * divisor)
        }
        let (seconds, micro) = floorDivide(micros, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        var z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        z -= era * 146_097
        let yearOfEra = (z - z / 1_460 + z / 36_524 - z / 146_096) / 365
        let dayOfYear = z - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(Int(secondOfDay / 3_600), 2)):\(pad(Int(secondOfDay % 3_600 / 60), 2)):"
            + "\(pad(Int(secondOfDay % 60), 2)).\(pad(Int(micro), 6))Z"
    }

    static func referenceStamp(_ stamp: Stamp) -> String {
        "\(referenceISO8601(stamp.time))/\(stamp.counter)/\(stamp.origin.rawValue)"
    }

    static func referenceTimestamp(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: Character) -> Bool {
            index < bytes.count && bytes[index] == character.asciiValue
        }
        guard byte(4, is: "-"), byte(7, is: "-"), byte(10, is: "T"), byte(13, is: ":"), byte(16, is: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var microsecond = 0
        if byte(index, is: ".") {
            let start = index + 1
            var end = start
            while end < bytes.count, end - start < 7, bytes[end] != UInt8(ascii: "Z") { end += 1 }
            guard end > start, end - start <= 6, let fraction = number(start..<end) else { return nil }
            microsecond = fraction * [100_000, 10_000, 1_000, 100, 10, 1][end - start - 1]
            index = end
        }
        guard byte(index, is: "Z"), index == bytes.count - 1 else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = Int64(era * 146_097 + dayOfEra - 719_468)
        let seconds = days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
        return Timestamp(microsecondsSinceEpoch: seconds * 1_000_000 + Int64(microsecond))
    }

    static func referenceStamp(text: String) -> Stamp? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let time = referenceTimestamp(String(parts[0])),
            parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let counter = Int(parts[1]),
            let origin = StampOrigin(rawValue: String(parts[2]))
        else { return nil }
        return Stamp(time: time, counter: counter, origin: origin)
    }

    static func randomTimestamp(_ random: inout SplitMix64) -> Timestamp {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            // Any instant in years 0–9999, and some outside.
            return Timestamp(
                microsecondsSinceEpoch: Int64.random(
                    in: -70_000_000_000_000_000...260_000_000_000_000_000, using: &random))
        case 1:
            return Timestamp(microsecondsSinceEpoch: Int64.random(in: -1_000_000_000...1_000_000_000, using: &random))
        default:
            return t0.advanced(by: .microseconds(Int64.random(in: -(1 << 40)...(1 << 40), using: &random)))
        }
    }

    @Test("timestamps and stamps are written as the reference writes them, over 20,000 random values")
    func writing() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<20_000 {
            let time = Self.randomTimestamp(&random)
            #expect(time.iso8601 == Self.referenceISO8601(time))
            let counter =
                Bool.random(using: &random)
                ? Int.random(in: 0...12, using: &random) : Int.random(in: Int.min...Int.max, using: &random)
            let stamp = Stamp(time: time, counter: counter, origin: Bool.random(using: &random) ? .phone : .watch)
            #expect(stamp.description == Self.referenceStamp(stamp))
        }
        for counter in [0, 9, 10, 99, 100, Int.max, -1, Int.min] {
            let stamp = Stamp(time: t0, counter: counter, origin: .watch)
            #expect(stamp.description == Self.referenceStamp(stamp))
        }
    }

    @Test("any text parses as the reference parses it, over 40,000 random and damaged forms")
    func parsing() {
        var random = SplitMix64(seed: 12)
        let pieces = [
            "0", "1", "9", "/", "-", ":", ".", "T", "Z", "z", " ", "+", "é", "\u{301}", "٣", "½", "\r\n", "phone",
            "watch", "99999999999999999999", "",
        ]
        for _ in 0..<40_000 {
            let time = Self.randomTimestamp(&random)
            let stamp = Stamp(
                time: time, counter: Int.random(in: 0...1_000, using: &random),
                origin: Bool.random(using: &random) ? .phone : .watch)
            var text = Array(Bool.random(using: &random) ? Self.referenceStamp(stamp) : Self.referenceISO8601(time))
            for _ in 0..<Int.random(in: 0...2, using: &random) where !text.isEmpty {
                let position = Int.random(in: 0..<text.count, using: &random)
                let piece = Array(pieces.randomElement(using: &random)!)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: text.replaceSubrange(position...position, with: piece)
                case 1: text.insert(contentsOf: piece, at: position)
                default: text.remove(at: position)
                }
            }
            let candidate = String(text)
            #expect(
                Timestamp(iso8601: candidate) == Self.referenceTimestamp(candidate), "\(candidate.debugDescription)")
            #expect(Stamp(text: candidate) == Self.referenceStamp(text: candidate), "\(candidate.debugDescription)")
        }
        for text in [
            "2026-11-29T12:00:00Z/99999999999999999999/phone", "2026-11-29T12:00:00Z/9223372036854775807/watch",
            "2026-11-29T12:00:00Z/9223372036854775808/watch", "2026-11-29T12:00:00Z//phone",
            "2026-11-29T12:00:00Z/0/phone/", "2026-11-29T12:00:00Z/0/Phone", "2026-11-29T12:00:00Z/-1/phone",
            "2026-11-29T12:00:00Z/0\u{301}/phone", "2026-11-29T12:00:00Z/\u{301}0/phone",
        ] {
            #expect(Stamp(text: text) == Self.referenceStamp(text: text), "\(text.debugDescription)")
        }
    }
}
