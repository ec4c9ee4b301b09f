/// Journal times: microseconds since the Unix epoch, shown and parsed as UTC ISO 8601 with milliseconds.
package enum TraceTime {
    /// `2026-12-01T01:02:03.456Z`.
    package static func iso8601(micros: Int64) -> String {
        let millis = floorDivide(micros, 1000)
        let seconds = floorDivide(millis, 1000)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = millis - seconds * 1000
        let milli = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60))"
            + ":\(two(secondOfDay % 60)).\(milli)Z"
    }

    /// A window bound: an age (`90s`, `5m`, `2h`, `1d`: that long before `now`) or a UTC time
    /// (`2026-12-01T01:02:03Z`, fraction optional). Nil when it is neither.
    package static func parseBound(_ text: String, now: Int64) -> Int64? {
        if let unit = text.last, let scale = ["s": 1, "m": 60, "h": 3600, "d": 86_400][unit],
            let count = Int64(text.dropLast()), count >= 0
        {
            // An age beyond the representable past means "since ever" (never an overflow trap).
            let (micros, overflow) = count.multipliedReportingOverflow(by: Int64(scale) * 1_000_000)
            let (bound, underflow) = now.subtractingReportingOverflow(micros)
            return overflow || underflow ? .min : bound
        }
        return parseISO8601(text)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff…]Z` to microseconds; nil for anything else.
    package static func parseISO8601(_ text: String) -> Int64? {
        let characters = Array(text.utf8)
        guard characters.count >= 20, characters.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= characters.count else { return nil }
            var value: Int64 = 0
            for byte in characters[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ Character(UnicodeScalar(characters[$0.0])) == $0.1 }),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var micros: Int64 = 0
        let rest = characters[19..<(characters.count - 1)]
        if !rest.isEmpty {
            guard rest.first == UInt8(ascii: "."), rest.count >= 2, rest.count <= 10,
                let digits = number((20)..<(characters.count - 1))
            else { return nil }
            var scaled = digits
            for _ in 0..<(6 - (rest.count - 1)).clamped(0, 6) { scaled *= 10 }
            for _ in 0..<((rest.count - 1) - 6).clamped(0, 3) { scaled /= 10 }
            micros = scaled
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000) + micros
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, days since 1970-01-01).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    fileprivate func clamped(_ low: Int, _ high: Int) -> Int { Swift.min(Swift.max(self, low), high) }
}
