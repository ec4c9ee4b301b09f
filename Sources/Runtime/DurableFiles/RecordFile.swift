import LinkProtocol
import POSIX
import Synchronization

/// A small state file rewritten often (the context slot, the received context, the transfer marks,
/// the resolved sequences): two halves, each room for one record, written in turn in place and made
/// durable with one `fdatasync`.
///
/// An atomic replace costs two journal commits (the new file, then the rename); overwriting blocks
/// already written costs one device flush, about a fifth of it on the development machine. A crash
/// mid-write can tear only the half being written, which held the record before the last; the
/// other half keeps the last one whole. A write may skip the flush (`write(_:flushed:)`): it then
/// never overwrites the last flushed record, which a machine crash leaves whole.
///
/// ```
/// file  = half 0 | half 1, each `capacity` bytes (a multiple of 4096, so a torn write stays in its half)
/// half  = "WSR" 0x01 | u64 sequence | u32 length | record (length bytes) | u32 CRC32C of all before it
///         | whatever an older record left; a half never written holds zeros
/// ```
/// The newest whole half (highest sequence) is the record. The file is made (and remade, larger,
/// when a record outgrows its half) by an atomic replace holding the record in half 0 and zeros
/// after it, so its blocks are written before anything overwrites them in place. A file without a
/// whole half is read as the earlier format, one sealed record (record, u32 CRC32C), which the
/// next write replaces.
package final class RecordFile: Sendable {
    package let path: String
    /// What the file holds, once read or written in this process; nil until then and after a
    /// failed write (read again then).
    private let layout = Mutex<Layout?>(nil)

    private struct Layout {
        var capacity: Int
        var sequence: UInt64
        /// The half holding the newest record made durable; every write goes to the other one, so
        /// one left in the page cache by a write without a flush never overwrites it.
        var flushedHalf: Int
    }

    /// The newest whole record, and whether the file also held a half that is neither whole nor
    /// blank: the torn write a crash left, or damage.
    package struct Contents: Equatable, Sendable {
        package var record: [UInt8]
        package var otherHalfDamaged: Bool

        package init(record: [UInt8], otherHalfDamaged: Bool) {
            self.record = record
            self.otherHalfDamaged = otherHalfDamaged
        }
    }

    static let magic: [UInt8] = [0x57, 0x53, 0x52, 0x01]
    static let headerBytes = 16
    package static let pageBytes = 4096

    package init(path: String) { self.path = path }

    /// The newest whole record; nil when there is no file. A file with no whole record in either
    /// format throws, naming the file.
    package func read() throws -> Contents? {
        try layout.withLock { layout in try Self.load(path, into: &layout) }
    }

    /// Makes `record` the file's record, durably: in place in the other half when the file is in
    /// this format and the record fits, otherwise by an atomic replace. Writes hold the lock
    /// throughout, so two never pick the same half.
    ///
    /// Without `flushed` an in-place write is left to the page cache: a crash of the process keeps
    /// it, one of the machine may lose it (or tear it) and leave the last flushed record, which it
    /// never overwrites (the next write without a flush overwrites this one instead).
    package func write(_ record: [UInt8], flushed: Bool = true) throws {
        try layout.withLock { layout in
            if layout == nil { _ = try? Self.load(path, into: &layout) }
            let current = layout
            // Until this write lands, the file is what reading it again says.
            layout = nil
            let needed = Self.headerBytes + record.count + 4
            if let current, needed <= current.capacity, let file = try Self.openIfPresent(path) {
                let half = 1 - current.flushedHalf
                try file.write(Self.half(record, sequence: current.sequence + 1), at: half * current.capacity)
                if flushed { try LatencyRecorder.fsync.time { try file.dataSync() } }
                layout = Layout(
                    capacity: current.capacity, sequence: current.sequence + 1,
                    flushedHalf: flushed ? half : current.flushedHalf)
            } else {
                let capacity = Self.capacity(for: needed)
                let next = Layout(capacity: capacity, sequence: (current?.sequence ?? 0) + 1, flushedHalf: 0)
                var bytes = Self.half(record, sequence: next.sequence)
                bytes += [UInt8](repeating: 0, count: 2 * capacity - bytes.count)
                try AtomicFile.write(bytes, to: path)
                layout = next
            }
        }
    }

    /// Reads the file at `path`, setting `layout` to what it holds (nil: no file, or the earlier format).
    private static func load(_ path: String, into layout: inout Layout?) throws -> Contents? {
        layout = nil
        guard let bytes = try AtomicFile.read(path) else { return nil }
        let (contents, found) = try parse(bytes, file: path)
        // What was read may be a write left to the page cache; flushed now, it is the record the
        // writes that follow never overwrite.
        if found != nil { try AtomicFile.sync(path) }
        layout = found
        return contents
    }

    /// The file open for writing; nil when it is gone (someone removed it: it is made again).
    private static func openIfPresent(_ path: String) throws -> FileDescriptor? {
        do {
            return try FileDescriptor(opening: path, [.writeOnly])
        } catch {
            if error.errno == Errno.noSuchFile { return nil }
            throw error
        }
    }

    /// The smallest multiple of the page that holds `needed` bytes, doubled while under it, so a
    /// record that grows a little at a time does not remake the file each time.
    static func capacity(for needed: Int) -> Int {
        var capacity = pageBytes
        while capacity < needed { capacity *= 2 }
        return capacity
    }

    /// One half's bytes for `record`: header, record, CRC32C (no padding).
    package static func half(_ record: [UInt8], sequence: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.reserveCapacity(headerBytes + record.count + 4)
        BigEndian.append(sequence, to: &bytes)
        BigEndian.append(UInt32(record.count), to: &bytes)
        bytes += record
        BigEndian.append(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    private static func parse(_ bytes: [UInt8], file: String) throws -> (Contents, Layout?) {
        let capacity = bytes.count / 2
        if bytes.count >= 2 * pageBytes, bytes.count % (2 * pageBytes) == 0 {
            let halves = [0, 1].map { half in
                Self.record(in: bytes[(half * capacity)..<((half + 1) * capacity)])
            }
            let whole = halves.enumerated().compactMap { half, found in found.map { (half, $0) } }
            if let (half, newest) = whole.max(by: { $0.1.sequence < $1.1.sequence }) {
                let damaged =
                    halves[1 - half] == nil
                    && bytes[((1 - half) * capacity)..<((2 - half) * capacity)]
                        .contains { $0 != 0 }
                return (
                    Contents(record: newest.record, otherHalfDamaged: damaged),
                    // Flushed by `load` if it was not.
                    Layout(capacity: capacity, sequence: newest.sequence, flushedHalf: half)
                )
            }
        }
        // The earlier format: the record and its CRC32C.
        return (Contents(record: try unsealed(bytes, file: file), otherHalfDamaged: false), nil)
    }

    /// `bytes` followed by their CRC32C: the earlier format, and the link's watch-state file's.
    package static func sealed(_ bytes: [UInt8]) -> [UInt8] {
        var sealed = bytes
        BigEndian.append(CRC32C.checksum(bytes), to: &sealed)
        return sealed
    }

    /// `bytes` without their trailing CRC32C, which must match (the earlier format too).
    package static func unsealed(_ bytes: [UInt8], file: String) throws -> [UInt8] {
        guard bytes.count >= 4 else { throw StateFileError.malformed(file: file, reason: "shorter than its checksum") }
        let body = Array(bytes.dropLast(4))
        let stored = BigEndian.read(UInt32.self, from: bytes, at: bytes.count - 4)
        guard CRC32C.checksum(body) == stored else {
            throw StateFileError.malformed(file: file, reason: "checksum mismatch")
        }
        return body
    }

    /// The whole record a half holds, with its sequence; nil when it holds none.
    private static func record(in half: ArraySlice<UInt8>) -> (sequence: UInt64, record: [UInt8])? {
        let start = half.startIndex
        guard half.count >= headerBytes + 4, half[start..<(start + 4)].elementsEqual(magic) else { return nil }
        let header = Array(half[start..<(start + headerBytes)])
        let length = Int(BigEndian.read(UInt32.self, from: header, at: 12))
        guard length <= half.count - headerBytes - 4 else { return nil }
        let end = start + headerBytes + length
        let sealed = Array(half[start..<end])
        let stored = BigEndian.read(UInt32.self, from: Array(half[end..<(end + 4)]), at: 0)
        guard CRC32C.checksum(sealed) == stored else { return nil }
        return (BigEndian.read(UInt64.self, from: header, at: 4), Array(half[(start + headerBytes)..<end]))
    }
}
