import DurableFiles
import LinkProtocol
import POSIX

/// Opening a log: identity, resolved marks and the scan of every segment.
///
/// What open accepts and refuses:
/// - Temporary files from interrupted atomic writes are removed first.
/// - Every record in a segment other than the last must verify and carry the next sequence;
///   anything else is `corruptRecord` (those segments were synced whole before the next began).
/// - In the last segment, the first record that does not verify (short header, short payload,
///   bad checksum, unexpected sequence) is a torn tail *unless* some later offset, searched byte
///   by byte, holds a verifying record with a higher sequence than the last good one: then the
///   damage is in the middle and open fails with `corruptRecord` naming that first bad offset.
///   A torn tail is cut off (`ftruncate` + `fsync`) and appends continue after the last good record;
///   the cut happens only once every check has passed, so an open that refuses changes no file, and
///   it is reported in `recoveryNotes`, for the daemon's log.
/// - Sequences missing between segments must all be resolved (their segment was deleted), else
///   `missingRecords`.
extension TransferLog {
    static let queueIDFileName = "queue-id"
    static let resolvedFileName = "resolved-sequences"
    static let queueIDLength = 16
    private static let segmentPrefix = "segment-"
    private static let segmentSuffix = ".log"
    private static let segmentDigits = 20

    /// The path of the segment whose first sequence is `first`.
    func segmentPath(_ first: UInt64) -> String {
        Self.segmentPath(first, in: directory)
    }

    /// `segment-<first, zero-padded to 20 digits>.log` in `directory`.
    static func segmentPath(_ first: UInt64, in directory: String) -> String {
        let digits = String(first)
        let padding = String(repeating: "0", count: segmentDigits - digits.count)
        return "\(directory)/\(segmentPrefix)\(padding)\(digits)\(segmentSuffix)"
    }

    /// The first sequence encoded in a segment file name, or nil for any other name.
    static func segmentFirstSequence(fromName name: String) -> UInt64? {
        guard name.hasPrefix(segmentPrefix), name.hasSuffix(segmentSuffix) else { return nil }
        let digits = name.dropFirst(segmentPrefix.count).dropLast(segmentSuffix.count)
        guard digits.count == segmentDigits, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else {
            return nil
        }
        return UInt64(digits)
    }

    /// Reads or creates the log's files in `directory` and rebuilds the in-memory state.
    static func recover(directory: String) throws -> (queueID: [UInt8], state: State, notes: [String]) {
        try FileSystem.createDirectory(directory)
        try AtomicFile.sweepTemporaryFiles(in: directory)
        let names = try FileSystem.entryNames(in: directory)
        var segments = names.compactMap(segmentFirstSequence(fromName:)).sorted()

        let queueIDPath = "\(directory)/\(queueIDFileName)"
        let resolvedPath = "\(directory)/\(resolvedFileName)"
        let queueID: [UInt8]
        if let stored = try AtomicFile.read(queueIDPath) {
            guard stored.count == queueIDLength else {
                throw StateFileError.malformed(
                    file: queueIDPath, reason: "\(stored.count) bytes, expected \(queueIDLength)")
            }
            queueID = stored
        } else {
            // The ID is written before anything else, so other files without it mean lost identity.
            guard segments.isEmpty, !names.contains(resolvedFileName) else {
                throw TransferLogError.missingQueueID(file: queueIDPath)
            }
            var random = SystemRandomNumberGenerator()
            queueID = (0..<queueIDLength).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            try AtomicFile.write(queueID, to: queueIDPath)
        }
        let stored = try RecordFile(path: resolvedPath).read()
        let resolved =
            try stored.map { try ResolvedSequences(decoding: $0.record, file: resolvedPath) } ?? ResolvedSequences()

        var records: [TransferRecord] = []
        var notes: [String] = []
        if stored?.otherHalfDamaged == true {
            // The write before the last, or the last cut short: what it resolved is offered again, and
            // the receiver's marks drop what it already has.
            notes.append("\(resolvedPath): one half damaged (a write cut short); read the other")
        }
        var expected: UInt64 = 1
        var activeBytes = 0
        /// The active segment's length on disk (records, then zeros or a torn tail).
        var activeFileBytes = 0
        var tornTail: (file: FileDescriptor, offset: Int)?
        for (index, first) in segments.enumerated() {
            let path = segmentPath(first, in: directory)
            guard first >= expected else {
                throw TransferLogError.corruptRecord(
                    file: path, offset: 0,
                    reason: "segment starts at \(first) but an earlier segment reaches \(expected - 1)")
            }
            if first > expected, !resolved.containsAll(expected...(first - 1)) {
                throw TransferLogError.missingRecords(directory: directory, sequences: expected...(first - 1))
            }
            expected = first
            let isLast = index == segments.count - 1
            let file = try FileDescriptor(opening: path, isLast ? [.readWrite] : [])
            let bytes = try file.readAll()
            let scan = try scanSegment(bytes, path: path, firstSequence: first, isLast: isLast)
            records += scan.records.filter { !resolved.contains($0.sequence) }
            expected = first + UInt64(scan.records.count)
            if isLast {
                tornTail = scan.tornTailOffset.map { (file, $0) }
                if let tornAt = scan.tornTailOffset {
                    // Counted up to the last byte that is not zero: the zeros written ahead held nothing.
                    let dropped = (bytes.lastIndex { $0 != 0 }.map { $0 + 1 } ?? tornAt) - tornAt
                    notes.append(
                        "cut a damaged last record (\(scan.tornTailReason ?? "unreadable")) from \(path) at offset "
                            + "\(tornAt): \(dropped) bytes dropped; the outbox continues after sequence "
                            + "\(expected - 1)")
                }
                activeBytes = scan.validBytes
                activeFileBytes = scan.tornTailOffset ?? bytes.count
            }
        }

        // Resolved marks above the last record mean synced records were lost. Refuse if any of
        // the lost ones was still pending; otherwise start a fresh segment past the marks so
        // sequences stay unique, and contiguous within each segment.
        if resolved.highest >= expected, !resolved.containsAll(expected...resolved.highest) {
            throw TransferLogError.missingRecords(directory: directory, sequences: expected...resolved.highest)
        }
        // Cut a torn tail only now that the log opens: a refused open leaves every file as it was.
        if let tornTail {
            try tornTail.file.truncate(to: tornTail.offset)
            try LatencyRecorder.fsync.time { try tornTail.file.sync() }
        }
        let nextSequence = max(expected, resolved.highest + 1)
        if segments.isEmpty || nextSequence > expected {
            _ = try FileDescriptor(
                opening: segmentPath(nextSequence, in: directory), [.writeOnly, .create, .exclusive])
            try AtomicFile.fsyncDirectory(directory)
            segments.append(nextSequence)
            activeBytes = 0
            activeFileBytes = 0
        }
        let activeFirst = segments[segments.count - 1]  // non-empty: created above when there was none
        let active = try FileDescriptor(opening: segmentPath(activeFirst, in: directory), [.writeOnly])
        let state = State(
            active: active, activeBytes: activeBytes, activeFileBytes: activeFileBytes, segmentFirstSequences: segments,
            nextSequence: nextSequence,
            writtenThrough: nextSequence - 1, syncedThrough: nextSequence - 1, records: records[...], resolved: resolved
        )
        return (queueID, state, notes)
    }

    /// Verifies every record in `bytes`, the contents of segment `path` (`TransferSegmentScan`); throws
    /// `corruptRecord` naming the file on damage a torn tail does not explain.
    static func scanSegment(_ bytes: [UInt8], path: String, firstSequence: UInt64, isLast: Bool) throws
        -> TransferSegmentScan
    {
        do {
            return try TransferSegmentScan(bytes, firstSequence: firstSequence, isLast: isLast)
        } catch {
            throw TransferLogError.corruptRecord(file: path, offset: error.offset, reason: error.reason)
        }
    }
}
