import FoundationEssentials

/// A message's top-level `kind`, read without decoding the rest of it.
package enum MessageKind {
    /// What `JSONDecoder` reads as the optional string member `kind` of the object `bytes` hold: nil
    /// when the member is absent or `null`, or the bytes are not such an object. `JSONReader` reads
    /// it when it can tell (skipping the other members, checked as it goes) and `JSONDecoder` when
    /// not (an escaped key, a second `kind`, anything the reader gives up on), so the answer is
    /// always `JSONDecoder`'s. A run's update is a few kilobytes: decoding it to learn its kind took
    /// about 25 µs of the phone's loop on each edit's round trip.
    package static func of(_ bytes: [UInt8]) -> String? {
        if let kind = readByHand(bytes) { return kind }
        struct Probe: Decodable { var kind: String? }
        return try? JSONDecoder().decode(Probe.self, from: Data(bytes)).kind
    }

    /// `.some(kind)` when the reader can tell; nil when `JSONDecoder` must.
    package static func readByHand(_ bytes: [UInt8]) -> String?? {
        bytes.withUnsafeBufferPointer(read)
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> String?? {
        var reader = JSONReader(bytes)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var (kind, seen): (String?, Bool) = (nil, false)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            switch key {
            case "kind":
                guard !seen else { return nil }
                seen = true
                if reader.null() { continue }
                guard let value = reader.string() else { return nil }
                kind = value
            default:
                guard reader.skipValue() else { return nil }
            }
        }
        guard closed, reader.atEnd() else { return nil }
        return .some(kind)
    }
}
