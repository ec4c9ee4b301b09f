/// One outbox segment's bytes read back (`TransferLog`'s recovery; the simulator's disk uses the same
/// bytes and the same reading).
///
/// Every record must verify and carry the next sequence. In a segment other than the last, anything
/// else is damage (those segments were synced whole before the next began). In the last segment, the
/// first record that does not verify (short header, short payload, bad checksum, unexpected sequence)
/// is a torn tail *unless* some later offset, searched byte by byte, holds a verifying record with a
/// higher sequence than the last good one: then the damage is in the middle.
///
/// Zeros from a record boundary to the end of the segment are not a record: `TransferLog` writes
/// zeros ahead of the active segment's records, so that appends overwrite allocated blocks and an
/// `fdatasync` need not journal a new size. Such a tail ends the records, in any segment; records
/// lost from the middle of the log are still caught by the sequence check across segments.
package struct TransferSegmentScan: Equatable, Sendable {
    /// The whole, verified records in order.
    package var records: [TransferRecord] = []
    /// Length of the prefix those records occupy (a zero tail after them is not counted).
    package var validBytes = 0
    /// Where a torn tail starts (last segment only); nil when the bytes end on a record boundary.
    package var tornTailOffset: Int?
    /// What was wrong with the first record of the torn tail.
    package var tornTailReason: String?

    /// Damage a torn tail does not explain: the first bad record's offset and what was wrong with it.
    package struct Damage: Error, Equatable {
        package var offset: Int
        package var reason: String
    }

    /// Verifies every record in `bytes`, a segment whose first record is `firstSequence`.
    package init(_ bytes: [UInt8], firstSequence: UInt64, isLast: Bool) throws(Damage) {
        var expected = firstSequence
        while validBytes < bytes.count {
            let offset = validBytes
            let reason: String
            switch TransferRecord.decode(bytes, at: offset) {
            case .record(let record, let length) where record.sequence == expected:
                records.append(record)
                validBytes += length
                expected += 1
                continue
            case .record(let record, _):
                reason = "sequence \(record.sequence) where \(expected) was expected"
            case .invalid(let invalidReason):
                reason = invalidReason
            }
            if bytes[offset...].allSatisfy({ $0 == 0 }) { return }
            guard isLast else { throw Damage(offset: offset, reason: reason) }
            if let later = Self.laterRecord(in: bytes, from: offset, above: expected - 1) {
                throw Damage(
                    offset: offset,
                    reason:
                        "\(reason); a valid record with sequence \(later.sequence) follows at offset \(later.offset)")
            }
            tornTailOffset = offset
            tornTailReason = reason
            return
        }
    }

    /// The first offset at or after `start` holding a verifying record with a sequence above
    /// `lastGood`, searched byte by byte.
    private static func laterRecord(in bytes: [UInt8], from start: Int, above lastGood: UInt64)
        -> (offset: Int, sequence: UInt64)?
    {
        var offset = start
        while bytes.count - offset >= TransferRecord.headerLength {
            // Cheap filters before the checksum: most offsets fail on sequence or length.
            let sequence = BigEndian.read(UInt64.self, from: bytes, at: offset + 4)
            let length = Int(BigEndian.read(UInt32.self, from: bytes, at: offset))
            if sequence > lastGood, length <= bytes.count - offset - TransferRecord.headerLength,
                case .record = TransferRecord.decode(bytes, at: offset)
            {
                return (offset, sequence)
            }
            offset += 1
        }
        return nil
    }
}
