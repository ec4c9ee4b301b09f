/// A validated document identifier: a UUID in canonical 8-4-4-4-12 hexadecimal form, stored upper-case.
///
/// Document IDs name files (`Splits/<id>.json`), so anything that is not a UUID is refused: no ID can
/// contain a path separator, a dot or a NUL and so name a path outside the document directory.
package struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    // The 16 bytes themselves, not the text: an ID is held once per run in several indexes, and 36
    // characters of text cost a heap allocation each (the run index of 100k runs held 100k of them).
    private let high: UInt64
    private let low: UInt64

    /// Validates `text`; returns nil unless it is a UUID in 8-4-4-4-12 form (either letter case).
    package init?(_ text: String) { self.init(utf8: text.utf8) }

    /// `init?(_:)` on the text's UTF-8 bytes.
    package init?(utf8: some Sequence<UInt8>) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        var digits = 0
        for byte in utf8 {
            switch count {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard let value = Self.hexValue(byte) else { return nil }
                if digits < 16 {
                    high = high << 4 | UInt64(value)
                } else {
                    low = low << 4 | UInt64(value)
                }
                digits += 1
            }
            count += 1
            guard count <= 36 else { return nil }
        }
        guard count == 36 else { return nil }
        self.high = high
        self.low = low
    }

    /// Builds an ID from 16 random or counter bytes supplied by the caller (pure code never draws them itself).
    package init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a document ID needs exactly 16 bytes, got \(bytes.count)")
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The ID whose 16 bytes are `high` then `low`, big-endian (how the run index file stores it).
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The ID's first and last 8 bytes as big-endian integers: its order is theirs.
    package var halves: (high: UInt64, low: UInt64) { (high, low) }

    /// The 16 bytes the ID's hexadecimal digits spell (the inverse of `init(bytes:)`).
    package var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The canonical upper-case text, e.g. `3F2504E0-4F89-11D3-9A0C-0305E82C3301`.
    package var rawValue: String {
        String(unsafeUninitializedCapacity: 36) { text in
            var offset = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    text[offset] = UInt8(ascii: "-")
                    offset += 1
                }
                let word = nibble < 16 ? high : low
                let value = Int(truncatingIfNeeded: word >> (60 - 4 * (nibble % 16))) & 0x0F
                text[offset] = Self.hexDigits[value]
                offset += 1
            }
            return offset
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    package var description: String { rawValue }

    /// The order of the canonical text (upper-case hex digits sort as their values do).
    package static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension DocumentID: TextCoded {
    package init?(codedText text: String) { self.init(text) }
    package static var textFormName: String { "a UUID document ID" }
}
