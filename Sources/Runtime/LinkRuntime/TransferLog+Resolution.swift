import DurableFiles
import LinkProtocol
import POSIX

/// Acknowledging and cancelling transfers, and deleting segments nobody needs any more.
extension TransferLog {
    /// Records that the receiver durably processed `sequence`; durable before it returns.
    ///
    /// Idempotent: acknowledging an already resolved sequence does nothing (acks may be
    /// redelivered). Throws `unknownSequence` for a sequence no completed append returned. If the
    /// ack is stored but deleting a fully resolved segment fails, the error is thrown and the ack
    /// stands; the deletion is retried on the next ack, cancel or open.
    package func acknowledge(sequence: UInt64) throws {
        try acknowledge(sequences: [sequence])
    }

    /// `acknowledge(sequence:)` for several sequences in one durable write (the acks one read
    /// delivers); an unknown one throws before anything is written.
    package func acknowledge(sequences: [UInt64]) throws {
        condition.lock()
        defer { condition.unlock() }
        if let failure = state.failure { throw failure }
        if let unknown = sequences.first(where: { $0 < 1 || $0 > state.syncedThrough }) {
            throw TransferLogError.unknownSequence(unknown)
        }
        try resolve(sequences)
    }

    /// Withdraws a pending transfer so it is never offered again; durable before it returns.
    ///
    /// Returns false, changing nothing, when `sequence` is not pending (already acknowledged,
    /// cancelled, or never durably appended) — like WatchConnectivity, a delivered transfer cannot
    /// be cancelled.
    package func cancel(sequence: UInt64) throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if let failure = state.failure { throw failure }
        guard sequence >= 1, sequence <= state.syncedThrough, !state.resolved.contains(sequence) else { return false }
        try resolve([sequence])
        return true
    }

    /// Persists `sequences` as resolved in one write, forgets their records and deletes segments
    /// that became fully resolved. Lock held; the in-memory state changes only after the file write
    /// succeeded.
    private func resolve(_ sequences: [UInt64]) throws {
        let fresh = sequences.filter { !state.resolved.contains($0) }
        guard !fresh.isEmpty else { return }
        var resolved = state.resolved
        for sequence in fresh { resolved.insert(sequence) }
        try resolvedFile.write(resolved.encoded())
        state.resolved = resolved
        for sequence in fresh {
            guard let index = recordIndex(of: sequence) else { continue }
            if index == state.records.startIndex {
                // The oldest, as an in-order ack finds it: its payload freed, the slice's start moved.
                state.records[index] = TransferRecord(sequence: sequence, payload: [], enqueuedAtMicros: 0)
                state.records.removeFirst()
            } else {
                state.records.remove(at: index)
            }
        }
        try deleteResolvedSegments()
    }

    /// Where the record with `sequence` sits in `state.records` (sorted), by binary search.
    private func recordIndex(of sequence: UInt64) -> Int? {
        guard sequence > 0 else { return nil }
        let index = recordIndex(firstAbove: sequence - 1)
        return index < state.records.endIndex && state.records[index].sequence == sequence ? index : nil
    }

    /// Deletes every segment but the active one whose sequences are all resolved, then syncs the
    /// directory. Lock held.
    ///
    /// A failed directory sync here is an ordinary error, not fatal: a deleted segment that comes
    /// back after a crash holds only resolved records and is deleted again.
    func deleteResolvedSegments() throws {
        var deleted = false
        var index = 0
        while index < state.segmentFirstSequences.count - 1 {
            let first = state.segmentFirstSequences[index]
            let last = state.segmentFirstSequences[index + 1] - 1
            if state.resolved.containsAll(first...last) {
                try FileSystem.removeFile(segmentPath(first))
                state.segmentFirstSequences.remove(at: index)
                deleted = true
            } else {
                index += 1
            }
        }
        if deleted { try AtomicFile.fsyncDirectory(directory) }
    }
}
