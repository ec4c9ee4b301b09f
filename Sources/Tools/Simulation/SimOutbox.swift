import LinkProtocol

/// The link's transfer outbox on the simulated disk, in the real log's byte format: one segment of
/// `TransferRecord`s, the resolved sequences (an atomic file in the real log, so whole at a crash),
/// and — apart from the bytes known synced — the bytes the group commit in flight has written but not
/// yet fdatasync'd. A power loss keeps any prefix of those (the last append torn at any byte); a
/// process crash keeps them whole or not at all (the outbox thread wrote them to the page cache, or
/// had not yet). The next open reads the segment with the real `TransferSegmentScan`, which cuts a
/// torn tail as `TransferLog`'s recovery does.
struct SimOutbox {
    /// The segment's first sequence (earlier segments were all resolved and deleted).
    private(set) var firstSequence: UInt64 = 1
    /// The segment's bytes that are on disk for sure.
    private var synced: [UInt8] = []
    /// Bytes written by the group commit in flight, not yet synced, and the records they hold.
    private var unsynced: [UInt8] = []
    private var unsyncedRecords: [(sequence: UInt64, payload: [UInt8])] = []
    private var resolved: Set<UInt64> = []
    private(set) var nextSequence: UInt64 = 1
    /// Records written (synced or not) and not resolved, oldest first: the log's view in memory.
    private(set) var pending: [(sequence: UInt64, payload: [UInt8])] = []

    var unsyncedByteCount: Int { unsynced.count }

    /// Writes a record (not synced yet) under the sequence the link engine issued; false (nothing
    /// written) when it is not the one the log holds next, as the real log refuses it.
    mutating func append(sequence: UInt64, _ payload: [UInt8], enqueuedAtMicros: Int64) -> Bool {
        guard sequence == nextSequence else { return false }
        nextSequence += 1
        unsynced += TransferRecord(sequence: sequence, payload: payload, enqueuedAtMicros: enqueuedAtMicros)
            .encoded()
        unsyncedRecords.append((sequence, payload))
        pending.append((sequence, payload))
        return true
    }

    /// The fdatasync of the group commit: returns the records it made durable, in order.
    mutating func sync() -> [(sequence: UInt64, payload: [UInt8])] {
        synced += unsynced
        unsynced = []
        defer { unsyncedRecords = [] }
        return unsyncedRecords
    }

    /// Marks sequences delivered or cancelled; a segment whose records are all resolved is dropped.
    mutating func resolve(_ sequences: some Sequence<UInt64>) {
        resolved.formUnion(sequences)
        pending.removeAll { resolved.contains($0.sequence) }
        if pending.isEmpty, unsynced.isEmpty {
            firstSequence = nextSequence
            synced = []
            resolved = []
        }
    }

    /// The machine or process went down: the first `kept` unsynced bytes reached the disk.
    mutating func lose(keepingUnsynced kept: Int) {
        synced += unsynced.prefix(kept)
        unsynced = []
        unsyncedRecords = []
    }

    /// Opens the log from its bytes, as a restart does: a torn tail is cut (and described in the
    /// returned note); damage a torn tail does not explain is thrown, as the real open refuses it.
    mutating func open() throws(TransferSegmentScan.Damage) -> String? {
        // A copy taken while a commit was in flight (a backup) holds bytes no disk kept.
        unsynced = []
        unsyncedRecords = []
        let scan = try TransferSegmentScan(synced, firstSequence: firstSequence, isLast: true)
        var note: String?
        // This disk writes no zeros ahead of the records, so any byte past them, zero or not (the
        // reading takes a zero tail as the end), is a torn append: cut, as the real log's next append
        // would overwrite it.
        if synced.count > scan.validBytes {
            let torn = scan.validBytes
            note =
                "cut a torn last record (\(scan.tornTailReason ?? "zeros")) at offset \(torn): "
                + "\(synced.count - torn) bytes dropped"
            synced.removeLast(synced.count - torn)
        }
        pending = scan.records.filter { !resolved.contains($0.sequence) }.map { ($0.sequence, $0.payload) }
        nextSequence = max(firstSequence + UInt64(scan.records.count), (resolved.max() ?? 0) + 1)
        return note
    }
}
