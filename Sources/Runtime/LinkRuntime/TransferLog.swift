import DurableFiles
import Foundation
import LinkProtocol
import POSIX

/// The durable FIFO outbox behind `transferUserInfo`: an append-only, segmented log in one directory.
///
/// Directory layout:
/// - `queue-id`: 16 random bytes created at first open. A wiped directory gets a new ID, so the
///   receiver (which dedups by queue ID and sequence) never mistakes restarted sequences for duplicates.
/// - `segment-<first sequence, 20 digits>.log`: records as described on `TransferRecord.encoded()`,
///   sequences contiguous from the number in the name. The last segment is the active one.
/// - `resolved-sequences`: acknowledged and cancelled sequences (`ResolvedSequences`), a `RecordFile`.
///
/// Durability: `append` returns only after `fdatasync` covered the record. Concurrent appenders
/// share syncs (group commit): each writes its record under the lock; whoever then finds no sync
/// in flight becomes the leader, syncs everything written so far with the lock released, and wakes
/// everyone its sync covered; the others wait. `pending()` offers only records a sync has covered,
/// so a sequence the receiver has seen can never be lost in a crash and reassigned.
///
/// A failed `fdatasync` or directory `fsync` is never retried (after a failed sync the page cache
/// no longer says what is on disk): the log calls `onFatalSyncFailure` (default: report and
/// `exit(75)`), and afterwards every operation throws `TransferLogError.syncFailed`. The process
/// recovers from disk on restart; see `TransferLog+Recovery.swift` for what open checks.
///
/// Segments: a new one is started when a record would take the active one past
/// `segmentRolloverBytes`. The active segment is written out with zeros ahead of its records,
/// `writeAheadBytes` at a time: most appends then overwrite allocated blocks of a file whose size
/// does not change, so their `fdatasync` has no size to journal (docs/PERFORMANCE.md). The reading
/// treats zeros after the last record as its end. A segment is deleted once every sequence in it is
/// resolved, except the active one, which is never deleted: its name and records tell the next
/// sequence, so sequences are never reused even when everything has been acknowledged.
///
/// Blocking: every method may block on disk I/O (ack and cancel hold the lock over an atomic file
/// write); call it off the cooperative thread pool.
package final class TransferLog: @unchecked Sendable {
    // @unchecked Sendable is sound because the only mutable stored property, `state`, is read and
    // written exclusively between `condition.lock()` and `condition.unlock()`; `Mutex` cannot be
    // used because group commit needs a condition variable to park followers.

    /// Limits and the fatal-sync policy.
    package struct Configuration: Sendable {
        /// Largest payload `append` accepts.
        package var maximumPayloadBytes: Int
        /// A new segment is started when a record would take the active one past this size.
        package var segmentRolloverBytes: Int
        /// Zeros written ahead of the records whenever an append reaches the end of the active
        /// segment's file (never past `segmentRolloverBytes`); 0 writes none.
        package var writeAheadBytes: Int
        /// Called once, with the log's lock held, when a sync fails; must not call back into the log.
        package var onFatalSyncFailure: @Sendable (SystemCallError) -> Void

        package init(
            maximumPayloadBytes: Int = 65_536,
            segmentRolloverBytes: Int = 4 * 1024 * 1024,
            writeAheadBytes: Int = 1024 * 1024,
            onFatalSyncFailure: @escaping @Sendable (SystemCallError) -> Void = TransferLog.exitAfterSyncFailure
        ) {
            self.maximumPayloadBytes = maximumPayloadBytes
            self.segmentRolloverBytes = segmentRolloverBytes
            self.writeAheadBytes = writeAheadBytes
            self.onFatalSyncFailure = onFatalSyncFailure
        }
    }

    /// Everything that changes after open; guarded by `condition`.
    struct State {
        /// The segment appends go to (the last one).
        var active: FileDescriptor
        /// Bytes of whole records in the active segment; the next record is written here.
        var activeBytes: Int
        /// The active segment file's length: its records, then zeros written ahead of them.
        var activeFileBytes: Int
        /// First sequence of every segment file, ascending; the last is the active segment.
        var segmentFirstSequences: [UInt64]
        /// The sequence the next append gets.
        var nextSequence: UInt64
        /// Highest sequence written to the page cache.
        var writtenThrough: UInt64
        /// Highest sequence a completed sync covers; `pending()` shows nothing above it.
        var syncedThrough: UInt64
        /// Whether a group-commit leader is running `fdatasync` right now.
        var syncInFlight = false
        /// Unresolved records in sequence order, including written-but-unsynced ones at the end. A
        /// slice: acknowledgements come oldest first, and dropping the front of a slice moves no
        /// records (a shift per ack cost a 100,000-deep drain half its rate).
        var records: ArraySlice<TransferRecord>
        /// Acknowledged and cancelled sequences, as persisted.
        var resolved: ResolvedSequences
        /// Set when a sync failed; the log is unusable from then on.
        var failure: TransferLogError?
    }

    /// The directory holding the log's files.
    package let directory: String
    /// This queue's random identity; the receiver keys its dedup marks by it.
    package let queueID: [UInt8]
    /// What opening had to repair (a torn tail cut off), one line each, for the daemon's log.
    package let recoveryNotes: [String]
    /// `resolved-sequences`, rewritten in place (`RecordFile`).
    let resolvedFile: RecordFile
    let configuration: Configuration
    /// Guards `state` and parks group-commit followers. Internal (not private) only so this
    /// type's extensions in other files can take it.
    let condition = NSCondition()
    /// Touch only while holding `condition`.
    var state: State

    /// Opens the log in `directory` (created if missing; its parent must exist), recovering it as `TransferLog+Recovery`
    /// describes; throws `TransferLogError.corruptRecord` and friends rather than guess.
    package init(directory: String, configuration: Configuration = Configuration()) throws {
        precondition(
            configuration.maximumPayloadBytes <= Int(UInt32.max), "payloads are limited by the u32 length field")
        self.directory = directory
        self.configuration = configuration
        resolvedFile = RecordFile(path: "\(directory)/\(Self.resolvedFileName)")
        (queueID, state, recoveryNotes) = try Self.recover(directory: directory)
        condition.lock()
        defer { condition.unlock() }
        try deleteResolvedSegments()
    }

    /// Durably appends a transfer under the sequence the log holds next, and returns it (tools and
    /// tests; the link endpoint's transfers are numbered by its engine: `append(numbered:)`).
    ///
    /// Returns only after an `fdatasync` that covers the record has succeeded; safe to call from
    /// many threads at once, which then share syncs.
    package func append(_ payload: [UInt8], enqueuedAtMicros: Int64) throws -> UInt64 {
        try checkSize(payload)
        condition.lock()
        defer { condition.unlock() }
        let sequence = try write(payload, enqueuedAtMicros: enqueuedAtMicros)
        try waitUntilSynced(through: sequence)
        return sequence
    }

    /// Durably appends transfers numbered by the caller (the link engine issues the numbers), in
    /// order, sharing one `fdatasync`; returns each one's outcome, in the same order.
    ///
    /// For a caller that collects transfers itself (the link endpoint's single outbox thread): one
    /// thread gets the batching that `append` gets only from many concurrent threads. Each record
    /// must carry the sequence the log holds next. A refused record (too large, a failed write, out
    /// of order) is not written, and nor is any after it in the batch (each would leave a gap):
    /// the caller issues those numbers again. Once a sync fails, every record of the batch reports
    /// that failure.
    package func append(
        numbered batch: [(sequence: UInt64, payload: [UInt8], enqueuedAtMicros: Int64)]
    ) -> [Result<Void, any Error>] {
        condition.lock()
        defer { condition.unlock() }
        var results: [Result<Void, any Error>] = batch.map { item in
            Result {
                // After a refused record the next sequence stays the refused one's: the rest are out of order.
                guard item.sequence == state.nextSequence else {
                    throw TransferLogError.sequenceOutOfOrder(expected: state.nextSequence, got: item.sequence)
                }
                try checkSize(item.payload)
                _ = try write(item.payload, enqueuedAtMicros: item.enqueuedAtMicros)
            }
        }
        // What was written is a prefix of the batch: the first refusal refuses the rest.
        let written = results.prefix { (try? $0.get()) != nil }.count
        if written > 0 {
            do {
                try waitUntilSynced(through: batch[written - 1].sequence)
            } catch {
                results = results.map { result in result.flatMap { .failure(error) } }
            }
        }
        return results
    }

    private func checkSize(_ payload: [UInt8]) throws {
        guard payload.count <= configuration.maximumPayloadBytes else {
            throw TransferLogError.payloadTooLarge(size: payload.count, maximum: configuration.maximumPayloadBytes)
        }
    }

    /// Writes one record to the page cache and returns its sequence (not yet durable). Lock held.
    private func write(_ payload: [UInt8], enqueuedAtMicros: Int64) throws -> UInt64 {
        if let failure = state.failure { throw failure }
        let record = TransferRecord(sequence: state.nextSequence, payload: payload, enqueuedAtMicros: enqueuedAtMicros)
        let bytes = record.encoded()
        if state.activeBytes > 0 && state.activeBytes + bytes.count > configuration.segmentRolloverBytes {
            try rollSegment()
        }
        let end = state.activeBytes + bytes.count
        if end > state.activeFileBytes, configuration.writeAheadBytes > 0 {
            let ahead = max(end, min(end + configuration.writeAheadBytes, configuration.segmentRolloverBytes))
            // Not synced here: the next group commit's fdatasync carries the new size once, and the
            // appends after it overwrite blocks already allocated.
            state.activeFileBytes = Self.writeOutZeros(state.active, from: state.activeFileBytes, to: ahead)
        }
        do {
            try state.active.write(bytes, at: state.activeBytes)
        } catch {
            // Best effort only: even if the cut fails, the next record is written at the same
            // offset and overwrites the fragment, and a fragment left at the end is a torn tail.
            try? state.active.truncate(to: state.activeBytes)
            state.activeFileBytes = state.activeBytes
            throw error
        }
        state.activeBytes = end
        state.activeFileBytes = max(state.activeFileBytes, end)
        state.nextSequence += 1
        state.writtenThrough = record.sequence
        state.records.append(record)
        return record.sequence
    }

    /// The sequence the next append will get (sequences are never reused).
    package var nextSequence: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return state.nextSequence
    }

    /// Transfers not yet acknowledged or cancelled, oldest first; only records already durable.
    package func pending() -> [TransferRecord] {
        condition.lock()
        defer { condition.unlock() }
        return Array(durableRecords)
    }

    /// How many transfers `pending()` would return.
    package var depth: Int {
        condition.lock()
        defer { condition.unlock() }
        return durableRecords.count
    }

    /// Total payload bytes of the transfers `pending()` would return.
    package var pendingBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return durableRecords.reduce(0) { $0 + $1.payload.count }
    }

    /// The records covered by a completed sync (found by binary search); call with the lock held.
    private var durableRecords: ArraySlice<TransferRecord> {
        state.records[..<recordIndex(firstAbove: state.syncedThrough)]
    }

    /// The index in `state.records` (sorted) of the first record whose sequence is above `sequence`.
    func recordIndex(firstAbove sequence: UInt64) -> Int {
        var (low, high) = (state.records.startIndex, state.records.endIndex)
        while low < high {
            let middle = low + (high - low) / 2
            if state.records[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Blocks until a sync covers `sequence`, leading a sync if none is in flight. Lock held on
    /// entry and exit; released while syncing or waiting.
    private func waitUntilSynced(through sequence: UInt64) throws {
        while state.syncedThrough < sequence {
            if let failure = state.failure { throw failure }
            if state.syncInFlight {
                condition.wait()
                continue
            }
            state.syncInFlight = true
            let target = state.writtenThrough
            let segment = state.active
            condition.unlock()
            let result = Result { try LatencyRecorder.fsync.time { try segment.dataSync() } }
            condition.lock()
            state.syncInFlight = false
            switch result {
            case .success:
                state.syncedThrough = max(state.syncedThrough, target)
                condition.broadcast()
            case .failure(let error):
                throw failSync(error)
            }
        }
    }

    /// Syncs the active segment and starts a new one named after the next sequence. Lock held.
    ///
    /// The old segment is synced first, so a non-last segment is always complete on disk and
    /// recovery may treat any bad record in one as corruption.
    private func rollSegment() throws {
        do {
            try LatencyRecorder.fsync.time { try state.active.dataSync() }
        } catch {
            throw failSync(error)
        }
        state.syncedThrough = state.writtenThrough
        condition.broadcast()
        let first = state.nextSequence
        let segment = try FileDescriptor(opening: segmentPath(first), [.writeOnly, .create, .exclusive])
        do {
            try AtomicFile.fsyncDirectory(directory)
        } catch {
            throw failSync(error)
        }
        state.active = segment
        state.activeBytes = 0
        state.activeFileBytes = 0
        state.segmentFirstSequences.append(first)
    }

    /// Writes zeros over `file` from byte `start` (its length) up to `end`, so that once a sync has
    /// carried them the blocks are allocated and the size final before records overwrite them;
    /// returns the file's length after. Only speed depends on the zeros: should the disk refuse them (full), they are cut
    /// off again and appends grow the file as they would without.
    static func writeOutZeros(_ file: FileDescriptor, from start: Int, to end: Int) -> Int {
        guard start < end else { return start }
        let chunk = [UInt8](repeating: 0, count: min(end - start, 256 * 1024))
        var offset = start
        do {
            while offset < end {
                let length = min(chunk.count, end - offset)
                try file.write(length == chunk.count ? chunk : Array(chunk[..<length]), at: offset)
                offset += length
            }
            return end
        } catch {
            try? file.truncate(to: start)
            return start
        }
    }

    /// Poisons the log after a failed sync and runs the fatal handler; returns the error to throw.
    /// Lock held.
    func failSync(_ error: any Error) -> TransferLogError {
        let systemError =
            error as? SystemCallError ?? SystemCallError(call: "sync", errno: Errno.ioError, path: directory)
        let failure = TransferLogError.syncFailed(file: systemError.path ?? directory, errno: systemError.errno)
        if state.failure == nil {
            state.failure = failure
            configuration.onFatalSyncFailure(systemError)
        }
        condition.broadcast()
        return failure
    }

    /// The default `onFatalSyncFailure`: one line on stderr naming the file and errno, then exit
    /// status 75 (EX_TEMPFAIL) so a supervisor restarts the process, which recovers from disk.
    package static let exitAfterSyncFailure: @Sendable (SystemCallError) -> Void = { error in
        FileHandle.standardError.write(Data("transfer log: \(error); exiting to recover from disk\n".utf8))
        exit(75)
    }
}
