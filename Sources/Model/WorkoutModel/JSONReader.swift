/// A reader of the JSON the daemons write: a strict subset of JSON, read without building a tree.
///
/// `JSONDecoder` costs 60–100 µs a run, most of the phone's work per transfer in a drain. This reader
/// takes only what `JSONEncoder` writes and plain variations of it: whitespace anywhere JSON allows,
/// keys in any order, unknown keys (skipped, though still checked), `null` for an absent optional,
/// every escape but a surrogate. It gives up (nil) on anything else: an escaped surrogate or an
/// escaped key, a raw control character or invalid UTF-8, a duplicate key, an integer spelled as `1.0`
/// or `-0`, a number out of range, nesting deeper than 32. A caller that gets nil decodes with
/// `JSONDecoder`, which gives the value or the exact error; so what this reader accepts, `JSONDecoder`
/// accepts with the same value (`RunReadingTests` and the `document-coder` fuzz target hold it to that).
package struct JSONReader: ~Copyable {
    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position = 0

    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Whether only whitespace is left.
    package mutating func atEnd() -> Bool {
        skipSpace()
        return position == bytes.count
    }

    /// Consumes `byte` (after whitespace) if it is next.
    package mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Consumes `null` if it is next.
    package mutating func null() -> Bool {
        skipSpace()
        return literal("null")
    }

    /// Consumes `true` or `false` if one is next.
    package mutating func bool() -> Bool? {
        skipSpace()
        if literal("true") { return true }
        return literal("false") ? false : nil
    }

    /// The next member's key of the object opened by `{` (`first` true for the first call), or nil at
    /// its `}` (`closed` set) or on anything else (`closed` left false). Keys are ASCII, unescaped.
    package mutating func nextKey(first: inout Bool, closed: inout Bool) -> JSONKey? {
        guard next(UInt8(ascii: "}"), first: &first, closed: &closed) else { return nil }
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            let byte = bytes[position]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        guard position < bytes.count else { return nil }
        let key = JSONKey(bytes: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        position += 1
        guard take(UInt8(ascii: ":")) else { return nil }
        return key
    }

    /// The next array element's turn (`first` true for the first call): true when an element follows,
    /// false at the `]` (`closed` set) or on anything else.
    mutating func nextElement(first: inout Bool, closed: inout Bool) -> Bool {
        next(UInt8(ascii: "]"), first: &first, closed: &closed)
    }

    /// Past the `,` before the next member or element (none before the first), or past the closing
    /// bracket (`closed` set, false returned).
    private mutating func next(_ closing: UInt8, first: inout Bool, closed: inout Bool) -> Bool {
        if take(closing) {
            closed = true
            return false
        }
        if first {
            first = false
            return true
        }
        return take(UInt8(ascii: ","))
    }

    /// What `body` makes of a string's content, unescaped: nil for a string with a control character,
    /// invalid UTF-8 or an escaped surrogate (left to `JSONDecoder`). `JSONEncoder` escapes `/`, so
    /// every stamp is written with escapes.
    package mutating func string<Value>(_ body: (UnsafeBufferPointer<UInt8>) -> Value?) -> Value? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        var (ascii, escaped) = (true, false)
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20 else { return nil }
            if byte >= 0x80 { ascii = false }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                position += 1
            }
            position += 1
        }
        guard position < bytes.count else { return nil }
        let content = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 1
        if !ascii, String(validating: content, as: UTF8.self) == nil { return nil }
        guard escaped else { return body(content) }
        // Unescaped text is never longer than its escaped form: a buffer on the stack holds it.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: content.count) { buffer -> Value? in
            var (index, count) = (0, 0)
            func append(_ byte: UInt8) {
                buffer[count] = byte
                count += 1
            }
            while index < content.count {
                guard content[index] == UInt8(ascii: "\\") else {
                    append(content[index])
                    index += 1
                    continue
                }
                switch content[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): append(content[index + 1])
                case UInt8(ascii: "b"): append(0x08)
                case UInt8(ascii: "f"): append(0x0C)
                case UInt8(ascii: "n"): append(0x0A)
                case UInt8(ascii: "r"): append(0x0D)
                case UInt8(ascii: "t"): append(0x09)
                case UInt8(ascii: "u"):
                    // A surrogate (half of a pair) is left to `JSONDecoder`; `JSONEncoder` writes none.
                    guard index + 6 <= content.count, let value = Self.hex(content[(index + 2)..<(index + 6)]),
                        let scalar = Unicode.Scalar(value)
                    else { return nil }
                    for byte in UTF8.encode(scalar)! { append(byte) }
                    index += 4
                default: return nil
                }
                index += 2
            }
            return body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    private static func hex(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> UInt32? {
        var value: UInt32 = 0
        for digit in digits {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt32(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt32(digit - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = value << 4 | UInt32(digit - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        return value
    }

    package mutating func string() -> String? {
        string { String(decoding: $0, as: UTF8.self) }
    }

    /// An integer: `-?(0|[1-9][0-9]*)` that fits an `Int`, `-0` aside.
    package mutating func int() -> Int? {
        guard let number = number(), !number.fractional else { return nil }
        let digits = number.negative ? UnsafeBufferPointer(rebasing: number.text.dropFirst()) : number.text
        guard !(number.negative && digits.count == 1 && digits[0] == UInt8(ascii: "0")) else { return nil }
        var value = 0
        for digit in digits {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let next = Int(digit - UInt8(ascii: "0"))
            let (sum, carry) =
                number.negative ? times10.subtractingReportingOverflow(next) : times10.addingReportingOverflow(next)
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// A number as a `Double`, correctly rounded (as `JSONDecoder` and `strtod` give it).
    package mutating func double() -> Double? {
        guard let number = number() else { return nil }
        // Up to 15 digits and no exponent: the digits and the power of ten are exact doubles, so one
        // division rounds correctly (Clinger's fast path). Anything else goes through the library.
        var mantissa: UInt64 = 0
        var digits = 0
        var scale = 0
        var pastPoint = false
        var simple = true
        for byte in number.text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                mantissa = mantissa &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
                digits += 1
                if pastPoint { scale += 1 }
            case UInt8(ascii: "."): pastPoint = true
            case UInt8(ascii: "-"): break
            default: simple = false
            }
        }
        if simple, digits <= 15 {
            let magnitude = Double(mantissa) / Self.powersOfTen[scale]
            return number.negative ? -magnitude : magnitude
        }
        // Out of range (infinite, or zero from non-zero digits) is left to `JSONDecoder` to refuse or round.
        guard let value = Double(String(decoding: number.text, as: UTF8.self)), value.isFinite, value != 0 else {
            return nil
        }
        return value
    }

    private static let powersOfTen: [Double] = (0...15).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// Skips one value of any kind, checking it as the readers above would.
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 32 else { return false }
        skipSpace()
        guard position < bytes.count else { return false }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return string({ _ in true }) != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let object = bytes[position] == UInt8(ascii: "{")
            position += 1
            var (first, closed) = (true, false)
            while object ? nextMember(first: &first, closed: &closed) : nextElement(first: &first, closed: &closed) {
                guard skipValue(depth: depth + 1) else { return false }
            }
            return closed
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number() != nil
        }
    }

    /// `nextKey` for an object being skipped: any key `string` reads.
    private mutating func nextMember(first: inout Bool, closed: inout Bool) -> Bool {
        next(UInt8(ascii: "}"), first: &first, closed: &closed) && string({ _ in true }) != nil
            && take(UInt8(ascii: ":"))
    }

    /// A number's text, checked against JSON's grammar.
    private mutating func number() -> (text: UnsafeBufferPointer<UInt8>, negative: Bool, fractional: Bool)? {
        skipSpace()
        let start = position
        let negative = peek(UInt8(ascii: "-"))
        if negative { position += 1 }
        if peek(UInt8(ascii: "0")) {
            position += 1
        } else if digits() == 0 {
            return nil
        }
        var fractional = false
        if peek(UInt8(ascii: ".")) {
            position += 1
            guard digits() > 0 else { return nil }
            fractional = true
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            position += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { position += 1 }
            guard digits() > 0 else { return nil }
            fractional = true
        }
        return (UnsafeBufferPointer(rebasing: bytes[start..<position]), negative, fractional)
    }

    private mutating func digits() -> Int {
        let start = position
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
        return position - start
    }

    private func peek(_ byte: UInt8) -> Bool { position < bytes.count && bytes[position] == byte }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
            UnsafeBufferPointer(rebasing: bytes[position..<position + count]).elementsEqual(
                UnsafeBufferPointer(start: word.utf8Start, count: count))
        else { return false }
        position += count
        return true
    }

    private mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }
}

/// An object's key as read, matched against the names a reader knows: `case "id":` in a `switch`.
package struct JSONKey {
    let bytes: UnsafeBufferPointer<UInt8>

    @inline(__always)
    package static func ~= (name: StaticString, key: JSONKey) -> Bool {
        guard name.utf8CodeUnitCount == key.bytes.count else { return false }
        let start = name.utf8Start
        for index in 0..<key.bytes.count where key.bytes[index] != start[index] { return false }
        return true
    }
}
