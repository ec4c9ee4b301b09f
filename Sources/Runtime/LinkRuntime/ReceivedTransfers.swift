import DurableFiles
import LinkProtocol
import Synchronization

/// The receiver's dedup store for `transferUserInfo`: per sender queue ID, the highest sequence
/// it has durably applied.
///
/// Transfers from one queue arrive in order, so one mark per queue decides duplicates. A wiped
/// sender has a new queue ID and so starts with no mark. Stored as the record of one `RecordFile`
/// (which checksums it), big-endian: u32 entry count, then per entry u8 queue-ID length, the ID
/// bytes, u64 mark. Entries are sorted by queue ID so equal stores are byte-identical.
package final class ReceivedTransfers: Sendable {
    /// The file holding the marks.
    package let path: String
    private let file: RecordFile
    // Sound because every read and every file write happens inside `withLock`, so the marks in
    // memory never differ from the file and a slower write can never replace a newer one. A Mutex,
    // not an actor, because callers are blocking I/O threads.
    private let marks: Mutex<[[UInt8]: UInt64]>

    /// Loads the marks from `path`; a missing file means nothing has been applied yet.
    package init(path: String) throws {
        self.path = path
        file = RecordFile(path: path)
        let stored = try file.read().map { try Self.decode($0.record, file: path) } ?? [:]
        marks = Mutex(stored)
    }

    /// Whether `sequence` from queue `queueID` was already applied (at or below its mark).
    package func isDuplicate(queueID: [UInt8], sequence: UInt64) -> Bool {
        marks.withLock { sequence <= $0[queueID, default: 0] }
    }

    /// Every queue's mark, for handing to the link engine at start-up.
    package var allMarks: [[UInt8]: UInt64] {
        marks.withLock { $0 }
    }

    /// The highest applied sequence for `queueID`, 0 if none.
    package func highestApplied(queueID: [UInt8]) -> UInt64 {
        marks.withLock { $0[queueID, default: 0] }
    }

    /// Durably raises the mark for `queueID` to `sequence`; a lower or equal sequence changes nothing.
    ///
    /// `queueID` must be 1...255 bytes (the link layer checks peer data before it gets here).
    package func markApplied(queueID: [UInt8], sequence: UInt64) throws {
        precondition((1...255).contains(queueID.count), "queue ID length \(queueID.count) outside 1...255")
        try marks.withLock { current in
            guard sequence > current[queueID, default: 0] else { return }
            var updated = current
            updated[queueID] = sequence
            try file.write(Self.encode(updated))
            current = updated
        }
    }

    /// The file format described on the type.
    static func encode(_ marks: [[UInt8]: UInt64]) -> [UInt8] {
        var bytes: [UInt8] = []
        BigEndian.append(UInt32(marks.count), to: &bytes)
        for (queueID, mark) in marks.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            bytes.append(UInt8(queueID.count))
            bytes += queueID
            BigEndian.append(mark, to: &bytes)
        }
        return bytes
    }

    /// Parses `encode` output read from `file`.
    static func decode(_ bytes: [UInt8], file: String) throws -> [[UInt8]: UInt64] {
        guard bytes.count >= 4 else {
            throw StateFileError.malformed(file: file, reason: "\(bytes.count) bytes, need at least 4")
        }
        let count = Int(BigEndian.read(UInt32.self, from: bytes, at: 0))
        var marks: [[UInt8]: UInt64] = [:]
        var offset = 4
        let end = bytes.count
        for entry in 0..<count {
            guard offset < end, offset + 1 + Int(bytes[offset]) + 8 <= end else {
                throw StateFileError.malformed(
                    file: file, reason: "entry \(entry) of \(count) truncated at offset \(offset)")
            }
            let length = Int(bytes[offset])
            let queueID = Array(bytes[(offset + 1)..<(offset + 1 + length)])
            marks[queueID] = BigEndian.read(UInt64.self, from: bytes, at: offset + 1 + length)
            offset += 1 + length + 8
        }
        guard offset == end else {
            throw StateFileError.malformed(file: file, reason: "\(end - offset) unexpected bytes at offset \(offset)")
        }
        return marks
    }
}
