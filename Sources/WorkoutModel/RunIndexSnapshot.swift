/// A month folder's identity as its listing shows it, taken without reading a document.
///
/// The store computes it from every entry of the folder (documents, strays and subfolders alike):
/// the count, the newest modification time, and an order-independent digest of each entry's name,
/// size, inode, modification and change times. Any write, rename, removal, `touch` or copy into the
/// folder changes it; the change time (which no one can set back) catches a rewrite that keeps the
/// size and restores the modification time.
package struct FolderFingerprint: Hashable, Sendable {
    package var entryCount: Int
    /// The newest modification time among the folder's entries, in nanoseconds since the epoch.
    package var newestModificationNanoseconds: Int64
    package var digest: UInt64

    package init(entryCount: Int, newestModificationNanoseconds: Int64, digest: UInt64) {
        self.entryCount = entryCount
        self.newestModificationNanoseconds = newestModificationNanoseconds
        self.digest = digest
    }
}

/// The run summaries of the document directory's month folders, each with the fingerprint its
/// folder had just before it was read: what phoned keeps in its state directory (`run-index`) so
/// that a restart decodes only the folders that changed since (docs/OPERATIONS.md).
///
/// Pure: the store fingerprints folders and reads and writes the file (with its checksum); this type
/// decides which recorded folders can stand in for a decode and encodes the payload. A folder is
/// reused only when its fingerprint now is exactly the recorded one, and the whole snapshot only when
/// it was taken of the same document directory in this format; anything else is decoded again. The
/// documents stay the source of truth: the snapshot only ever saves decoding what they said.
package struct RunIndexSnapshot: Equatable, Sendable {
    /// Bumped whenever the payload or the rules that produced it change (what a folder's scan
    /// accepts or skips), so an index written by another build is rebuilt, never misread.
    package static let formatVersion: UInt32 = 1

    /// A file of a month folder the scan skipped, as it was reported (path relative to the root).
    package struct SkippedNote: Equatable, Sendable {
        package var path: String
        package var reason: String

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// One month folder as its scan found it.
    package struct Folder: Equatable, Sendable {
        package var fingerprint: FolderFingerprint
        /// The folder's runs, `RunSummaryCoding.byteCount` bytes each: kept encoded, so a snapshot
        /// costs about 60 bytes a run in memory, and reusing a folder copies nothing (a snapshot read
        /// from a file holds slices of the file's bytes).
        package private(set) var encodedRuns: ArraySlice<UInt8>
        package var skipped: [SkippedNote]

        package init(fingerprint: FolderFingerprint, runs: [RunIndex.RunSummary], skipped: [SkippedNote]) {
            self.fingerprint = fingerprint
            self.skipped = skipped
            var writer = SnapshotWriter()
            writer.bytes.reserveCapacity(runs.count * RunSummaryCoding.byteCount)
            for run in runs { RunSummaryCoding.write(run, into: &writer) }
            encodedRuns = writer.bytes[...]
        }

        fileprivate init(fingerprint: FolderFingerprint, encodedRuns: ArraySlice<UInt8>, skipped: [SkippedNote]) {
            self.fingerprint = fingerprint
            self.encodedRuns = encodedRuns
            self.skipped = skipped
        }

        package var runCount: Int { encodedRuns.count / RunSummaryCoding.byteCount }

        /// The folder's run summaries, decoded (each field checked again).
        package func runs() throws(RunIndexSnapshotError) -> [RunIndex.RunSummary] {
            var reader = SnapshotReader(encodedRuns)
            var runs: [RunIndex.RunSummary] = []
            runs.reserveCapacity(runCount)
            while !reader.isAtEnd { runs.append(try RunSummaryCoding.read(from: &reader)) }
            return runs
        }
    }

    /// The document directory the folders belong to (its absolute path).
    package var root: String
    /// By path relative to the root, e.g. `Workouts/2026/11`.
    package var folders: [String: Folder]

    package init(root: String, folders: [String: Folder] = [:]) {
        self.root = root
        self.folders = folders
    }

    /// The recorded folder at `path` when its fingerprint now, `current`, is exactly the one recorded;
    /// nil when it must be decoded again (new, changed, or never recorded).
    package func reusable(_ path: String, current: FolderFingerprint) -> Folder? {
        guard let folder = folders[path], folder.fingerprint == current else { return nil }
        return folder
    }

    /// How many runs the snapshot summarises.
    package var runCount: Int { folders.values.reduce(0) { $0 + $1.runCount } }
}

/// Why a run index payload was refused; the store then rebuilds it from the documents.
package enum RunIndexSnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case unsupportedFormat(found: UInt32, supported: UInt32)
    case otherDirectory(recorded: String)
    case invalid(String)

    package var description: String {
        switch self {
        case .truncated: return "the run index ends early"
        case .unsupportedFormat(let found, let supported):
            return "the run index is format \(found); this build reads format \(supported)"
        case .otherDirectory(let recorded): return "the run index describes another document directory (\(recorded))"
        case .invalid(let reason): return "the run index is invalid: \(reason)"
        }
    }
}

// MARK: Payload

extension RunIndexSnapshot {
    /// The payload, little-endian:
    ///
    /// ```
    /// u32 formatVersion, string root, u32 folderCount, then per folder (sorted by path):
    ///   string path, u64 entryCount, i64 newestModificationNanoseconds, u64 digest,
    ///   u32 runCount, runCount × RunSummaryCoding, u32 skippedCount, skippedCount × (string path, string reason)
    /// string = u32 byte count + UTF-8
    /// ```
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode { bytes += $0 }
        return bytes
    }

    /// The payload of `encoded()` in pieces, in order (a folder's runs as they are held), so a
    /// writer never needs it in memory whole.
    package func encode(into append: (ArraySlice<UInt8>) throws -> Void) rethrows {
        var writer = SnapshotWriter()
        writer.integer(Self.formatVersion)
        writer.string(root)
        writer.integer(UInt32(folders.count))
        try append(writer.bytes[...])
        for path in folders.keys.sorted() {
            let folder = folders[path]!
            writer = SnapshotWriter()
            writer.string(path)
            writer.integer(UInt64(folder.fingerprint.entryCount))
            writer.integer(folder.fingerprint.newestModificationNanoseconds)
            writer.integer(folder.fingerprint.digest)
            writer.integer(UInt32(folder.runCount))
            try append(writer.bytes[...])
            try append(folder.encodedRuns)
            writer = SnapshotWriter()
            writer.integer(UInt32(folder.skipped.count))
            for note in folder.skipped {
                writer.string(note.path)
                writer.string(note.reason)
            }
            try append(writer.bytes[...])
        }
    }

    /// Decodes a payload written by `encoded()` for the document directory at `root`.
    package init(decoding bytes: [UInt8], root: String) throws(RunIndexSnapshotError) {
        try self.init(decoding: bytes[...], root: root)
    }

    /// Decodes a payload written by `encoded()` for the document directory at `root` (a file's
    /// bytes past its header, not copied).
    package init(decoding bytes: ArraySlice<UInt8>, root: String) throws(RunIndexSnapshotError) {
        var reader = SnapshotReader(bytes)
        let format: UInt32 = try reader.integer()
        guard format == Self.formatVersion else {
            throw .unsupportedFormat(found: format, supported: Self.formatVersion)
        }
        let recordedRoot = try reader.string()
        guard recordedRoot == root else { throw .otherDirectory(recorded: recordedRoot) }
        self.root = root
        folders = [:]
        let folderCount: UInt32 = try reader.integer()
        for _ in 0..<folderCount {
            let path = try reader.string()
            let entryCount: UInt64 = try reader.integer()
            let newest: Int64 = try reader.integer()
            let digest: UInt64 = try reader.integer()
            let runCount: UInt32 = try reader.integer()
            let runs = try reader.bytes(Int(runCount) * RunSummaryCoding.byteCount)
            let skippedCount: UInt32 = try reader.integer()
            guard Int(skippedCount) <= reader.remaining else { throw .truncated }
            var skipped: [SkippedNote] = []
            for _ in 0..<skippedCount {
                skipped.append(SkippedNote(path: try reader.string(), reason: try reader.string()))
            }
            guard entryCount <= UInt64(Int.max), folders[path] == nil else {
                throw .invalid("folder \(path) recorded twice or with an impossible entry count")
            }
            let folder = Folder(
                fingerprint: FolderFingerprint(
                    entryCount: Int(entryCount), newestModificationNanoseconds: newest, digest: digest),
                encodedRuns: runs, skipped: skipped)
            // Every summary is checked now, so a payload is accepted or refused whole.
            _ = try folder.runs()
            folders[path] = folder
        }
        guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after the last folder") }
    }
}

/// One `RunSummary` in 59 bytes: the ID's 16 bytes, status (u8), startedAt (i64), whether ended
/// (u8) and endedAt (i64), updatedAt (i64), version time (i64), counter (i64) and origin (u8);
/// times are microseconds since the epoch.
enum RunSummaryCoding {
    static let byteCount = 59

    static func write(_ run: RunIndex.RunSummary, into writer: inout SnapshotWriter) {
        writer.bytes += run.id.bytes
        writer.integer(statusCode(run.status))
        writer.integer(run.startedAt.microsecondsSinceEpoch)
        writer.integer(UInt8(run.endedAt == nil ? 0 : 1))
        writer.integer(run.endedAt?.microsecondsSinceEpoch ?? 0)
        writer.integer(run.updatedAt.microsecondsSinceEpoch)
        writer.integer(run.version.time.microsecondsSinceEpoch)
        writer.integer(Int64(run.version.counter))
        writer.integer(UInt8(run.version.origin == .phone ? 0 : 1))
    }

    static func read(from reader: inout SnapshotReader) throws(RunIndexSnapshotError) -> RunIndex.RunSummary {
        let id = DocumentID(bytes: Array(try reader.bytes(16)))
        let statusByte: UInt8 = try reader.integer()
        guard statusByte < 3 else { throw .invalid("status \(statusByte) of run \(id)") }
        let status: WorkoutStatus = statusByte == 0 ? .notStarted : statusByte == 1 ? .inProgress : .completed
        let startedAt = Timestamp(microsecondsSinceEpoch: try reader.integer())
        let ended: UInt8 = try reader.integer()
        let endedMicroseconds: Int64 = try reader.integer()
        guard ended < 2 else { throw .invalid("ended flag \(ended) of run \(id)") }
        let updatedAt = Timestamp(microsecondsSinceEpoch: try reader.integer())
        let versionTime = Timestamp(microsecondsSinceEpoch: try reader.integer())
        let counter: Int64 = try reader.integer()
        let originByte: UInt8 = try reader.integer()
        guard counter >= 0, originByte < 2 else { throw .invalid("version of run \(id)") }
        return RunIndex.RunSummary(
            id: id, status: status, startedAt: startedAt,
            endedAt: ended == 1 ? Timestamp(microsecondsSinceEpoch: endedMicroseconds) : nil, updatedAt: updatedAt,
            version: Stamp(time: versionTime, counter: Int(counter), origin: originByte == 0 ? .phone : .watch))
    }

    private static func statusCode(_ status: WorkoutStatus) -> UInt8 {
        switch status {
        case .notStarted: return 0
        case .inProgress: return 1
        case .completed: return 2
        }
    }
}

/// Appends little-endian integers and length-prefixed strings.
struct SnapshotWriter {
    var bytes: [UInt8] = []

    mutating func integer<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ text: String) {
        let utf8 = Array(text.utf8)
        integer(UInt32(utf8.count))
        bytes += utf8
    }
}

/// Reads what `SnapshotWriter` wrote; every read is bounds-checked.
struct SnapshotReader {
    private var rest: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    var isAtEnd: Bool { rest.isEmpty }
    var remaining: Int { rest.count }

    mutating func bytes(_ count: Int) throws(RunIndexSnapshotError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= rest.count else { throw .truncated }
        defer { rest = rest.dropFirst(count) }
        return rest.prefix(count)
    }

    mutating func integer<Value: FixedWidthInteger>() throws(RunIndexSnapshotError) -> Value {
        let raw = try bytes(MemoryLayout<Value>.size)
        var value = Value.zero
        for (shift, byte) in raw.enumerated() { value |= Value(truncatingIfNeeded: byte) << (shift * 8) }
        return value
    }

    mutating func string() throws(RunIndexSnapshotError) -> String {
        let count: UInt32 = try integer()
        let raw = try bytes(Int(count))
        guard let text = String(validating: raw, as: UTF8.self) else { throw .invalid("a string is not UTF-8") }
        return text
    }
}
