import DurableFiles
import LinkProtocol
import POSIX
import WorkoutModel

/// The run index in phoned's state directory (`<state>/run-index`): a `RunIndexSnapshot` payload
/// between a magic and a trailer holding its length and CRC-32C, replaced atomically (never
/// rewritten in place: phoned reads it mapped, and a mapped file must not shrink under it).
///
/// ```
/// 8 bytes  "WSRUNIDX"
/// payload  (RunIndexSnapshot.encode)
/// u64 LE   payload length
/// u32 LE   CRC-32C of the payload
/// ```
///
/// The checksum trails so the file is written in one pass, a folder at a time, never whole in
/// memory. It is a cache: a missing file means a full scan, a damaged or foreign one
/// (`RunIndexFileError`) a full scan that writes a new one. Reading it trusts nothing the checksum
/// and the payload's own checks have not vouched for.
package enum RunIndexFile {
    /// The file's name in the state directory.
    package static let name = "run-index"
    static let magic = Array("WSRUNIDX".utf8)
    static let trailerLength = 12

    /// The snapshot at `path` for the document directory at `root`, or nil when there is no file.
    /// The file is mapped, not read: the snapshot's table stays in it (`RunTable`), and the pages
    /// checked here are let go again, so a long history costs the process no memory until it is read.
    package static func read(at path: String, root: String) throws(RunIndexFileError) -> RunIndexSnapshot? {
        let file: MappedFile
        do {
            file = try MappedFile(path: path, maximumBytes: Int(Int32.max) * 4)
        } catch {
            switch error {
            case .missing: return nil
            case .notARegularFile: throw RunIndexFileError(path: path, reason: "not a regular file")
            case .tooLarge(let size): throw RunIndexFileError(path: path, reason: "\(size) bytes is too large")
            case .failed(let error): throw RunIndexFileError(path: path, reason: "unreadable: \(error)")
            }
        }
        defer { file.releaseResidentPages() }
        let bytes = file.bytes
        guard bytes.count >= magic.count + trailerLength, bytes[0..<magic.count].elementsEqual(magic) else {
            throw RunIndexFileError(path: path, reason: "not a run index (bad magic or too short)")
        }
        let trailer = bytes.count - trailerLength
        let length = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: trailer, as: UInt64.self))
        let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: trailer + 8, as: UInt32.self))
        guard length == UInt64(trailer - magic.count) else {
            throw RunIndexFileError(
                path: path, reason: "the trailer says \(length) payload bytes, the file holds \(trailer - magic.count)")
        }
        let payload = magic.count..<trailer
        let computed = bytes.withMemoryRebound(to: UInt8.self) { CRC32C.checksum($0[payload]) }
        guard computed == checksum else {
            throw RunIndexFileError(path: path, reason: "checksum mismatch (a torn or damaged file)")
        }
        do {
            return try RunIndexSnapshot(decoding: file, payload: payload, root: root)
        } catch {
            throw RunIndexFileError(path: path, reason: error.description)
        }
    }

    /// Replaces the file at `path` with `snapshot` (temp file, fsync, rename, fsync of the folder),
    /// writing it a piece at a time.
    package static func write(_ snapshot: RunIndexSnapshot, to path: String) throws {
        try AtomicFile.write(to: path) { append in
            try append(magic[...])
            var checksum: UInt32 = 0
            var length: UInt64 = 0
            try snapshot.encode { piece in
                checksum = CRC32C.update(checksum, with: piece)
                length += UInt64(piece.count)
                try append(piece)
            }
            var trailer: [UInt8] = []
            withUnsafeBytes(of: length.littleEndian) { trailer.append(contentsOf: $0) }
            withUnsafeBytes(of: checksum.littleEndian) { trailer.append(contentsOf: $0) }
            try append(trailer[...])
        }
    }
}

/// Why the run index file was not used; phoned logs it and rebuilds the index from the documents.
package struct RunIndexFileError: Error, Equatable, Sendable, CustomStringConvertible {
    package var path: String
    package var reason: String

    package var description: String { "\(path): \(reason)" }
}

extension MappedFile: RunTableStorage {}
