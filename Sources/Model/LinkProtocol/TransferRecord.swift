/// One queued `transferUserInfo` payload as the outbox holds it.
package struct TransferRecord: Equatable, Sendable {
    /// Position in the queue: 1 for the queue's first transfer, then one more for each, never reused.
    package let sequence: UInt64
    /// The encoded user-info dictionary, opaque to the log.
    package let payload: [UInt8]
    /// When the caller enqueued it, in microseconds since the Unix epoch (the caller's clock).
    package let enqueuedAtMicros: Int64

    package init(sequence: UInt64, payload: [UInt8], enqueuedAtMicros: Int64) {
        self.sequence = sequence
        self.payload = payload
        self.enqueuedAtMicros = enqueuedAtMicros
    }
}

extension TransferRecord {
    /// Bytes before the payload: length (4), sequence (8), enqueue time (8), checksum (4).
    package static let headerLength = 24

    /// The record as it is written to a segment, all integers big-endian:
    ///
    /// ```
    /// offset 0   u32 payload length
    ///        4   u64 sequence
    ///        12  u64 enqueue time, microseconds since the Unix epoch (two's complement)
    ///        20  u32 CRC32C over bytes 4..<20 followed by the payload
    ///        24  payload
    /// ```
    ///
    /// The length is outside the checksum so a reader can find the record's end first; a corrupt
    /// length still fails the check because it selects the wrong payload bytes.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerLength + payload.count)
        BigEndian.append(UInt32(payload.count), to: &bytes)
        BigEndian.append(sequence, to: &bytes)
        BigEndian.append(UInt64(bitPattern: enqueuedAtMicros), to: &bytes)
        BigEndian.append(CRC32C.update(CRC32C.checksum(bytes[4..<20]), with: payload), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// What `decode` found at an offset.
    package enum Decoded: Equatable {
        /// A whole record whose checksum verifies, `length` bytes long including the header.
        case record(TransferRecord, length: Int)
        /// No valid record starts here; `reason` says why, for the corruption report.
        case invalid(reason: String)
    }

    /// Decodes the record starting at `offset` in a segment's contents, checking its checksum.
    package static func decode(_ bytes: [UInt8], at offset: Int) -> Decoded {
        let available = bytes.count - offset
        guard available >= headerLength else {
            return .invalid(reason: "short header: \(available) of \(headerLength) bytes")
        }
        let length = Int(BigEndian.read(UInt32.self, from: bytes, at: offset))
        guard length <= available - headerLength else {
            return .invalid(reason: "payload length \(length) exceeds the \(available - headerLength) bytes left")
        }
        let stored = BigEndian.read(UInt32.self, from: bytes, at: offset + 20)
        let payloadRange = (offset + headerLength)..<(offset + headerLength + length)
        let computed = CRC32C.update(CRC32C.checksum(bytes[(offset + 4)..<(offset + 20)]), with: bytes[payloadRange])
        guard stored == computed else {
            return .invalid(reason: "checksum mismatch (stored \(hex(stored)), computed \(hex(computed)))")
        }
        let record = TransferRecord(
            sequence: BigEndian.read(UInt64.self, from: bytes, at: offset + 4),
            payload: Array(bytes[payloadRange]),
            enqueuedAtMicros: Int64(bitPattern: BigEndian.read(UInt64.self, from: bytes, at: offset + 12))
        )
        return .record(record, length: headerLength + length)
    }

    private static func hex(_ value: UInt32) -> String {
        "0x" + String(value, radix: 16, uppercase: true)
    }
}
