import LinkRuntime
import POSIX
import WorkoutModel

/// The run index in phoned's state directory (`<state>/run-index`): a `RunIndexSnapshot` payload
/// behind a magic and a CRC-32C, replaced atomically.
///
/// ```
/// 8 bytes  "WSRUNIDX"
/// u32 LE   CRC-32C of the payload
/// u64 LE   payload length
/// payload  (RunIndexSnapshot.encoded())
/// ```
///
/// It is a cache: a missing file means a full scan, a damaged or foreign one (`RunIndexFileError`)
/// a full scan that writes a new one. Reading it trusts nothing the checksum and the payload's own
/// checks have not vouched for.
package enum RunIndexFile {
    /// The file's name in the state directory.
    package static let name = "run-index"
    static let magic = Array("WSRUNIDX".utf8)
    static let headerLength = 20

    /// The snapshot at `path` for the document directory at `root`, or nil when there is no file.
    package static func read(at path: String, root: String) throws(RunIndexFileError) -> RunIndexSnapshot? {
        let bytes: [UInt8]
        do {
            guard let contents = try AtomicFile.read(path) else { return nil }
            bytes = contents
        } catch {
            throw RunIndexFileError(path: path, reason: "unreadable: \(error)")
        }
        guard bytes.count >= headerLength, Array(bytes[0..<8]) == magic else {
            throw RunIndexFileError(path: path, reason: "not a run index (bad magic or too short)")
        }
        let checksum = bytes[8..<12].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let length = bytes[12..<20].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard length == UInt64(bytes.count - headerLength) else {
            throw RunIndexFileError(
                path: path,
                reason: "the header says \(length) payload bytes, the file holds \(bytes.count - headerLength)")
        }
        let payload = bytes[headerLength...]
        guard CRC32C.checksum(payload) == checksum else {
            throw RunIndexFileError(path: path, reason: "checksum mismatch (a torn or damaged file)")
        }
        do {
            return try RunIndexSnapshot(decoding: payload, root: root)
        } catch {
            throw RunIndexFileError(path: path, reason: error.description)
        }
    }

    /// Replaces the file at `path` with `snapshot` (temp file, fsync, rename, fsync of the folder).
    package static func write(_ snapshot: RunIndexSnapshot, to path: String) throws {
        let payload = snapshot.encoded()
        var bytes = magic
        bytes.reserveCapacity(headerLength + payload.count)
        withUnsafeBytes(of: CRC32C.checksum(payload).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += payload
        try AtomicFile.write(bytes, to: path)
    }
}

/// Why the run index file was not used; phoned logs it and rebuilds the index from the documents.
package struct RunIndexFileError: Error, Equatable, Sendable, CustomStringConvertible {
    package var path: String
    package var reason: String

    package var description: String { "\(path): \(reason)" }
}
