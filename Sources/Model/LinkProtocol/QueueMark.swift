/// What a receiver remembers of one sender queue (userInfo, complication or file): the highest
/// sequence it has applied, and a digest of each of the last transfers it applied.
///
/// The highest sequence alone tells a duplicate only while the sender's numbering never goes back.
/// A sender whose state directory is restored from an older backup keeps its queue ID but numbers
/// its next transfers again from where the backup stood, so they arrive at or below the mark with
/// contents the receiver never saw: the digests tell them apart. A true duplicate (the sender never
/// heard the acknowledgement) is always one of the last transfers applied, since a sender has at
/// most its transfer window on the wire; a sequence at or below the mark that is not among them
/// can only come from a sender that went back, and is applied.
package struct QueueMark: Equatable, Sendable {
    /// The highest sequence applied; 0 when none.
    package private(set) var highest: UInt64
    /// The last transfers applied, oldest first: at most `keptAtLeast`, or the transfer window when
    /// that is larger. A sequence applied again (from a sender that went back) replaces its entry.
    package private(set) var recent: [Applied]

    /// One applied transfer: its sequence and the digest of its contents (`unknown` when the engine
    /// never saw them, which matches any contents, as a mark from before digests did).
    package struct Applied: Equatable, Sendable {
        package let sequence: UInt64
        package let digest: UInt64

        package init(sequence: UInt64, digest: UInt64) {
            self.sequence = sequence
            self.digest = digest
        }
    }

    /// How many applied transfers a mark keeps at least: twice the default transfer window, so a
    /// sender configured with a larger window than the receiver's still has its duplicates found.
    package static let keptAtLeast = 256

    package init(highest: UInt64 = 0, recent: [Applied] = []) {
        self.highest = highest
        self.recent = recent
    }

    /// Whether a transfer with `sequence` and `digest` was already applied. A mark from before
    /// digests were kept (a highest sequence and no digests) takes everything at or below it for a
    /// duplicate, as it always did.
    package func isDuplicate(sequence: UInt64, digest: UInt64) -> Bool {
        #if SIMULATION_MUTATION_WENT_BACK
            // The mutant: the highest sequence alone decides, as before digests were kept.
            if sequence <= highest { return true }
        #endif
        if let applied = recent.last(where: { $0.sequence == sequence }) {
            return applied.digest == digest || applied.digest == Self.unknown
        }
        return sequence <= highest && recent.isEmpty
    }

    /// Whether `sequence` was applied, whatever its contents.
    package func holds(sequence: UInt64) -> Bool {
        recent.contains { $0.sequence == sequence } || (recent.isEmpty && sequence <= highest)
    }

    /// Records that the transfer was applied, keeping the last `max(keptAtLeast, window)`.
    package mutating func apply(sequence: UInt64, digest: UInt64, window: Int) {
        recent.removeAll { $0.sequence == sequence }
        recent.append(Applied(sequence: sequence, digest: digest))
        // The file keeps the count in 16 bits.
        let kept = min(max(Self.keptAtLeast, window), Int(UInt16.max))
        if recent.count > kept { recent.removeFirst(recent.count - kept) }
        highest = max(highest, sequence)
    }

    /// The digest of contents the engine did not see; no digest of contents is ever this value.
    package static let unknown: UInt64 = 0

    /// The digest a userInfo or complication transfer is remembered by: its CRC32C and length.
    package static func digest(ofPayload payload: [UInt8]) -> UInt64 {
        known(UInt64(CRC32C.checksum(payload[...])) << 32 | UInt64(UInt32(truncatingIfNeeded: payload.count)))
    }

    /// The digest a file is remembered by: the first 8 bytes of the SHA-256 its offer carries.
    package static func digest(ofFile sha256: [UInt8]) -> UInt64 {
        known(sha256.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
    }

    private static func known(_ digest: UInt64) -> UInt64 { digest == unknown ? 1 : digest }
}
