import DurableFiles
import LinkProtocol

/// Which of a queue's sequences are finished with — acknowledged by the receiver or cancelled by
/// the sender — so the outbox never offers them again.
///
/// Acks usually arrive in order, so the bulk is one high-water mark (`resolvedThrough`: every
/// sequence up to it is finished). Cancels and out-of-order acks punch holes above the mark; those
/// are kept individually in `resolvedAbove` until the mark catches up with them, so the set stays
/// as small as the number of holes.
///
/// Persisted as the record of a `RecordFile`, big-endian: u64 `resolvedThrough`, u32 count, count ×
/// u64 ascending sequences (the record file checksums it).
struct ResolvedSequences: Equatable, Sendable {
    /// Every sequence from 1 through this one is resolved (0: none yet).
    private(set) var resolvedThrough: UInt64 = 0
    /// Resolved sequences above `resolvedThrough`; never contains `resolvedThrough + 1`.
    private(set) var resolvedAbove: Set<UInt64> = []

    /// Whether `sequence` has been acknowledged or cancelled.
    func contains(_ sequence: UInt64) -> Bool {
        sequence <= resolvedThrough || resolvedAbove.contains(sequence)
    }

    /// Whether every sequence in `range` is resolved; costs at most `resolvedAbove.count` lookups.
    func containsAll(_ range: ClosedRange<UInt64>) -> Bool {
        guard range.upperBound > resolvedThrough else { return true }
        var sequence = max(range.lowerBound, resolvedThrough + 1)
        while true {
            guard resolvedAbove.contains(sequence) else { return false }
            if sequence == range.upperBound { return true }
            sequence += 1
        }
    }

    /// The highest sequence recorded here; a new sequence must be above it.
    var highest: UInt64 {
        max(resolvedThrough, resolvedAbove.max() ?? 0)
    }

    /// Records `sequence` as resolved, advancing the mark over any holes it closes.
    mutating func insert(_ sequence: UInt64) {
        guard !contains(sequence) else { return }
        resolvedAbove.insert(sequence)
        while resolvedAbove.remove(resolvedThrough + 1) != nil {
            resolvedThrough += 1
        }
    }

    /// The file format described on the type.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        BigEndian.append(resolvedThrough, to: &bytes)
        BigEndian.append(UInt32(resolvedAbove.count), to: &bytes)
        for sequence in resolvedAbove.sorted() {
            BigEndian.append(sequence, to: &bytes)
        }
        return bytes
    }

    /// Parses `encoded()` output read from `file`.
    init(decoding bytes: [UInt8], file: String) throws {
        guard bytes.count >= 12 else {
            throw StateFileError.malformed(file: file, reason: "\(bytes.count) bytes, need at least 12")
        }
        let count = Int(BigEndian.read(UInt32.self, from: bytes, at: 8))
        guard bytes.count == 12 + 8 * count else {
            throw StateFileError.malformed(file: file, reason: "\(bytes.count) bytes for \(count) sequences")
        }
        resolvedThrough = BigEndian.read(UInt64.self, from: bytes, at: 0)
        for index in 0..<count {
            let sequence = BigEndian.read(UInt64.self, from: bytes, at: 12 + 8 * index)
            guard sequence > resolvedThrough + 1 else {
                throw StateFileError.malformed(file: file, reason: "sequence \(sequence) not above the mark + 1")
            }
            resolvedAbove.insert(sequence)
        }
    }

    /// Nothing resolved yet.
    init() {}
}
