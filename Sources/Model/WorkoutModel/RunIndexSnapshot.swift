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
///
/// A snapshot read from a file keeps its runs where they lie, in the file's `RunTable`; a scan's
/// snapshot holds the runs of the folders it decoded and refers to the table for the folders it
/// reused, so writing the next file copies the recorded runs across without decoding them.
package struct RunIndexSnapshot: Equatable, Sendable {
    /// Bumped whenever the payload or the rules that produced it change (what a folder's scan
    /// accepts or skips), so an index written by another build is rebuilt, never misread.
    package static let formatVersion: UInt32 = 2

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
        package var skipped: [SkippedNote]
        /// Where the folder's runs are.
        package var source: Source

        package enum Source: Sendable {
            /// Folder `number` of a run index file's table.
            case recorded(RunTable, number: Int)
            /// Decoded by this scan.
            case decoded([RunIndex.RunSummary])
        }

        package init(fingerprint: FolderFingerprint, runs: [RunIndex.RunSummary], skipped: [SkippedNote]) {
            self.fingerprint = fingerprint
            self.skipped = skipped
            source = .decoded(runs)
        }

        init(fingerprint: FolderFingerprint, table: RunTable, number: Int, skipped: [SkippedNote]) {
            self.fingerprint = fingerprint
            self.skipped = skipped
            source = .recorded(table, number: number)
        }

        package var runCount: Int {
            switch source {
            case .recorded(let table, let number): return table.folders[number].runCount
            case .decoded(let runs): return runs.count
            }
        }

        /// The folder's run summaries, in ID order (a recorded folder's: a pass over its table).
        package func runs() -> [RunIndex.RunSummary] {
            switch source {
            case .recorded(let table, let number):
                defer { table.releaseResidentPages() }
                return (0..<table.entryCount).filter { table.folder(at: $0) == number }.map { table.summary(at: $0) }
            case .decoded(let runs):
                return runs.sorted { $0.id < $1.id }
            }
        }

        package static func == (lhs: Folder, rhs: Folder) -> Bool {
            lhs.fingerprint == rhs.fingerprint && lhs.skipped == rhs.skipped && lhs.runs() == rhs.runs()
        }
    }

    /// The document directory the folders belong to (its absolute path).
    package var root: String
    /// By path relative to the root, e.g. `Workouts/2026/11`.
    package var folders: [String: Folder]
    /// The table the snapshot was read with (every folder live); empty for a snapshot not read from
    /// a file.
    package private(set) var table = RunTable.empty

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

    package static func == (lhs: RunIndexSnapshot, rhs: RunIndexSnapshot) -> Bool {
        lhs.root == rhs.root && lhs.folders == rhs.folders
    }
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
    /// u32 formatVersion, string root, u32 folderCount, then per folder (sorted by path, numbered
    ///   from 0 in that order): string path, u64 entryCount, i64 newestModificationNanoseconds,
    ///   u64 digest, u32 skippedCount, skippedCount × (string path, string reason)
    /// u64 table entry count, u64 table order count, the table (RunTable)
    /// string = u32 byte count + UTF-8
    /// ```
    ///
    /// Every run ID is in one folder at most: two folders that hold the same run (a file copied
    /// across months) are left out of the payload, so the next start decodes them as a full scan does.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode { bytes += $0 }
        return bytes
    }

    /// The payload of `encoded()` in pieces, in order, so a writer never needs it in memory whole:
    /// the recorded folders' entries are copied from their table a slice at a time.
    package func encode(into append: (ArraySlice<UInt8>) throws -> Void) rethrows {
        var plan = TablePlan(self)
        var writer = SnapshotWriter()
        writer.integer(Self.formatVersion)
        writer.string(root)
        writer.integer(UInt32(plan.paths.count))
        for path in plan.paths {
            let folder = folders[path]!
            writer.string(path)
            writer.integer(UInt64(folder.fingerprint.entryCount))
            writer.integer(folder.fingerprint.newestModificationNanoseconds)
            writer.integer(folder.fingerprint.digest)
            writer.integer(UInt32(folder.skipped.count))
            for note in folder.skipped {
                writer.string(note.path)
                writer.string(note.reason)
            }
        }
        writer.integer(UInt64(plan.entryCount))
        writer.integer(UInt64(plan.orderCount))
        try append(writer.bytes[...])
        try plan.writeTable(into: append)
    }

    /// Decodes a payload written by `encoded()` for the document directory at `root`.
    package init(decoding bytes: [UInt8], root: String) throws(RunIndexSnapshotError) {
        let storage = RunTableBuffer(bytes)
        try self.init(decoding: storage, payload: 0..<storage.bytes.count, root: root)
    }

    /// Decodes the payload at `payload` in `storage` (a mapped file) for the document directory at
    /// `root`; its table stays there, read in place.
    package init(
        decoding storage: any RunTableStorage, payload: Range<Int>, root: String
    ) throws(RunIndexSnapshotError) {
        var reader = SnapshotReader(storage.bytes, payload)
        let format: UInt32 = try reader.integer()
        guard format == Self.formatVersion else {
            throw .unsupportedFormat(found: format, supported: Self.formatVersion)
        }
        let recordedRoot = try reader.string()
        guard recordedRoot == root else { throw .otherDirectory(recorded: recordedRoot) }
        self.root = root
        folders = [:]
        let folderCount: UInt32 = try reader.integer()
        guard Int(folderCount) <= reader.remaining else { throw .truncated }
        var headers: [(path: String, fingerprint: FolderFingerprint, skipped: [SkippedNote])] = []
        var previousPath: String?
        for _ in 0..<folderCount {
            let path = try reader.string()
            let entryCount: UInt64 = try reader.integer()
            let newest: Int64 = try reader.integer()
            let digest: UInt64 = try reader.integer()
            let skippedCount: UInt32 = try reader.integer()
            guard Int(skippedCount) <= reader.remaining else { throw .truncated }
            var skipped: [SkippedNote] = []
            for _ in 0..<skippedCount {
                skipped.append(SkippedNote(path: try reader.string(), reason: try reader.string()))
            }
            guard entryCount <= UInt64(Int.max), previousPath.map({ $0 < path }) ?? true else {
                throw .invalid("folder \(path) out of order or with an impossible entry count")
            }
            previousPath = path
            let fingerprint = FolderFingerprint(
                entryCount: Int(entryCount), newestModificationNanoseconds: newest, digest: digest)
            headers.append((path, fingerprint, skipped))
        }
        let entryCount: UInt64 = try reader.integer()
        let orderCount: UInt64 = try reader.integer()
        let tableBytes = UInt64(reader.remaining)
        guard entryCount <= tableBytes / UInt64(RunTable.entryBytes),
            orderCount <= tableBytes / UInt64(RunTable.orderBytes)
        else { throw .truncated }
        let expected = entryCount * UInt64(RunTable.entryBytes) + orderCount * UInt64(RunTable.orderBytes)
        guard expected <= tableBytes else { throw .truncated }
        guard expected == tableBytes else { throw .invalid("\(tableBytes - expected) bytes after the table") }
        // Every entry is checked now, so a payload is accepted or refused whole.
        let table = try RunTable.load(
            storage, offset: reader.position, entryCount: Int(entryCount), orderCount: Int(orderCount),
            folderCount: headers.count)
        self.table = table
        for (number, header) in headers.enumerated() {
            folders[header.path] = Folder(
                fingerprint: header.fingerprint, table: table, number: number, skipped: header.skipped)
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

/// Reads what `SnapshotWriter` wrote, in place; every read is bounds-checked.
struct SnapshotReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position: Int
    private let end: Int

    init(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
    }

    var remaining: Int { end - position }

    mutating func integer<Value: FixedWidthInteger>() throws(RunIndexSnapshotError) -> Value {
        guard MemoryLayout<Value>.size <= remaining else { throw .truncated }
        defer { position += MemoryLayout<Value>.size }
        return Value(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: Value.self))
    }

    mutating func string() throws(RunIndexSnapshotError) -> String {
        let count = Int(try integer() as UInt32)
        guard count <= remaining else { throw .truncated }
        defer { position += count }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
        guard let text = String(validating: raw, as: UTF8.self) else { throw .invalid("a string is not UTF-8") }
        return text
    }
}

extension RunIndexSnapshot {
    /// The snapshot as a run index file holds it: every folder in its table. A snapshot read from a
    /// file already is; one built in memory (a scan's, in tests) goes through its encoding.
    package var readable: RunIndexSnapshot? {
        let isRead = folders.values.allSatisfy { folder in
            if case .recorded(let recorded, _) = folder.source { return recorded.isSame(as: table) }
            return false
        }
        if isRead { return self }
        return try? RunIndexSnapshot(decoding: encoded(), root: root)
    }
}
