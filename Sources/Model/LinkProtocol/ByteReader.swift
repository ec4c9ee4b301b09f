/// Reads big-endian integers and byte runs from the front of a frame body: the decoding half of the codec.
///
/// Every read that runs past the end throws ``FrameError/malformedBody(kind:reason:)`` naming `field`, so a
/// short body can never trap.
struct ByteReader {
    /// The kind whose body this is, for error messages.
    let kind: FrameKind
    /// The bytes not read yet.
    private var remaining: ArraySlice<UInt8>

    /// Starts reading `body`, the bytes after the kind byte.
    init(kind: FrameKind, body: ArraySlice<UInt8>) {
        self.kind = kind
        self.remaining = body
    }

    /// Reads one byte.
    mutating func readUInt8(_ field: String) throws(FrameError) -> UInt8 {
        try take(1, field).first ?? 0
    }

    /// Reads 2 bytes as a big-endian integer.
    mutating func readUInt16(_ field: String) throws(FrameError) -> UInt16 {
        try take(2, field).reduce(0) { $0 << 8 | UInt16($1) }
    }

    /// Reads 8 bytes as a big-endian integer.
    mutating func readUInt64(_ field: String) throws(FrameError) -> UInt64 {
        try take(8, field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads exactly `count` bytes.
    mutating func readBytes(_ count: Int, _ field: String) throws(FrameError) -> [UInt8] {
        Array(try take(count, field))
    }

    /// Reads a 16-byte instance ID.
    mutating func readInstanceID(_ field: String) throws(FrameError) -> InstanceID {
        let bytes = try take(InstanceID.byteCount, field)
        guard let id = InstanceID(bytes: bytes) else {
            throw .malformedBody(kind: kind, reason: "\(field) is not \(InstanceID.byteCount) bytes")
        }
        return id
    }

    /// Reads everything left (possibly nothing).
    mutating func readRest() -> [UInt8] {
        defer { remaining = remaining[remaining.endIndex...] }
        return Array(remaining)
    }

    /// Reads everything left as UTF-8 text; invalid UTF-8 is malformed rather than repaired.
    mutating func readRestAsUTF8(_ field: String) throws(FrameError) -> String {
        let bytes = readRest()
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformedBody(kind: kind, reason: "\(field) is not valid UTF-8")
        }
        return text
    }

    /// Confirms the body has been read completely; fixed-size bodies with trailing bytes are malformed.
    func expectEnd() throws(FrameError) {
        guard remaining.isEmpty else {
            throw .malformedBody(kind: kind, reason: "\(remaining.count) unexpected trailing bytes")
        }
    }

    /// Removes and returns the next `count` bytes, or throws if fewer remain.
    private mutating func take(_ count: Int, _ field: String) throws(FrameError) -> ArraySlice<UInt8> {
        guard remaining.count >= count else {
            throw .malformedBody(
                kind: kind,
                reason: "body ends inside \(field) (needs \(count) bytes, \(remaining.count) left)"
            )
        }
        let end = remaining.startIndex + count
        defer { remaining = remaining[end...] }
        return remaining[..<end]
    }
}
