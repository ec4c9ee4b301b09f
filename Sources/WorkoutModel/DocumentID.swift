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
        let hex = bytes.map { byte -> String in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        let groups = [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]]
        rawValue = groups.map { $0.joined() }.joined(separator: "-")
    }

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
