import POSIX

/// Why a `TransferLog` operation or open failed (syscall failures are `SystemCallError`s).
package enum TransferLogError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The payload is longer than the log's configured maximum; nothing was written.
    case payloadTooLarge(size: Int, maximum: Int)
    /// A record that is not a torn tail: in a segment other than the last, or followed by a valid
    /// later record. The log refuses to open rather than skip it; `offset` is the record's first byte.
    case corruptRecord(file: String, offset: Int, reason: String)
    /// Segments exist but the `queue-id` file does not, so the queue's identity is lost.
    case missingQueueID(file: String)
    /// Unacknowledged sequences that should be in a segment are in none (a segment file vanished).
    case missingRecords(directory: String, sequences: ClosedRange<UInt64>)
    /// `acknowledge` named a sequence that this log has not durably assigned.
    case unknownSequence(UInt64)
    /// A record numbered by its caller is not the one the log holds next (`append(numbered:)`);
    /// nothing was written.
    case sequenceOutOfOrder(expected: UInt64, got: UInt64)
    /// An earlier `fdatasync`/`fsync` of `file` failed with `errno`; the log accepts nothing more
    /// and the process must restart and recover from disk.
    case syncFailed(file: String, errno: Int32)

    package var description: String {
        switch self {
        case .payloadTooLarge(let size, let maximum):
            "transfer payload of \(size) bytes exceeds the maximum of \(maximum) bytes"
        case .corruptRecord(let file, let offset, let reason):
            "corrupt record in \(file) at byte offset \(offset): \(reason)"
        case .missingQueueID(let file):
            "transfer log has segments but no queue ID file \(file)"
        case .missingRecords(let directory, let sequences):
            "transfer log \(directory) has no segment holding unacknowledged sequences \(sequences)"
        case .unknownSequence(let sequence):
            "no durable transfer with sequence \(sequence)"
        case .sequenceOutOfOrder(let expected, let got):
            "transfer \(got) is out of order: the outbox holds \(expected) next"
        case .syncFailed(let file, let errno):
            "an earlier sync of \(file) failed (errno \(errno)); the log must be reopened after a restart"
        }
    }
}
