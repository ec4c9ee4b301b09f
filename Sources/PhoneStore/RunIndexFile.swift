import LinkProtocol
import LinkRuntime
import POSIX
import WorkoutModel

/// The run index in phoned's state directory (`<state>/run-index`): a `RunIndexSnapshot` payload
/// between a magic and a trailer holding its length and CRC-32C, replaced atomically.
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
    package static func read(at path: String, root: String) throws(RunIndexFileError) -> RunIndexSnapshot? {
        let bytes: [UInt8]
        switch FileSystem.readRegularFile(path, maximumBytes: Int(Int32.max)) {
        case .missing: return nil
        case .bytes(let contents): bytes = contents
        case .notARegularFile: throw RunIndexFileError(path: path, reason: "not a regular file")
        case .tooLarge(let size): throw RunIndexFileError(path: path, reason: "\(size) bytes is too large")
        case .failed(let error): throw RunIndexFileError(path: path, reason: "unreadable: \(error)")
        }
        guard bytes.count >= magic.count + trailerLength, bytes[0..<magic.count].elementsEqual(magic) else {
            throw RunIndexFileError(path: path, reason: "not a run index (bad magic or too short)")
        }
        let trailer = bytes.count - trailerLength
        let length = bytes[trailer..<trailer + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let checksum = bytes[trailer + 8..<bytes.count].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard length == UInt64(trailer - magic.count) else {
            throw RunIndexFileError(
                path: path, reason: "the trailer says \(length) payload bytes, the file holds \(trailer - magic.count)")
        }
        let payload = bytes[magic.count..<trailer]
        guard CRC32C.checksum(payload) == checksum else {
            throw RunIndexFileError(path: path, reason: "checksum mismatch (a torn or damaged file)")
        }
        do {
            return try RunIndexSnapshot(decoding: payload, root: root)
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
