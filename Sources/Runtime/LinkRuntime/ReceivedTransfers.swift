import DurableFiles
import LinkProtocol
import Synchronization

/// The receiver's dedup store for `transferUserInfo` and `transferFile`: per sender queue ID, its
/// `QueueMark` (the highest sequence durably applied and the digests of the last ones applied).
///
/// Stored as the record of one `RecordFile` (which checksums it), big-endian: "WTM2", u32 entry
/// count, then per entry u8 queue-ID length, the ID bytes, u64 highest sequence, u16 digest count,
/// and per digest u64 sequence, u64 digest, oldest first. Entries are sorted by queue ID so equal
/// stores are byte-identical. The format before digests (u32 entry count, then per entry the
/// length, ID and u64 mark; its count can never spell "WTM2") is read as marks without digests.
package final class ReceivedTransfers: Sendable {
    /// The file holding the marks.
    package let path: String
    private let file: RecordFile
    // Sound because every read and every file write happens inside `withLock`, so the marks in
    // memory never differ from the file and a slower write can never replace a newer one. A Mutex,
    // not an actor, because callers are blocking I/O threads.
    private let marks: Mutex<[[UInt8]: QueueMark]>

    /// Loads the marks from `path`; a missing file means nothing has been applied yet.
    package init(path: String) throws {
        self.path = path
        file = RecordFile(path: path)
        let stored = try file.read().map { try Self.decode($0.record, file: path) } ?? [:]
        marks = Mutex(stored)
    }

    /// Every queue's mark, for handing to the link engine at start-up.
    package var allMarks: [[UInt8]: QueueMark] {
        marks.withLock { $0 }
    }

    /// The highest applied sequence for `queueID`, 0 if none.
    package func highestApplied(queueID: [UInt8]) -> UInt64 {
        marks.withLock { $0[queueID]?.highest ?? 0 }
    }

    /// Durably replaces the mark for `queueID` with `mark` (what the link engine decided); a mark
    /// with a lower highest sequence than the stored one changes nothing.
    ///
    /// `queueID` must be 1...255 bytes (the link layer checks peer data before it gets here).
    package func persist(queueID: [UInt8], _ mark: QueueMark) throws {
        precondition((1...255).contains(queueID.count), "queue ID length \(queueID.count) outside 1...255")
        try marks.withLock { current in
            guard mark != current[queueID], mark.highest >= current[queueID]?.highest ?? 0 else { return }
            var updated = current
            updated[queueID] = mark
            try file.write(Self.encode(updated))
            current = updated
        }
    }

    static let magic: [UInt8] = Array("WTM2".utf8)

    /// The file format described on the type.
    static func encode(_ marks: [[UInt8]: QueueMark]) -> [UInt8] {
        var bytes = magic
        BigEndian.append(UInt32(marks.count), to: &bytes)
        for (queueID, mark) in marks.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            bytes.append(UInt8(queueID.count))
            bytes += queueID
            BigEndian.append(mark.highest, to: &bytes)
            BigEndian.append(UInt16(mark.recent.count), to: &bytes)
            for applied in mark.recent {
                BigEndian.append(applied.sequence, to: &bytes)
                BigEndian.append(applied.digest, to: &bytes)
            }
        }
        return bytes
    }

    /// Parses `encode` output (or the format before it) read from `file`.
    static func decode(_ bytes: [UInt8], file: String) throws -> [[UInt8]: QueueMark] {
        let digests = bytes.starts(with: magic)
        let start = digests ? magic.count : 0
        guard bytes.count >= start + 4 else {
            throw StateFileError.malformed(file: file, reason: "\(bytes.count) bytes, need at least \(start + 4)")
        }
        let count = Int(BigEndian.read(UInt32.self, from: bytes, at: start))
        var marks: [[UInt8]: QueueMark] = [:]
        var offset = start + 4
        let end = bytes.count
        func truncated(_ entry: Int) -> StateFileError {
            .malformed(file: file, reason: "entry \(entry) of \(count) truncated at offset \(offset)")
        }
        for entry in 0..<count {
            let fixed = digests ? 10 : 8
            guard offset < end, offset + 1 + Int(bytes[offset]) + fixed <= end else { throw truncated(entry) }
            let length = Int(bytes[offset])
            let queueID = Array(bytes[(offset + 1)..<(offset + 1 + length)])
            let highest = BigEndian.read(UInt64.self, from: bytes, at: offset + 1 + length)
            offset += 1 + length + 8
            var recent: [QueueMark.Applied] = []
            if digests {
                let kept = Int(BigEndian.read(UInt16.self, from: bytes, at: offset))
                offset += 2
                guard offset + kept * 16 <= end else { throw truncated(entry) }
                for index in 0..<kept {
                    recent.append(
                        QueueMark.Applied(
                            sequence: BigEndian.read(UInt64.self, from: bytes, at: offset + index * 16),
                            digest: BigEndian.read(UInt64.self, from: bytes, at: offset + index * 16 + 8)))
                }
                offset += kept * 16
            }
            marks[queueID] = QueueMark(highest: highest, recent: recent)
        }
        guard offset == end else {
            throw StateFileError.malformed(file: file, reason: "\(end - offset) unexpected bytes at offset \(offset)")
        }
        return marks
    }
}
