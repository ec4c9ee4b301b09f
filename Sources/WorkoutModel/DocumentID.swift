/// A validated document identifier: a UUID in canonical 8-4-4-4-12 hexadecimal form, stored upper-case.
///
/// Document IDs name files (`Splits/<id>.json`), so anything that is not a UUID is refused: no ID can
/// contain a path separator, a dot or a NUL and so name a path outside the document directory.
package struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The canonical upper-case text, e.g. `3F2504E0-4F89-11D3-9A0C-0305E82C3301`.
    package let rawValue: String

    /// Validates `text`; returns nil unless it is a UUID in 8-4-4-4-12 form (either letter case).
    package init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        for (offset, byte) in utf8.enumerated() {
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard Self.isHexDigit(byte) else { return nil }
            }
        }
        rawValue = text.uppercased()
    }

    /// Builds an ID from 16 random or counter bytes supplied by the caller (pure code never draws them itself).
    package init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a document ID needs exactly 16 bytes, got \(bytes.count)")
        // Written straight into the string's storage: the run index decodes 100,000s of IDs at start-up.
        rawValue = String(unsafeUninitializedCapacity: 36) { text in
            var offset = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[offset] = UInt8(ascii: "-")
                    offset += 1
                }
                text[offset] = Self.hexDigits[Int(byte >> 4)]
                text[offset + 1] = Self.hexDigits[Int(byte & 0x0F)]
                offset += 2
            }
            return offset
        }
    }

    /// The 16 bytes the ID's hexadecimal digits spell (the inverse of `init(bytes:)`).
    package var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(16)
        var high: UInt8?
        for byte in rawValue.utf8 where byte != UInt8(ascii: "-") {
            let value = byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "A") + 10
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return result
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    package var description: String { rawValue }

    package static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}

extension DocumentID: TextCoded {
    package init?(codedText text: String) { self.init(text) }
    package static var textFormName: String { "a UUID document ID" }
}
