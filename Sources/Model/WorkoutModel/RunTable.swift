/// Bytes a `RunTable` reads in place: a memory-mapped run index file in phoned, an owned buffer
/// elsewhere. They never change while the storage lives.
package protocol RunTableStorage: AnyObject, Sendable {
    var bytes: UnsafeRawBufferPointer { get }
    /// Lets go of the pages read so far (a mapped file reads them again when they are next touched),
    /// so a pass over the whole table leaves the process no larger. Owned memory keeps its pages.
    func releaseResidentPages()
}

/// A table's bytes copied into memory this process owns.
package final class RunTableBuffer: RunTableStorage, @unchecked Sendable {
    // Unchecked: the buffer is written once, in `init`, and only read after.
    package let bytes: UnsafeRawBufferPointer

    package init(_ contents: some Collection<UInt8>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 16)
        buffer.copyBytes(from: contents)
        bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<contents.count])
    }

    deinit { UnsafeMutableRawBufferPointer(mutating: bytes).deallocate() }

    package func releaseResidentPages() {}
}

/// The run summaries of a run index file, read where they lie rather than held in dictionaries, so
/// a phone's memory does not grow with its history (issue Scale).
///
/// Two sections, little-endian apart from the IDs:
///
/// ```
/// entries  entryCount × 64 bytes, sorted by ID, each ID at most once:
///          ID (16 bytes, big-endian halves), status u8, ended u8, version origin u8, 0 u8,
///          folder u32, startedAt i64, endedAt i64, updatedAt i64, version time i64, version counter i64
///          (times in microseconds since the epoch; folder = the recorded month folder's number)
/// order    one element per completed run, sorted by (endedAt, ID): endedAt i64, entry u32, folder u32
/// ```
///
/// Each entry belongs to a recorded month folder; a folder that changed since it was recorded is
/// retired (`isLive`), and its entries no longer count: the start-up scan decodes that folder again.
/// Reading an entry never traps, whatever the bytes; `load` refuses a table whose entries break a rule.
package struct RunTable: Sendable {
    package static let entryBytes = 64
    package static let orderBytes = 16

    /// What `load` learned of one folder's entries.
    package struct FolderStatistics: Equatable, Sendable {
        package var runCount = 0
        package var completedCount = 0
        /// The newest version among the folder's runs (nil for a folder without runs).
        package var newestVersion: Stamp?
    }

    private let storage: (any RunTableStorage)?
    /// `storage`'s bytes, valid while the table holds it (read once: every access through the
    /// existential was a call).
    nonisolated(unsafe) private let bytes: UnsafeRawBufferPointer
    private let entriesOffset: Int
    package let entryCount: Int
    private let orderOffset: Int
    package let orderCount: Int
    /// By folder number, what `load` counted.
    package private(set) var folders: [FolderStatistics]
    /// Entries of runs that are not completed (few: they ride in every push), by entry.
    package private(set) var activeEntries: [Int]
    /// By folder number: whether the folder's entries count.
    package private(set) var isLive: [Bool]

    /// A table of no runs.
    package static let empty = RunTable()

    private init() {
        storage = nil
        bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        entriesOffset = 0
        entryCount = 0
        orderOffset = 0
        orderCount = 0
        folders = []
        activeEntries = []
        isLive = []
    }

    /// Reads the table at `offset` in `storage` (entries then order, `entryCount` and `orderCount`
    /// long), checking every entry and order element once: IDs strictly ascending, every field in
    /// range, folders below `folderCount`, the order sorted and naming completed entries. Every
    /// folder starts live.
    package static func load(
        _ storage: any RunTableStorage, offset: Int, entryCount: Int, orderCount: Int, folderCount: Int
    ) throws(RunIndexSnapshotError) -> RunTable {
        let available = storage.bytes.count - offset
        guard offset >= 0, entryCount >= 0, orderCount >= 0, orderCount <= entryCount,
            entryCount <= available / entryBytes,
            orderCount <= (available - entryCount * entryBytes) / orderBytes
        else { throw .truncated }
        var table = RunTable(
            storage: storage, offset: offset, entryCount: entryCount, orderCount: orderCount, folderCount: folderCount)
        try table.check()
        return table
    }

    private init(storage: any RunTableStorage, offset: Int, entryCount: Int, orderCount: Int, folderCount: Int) {
        self.storage = storage
        bytes = storage.bytes
        entriesOffset = offset
        self.entryCount = entryCount
        orderOffset = offset + entryCount * Self.entryBytes
        self.orderCount = orderCount
        folders = Array(repeating: FolderStatistics(), count: folderCount)
        activeEntries = []
        isLive = Array(repeating: true, count: folderCount)
    }

    /// The pass of `load`: fills `folders` and `activeEntries`, or refuses the table.
    private mutating func check() throws(RunIndexSnapshotError) {
        var statistics = folders
        var active: [Int] = []
        var previous: (high: UInt64, low: UInt64)?
        for entry in 0..<entryCount {
            let base = entriesOffset + entry * Self.entryBytes
            let id = (high: bigEndian(base), low: bigEndian(base + 8))
            if let previous, !(previous < id) { throw .invalid("run IDs out of order at entry \(entry)") }
            previous = id
            let status = byte(base + 16)
            let ended = byte(base + 17)
            let origin = byte(base + 18)
            let folder = Int(word(base + 20))
            guard status < 3, ended < 2, origin < 2, byte(base + 19) == 0, integer(base + 56) >= 0,
                folder < statistics.count
            else { throw .invalid("entry \(entry) has a field out of range") }
            // Read field by field, not as a summary: this pass is a restart's whole cost per run.
            let version = Stamp(
                time: Timestamp(microsecondsSinceEpoch: integer(base + 48)), counter: Int(integer(base + 56)),
                origin: origin == 0 ? .phone : .watch)
            statistics[folder].runCount += 1
            if statistics[folder].newestVersion.map({ $0 < version }) ?? true {
                statistics[folder].newestVersion = version
            }
            if status == 2, ended == 1 {
                statistics[folder].completedCount += 1
            } else {
                active.append(entry)
            }
        }
        var completed = Array(repeating: 0, count: statistics.count)
        var previousKey: (endedAt: Int64, id: (UInt64, UInt64))?
        for position in 0..<orderCount {
            let (endedAt, entry, folder) = orderElement(at: position)
            guard entry < entryCount, folder < statistics.count, self.folder(at: entry) == folder else {
                throw .invalid("completed-order element \(position) names no entry of its folder")
            }
            let base = entryOffset(entry)
            guard byte(base + 16) == 2, byte(base + 17) == 1, integer(base + 32) == endedAt else {
                throw .invalid("completed-order element \(position) names a run that is not completed")
            }
            let key = (endedAt: endedAt, id: (bigEndian(base), bigEndian(base + 8)))
            if let previousKey,
                !(previousKey.endedAt < key.endedAt || (previousKey.endedAt == key.endedAt && previousKey.id < key.id))
            {
                throw .invalid("completed order unsorted at element \(position)")
            }
            previousKey = key
            completed[folder] += 1
        }
        guard completed == statistics.map(\.completedCount) else {
            throw .invalid("the completed order does not list every completed run once")
        }
        folders = statistics
        activeEntries = active
        storage?.releaseResidentPages()
    }

    // MARK: Reading

    /// The run of `entry`.
    package func summary(at entry: Int) -> RunIndex.RunSummary {
        let base = entryOffset(entry)
        let status = byte(base + 16)
        return RunIndex.RunSummary(
            id: DocumentID(high: bigEndian(base), low: bigEndian(base + 8)),
            status: status == 0 ? .notStarted : status == 1 ? .inProgress : .completed,
            startedAt: Timestamp(microsecondsSinceEpoch: integer(base + 24)),
            endedAt: byte(base + 17) == 0 ? nil : Timestamp(microsecondsSinceEpoch: integer(base + 32)),
            updatedAt: Timestamp(microsecondsSinceEpoch: integer(base + 40)),
            version: Stamp(
                time: Timestamp(microsecondsSinceEpoch: integer(base + 48)), counter: Int(max(0, integer(base + 56))),
                origin: byte(base + 18) == 0 ? .phone : .watch))
    }

    package func id(at entry: Int) -> DocumentID {
        DocumentID(high: bigEndian(entryOffset(entry)), low: bigEndian(entryOffset(entry) + 8))
    }

    package func folder(at entry: Int) -> Int { Int(word(entryOffset(entry) + 20)) }

    /// The `position`th completed run in (endedAt, ID) order.
    package func orderElement(at position: Int) -> (endedAt: Int64, entry: Int, folder: Int) {
        let base = orderOffset + position * Self.orderBytes
        return (integer(base), Int(word(base + 8)), Int(word(base + 12)))
    }

    /// The entry of `id` (live or not), by binary search.
    package func entry(of id: DocumentID) -> Int? {
        let wanted = id.halves
        var low = 0
        var high = entryCount
        while low < high {
            let middle = (low + high) / 2
            let base = entryOffset(middle)
            let found = (bigEndian(base), bigEndian(base + 8))
            if found == wanted { return middle }
            if found < wanted { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Whether `entry` counts: its folder is live.
    package func isLive(entry: Int) -> Bool { isLive[folder(at: entry)] }

    /// `id`'s summary when its folder is live.
    package func summary(of id: DocumentID) -> RunIndex.RunSummary? {
        guard let entry = entry(of: id), isLive(entry: entry) else { return nil }
        return summary(at: entry)
    }

    /// Retires a folder: it changed since it was recorded, so its entries no longer count.
    package mutating func retire(folder: Int) { isLive[folder] = false }

    /// Whether `other` reads the same bytes (whatever folders each has retired).
    package func isSame(as other: RunTable) -> Bool {
        switch (storage, other.storage) {
        case (nil, nil): return true
        case (let mine?, let theirs?): return mine === theirs && entriesOffset == other.entriesOffset
        default: return false
        }
    }

    /// Lets go of the pages a pass over the table touched (see `RunTableStorage`).
    package func releaseResidentPages() { storage?.releaseResidentPages() }

    private func entryOffset(_ entry: Int) -> Int { entriesOffset + entry * Self.entryBytes }

    private func byte(_ offset: Int) -> UInt8 { bytes[offset] }

    private func word(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private func integer(_ offset: Int) -> Int64 {
        Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    private func bigEndian(_ offset: Int) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

// MARK: Writing

extension RunTable {
    /// A table of `runs` in one folder, as a run index file would hold them (tests, tools), in the
    /// storage `store` makes of the file's payload (an owned buffer unless a test wants to watch it).
    package static func recording(
        _ runs: [RunIndex.RunSummary], store: ([UInt8]) -> any RunTableStorage = { RunTableBuffer($0) }
    ) -> RunTable {
        let folder = RunIndexSnapshot.Folder(
            fingerprint: FolderFingerprint(entryCount: runs.count, newestModificationNanoseconds: 0, digest: 0),
            runs: runs, skipped: [])
        let snapshot = RunIndexSnapshot(root: "/", folders: ["Workouts/2000/01": folder])
        let storage = store(snapshot.encoded())
        // A payload just encoded always decodes.
        return (try? RunIndexSnapshot(decoding: storage, payload: 0..<storage.bytes.count, root: "/").table) ?? .empty
    }
}

extension RunTable {
    /// Appends `summary`'s entry, in `folder`, to `bytes`.
    package static func appendEntry(_ summary: RunIndex.RunSummary, folder: Int, to bytes: inout [UInt8]) {
        let halves = summary.id.halves
        append(halves.high.bigEndian, to: &bytes)
        append(halves.low.bigEndian, to: &bytes)
        bytes.append(summary.status == .notStarted ? 0 : summary.status == .inProgress ? 1 : 2)
        bytes.append(summary.endedAt == nil ? 0 : 1)
        bytes.append(summary.version.origin == .phone ? 0 : 1)
        bytes.append(0)
        append(UInt32(folder).littleEndian, to: &bytes)
        append(summary.startedAt.microsecondsSinceEpoch.littleEndian, to: &bytes)
        append((summary.endedAt?.microsecondsSinceEpoch ?? 0).littleEndian, to: &bytes)
        append(summary.updatedAt.microsecondsSinceEpoch.littleEndian, to: &bytes)
        append(summary.version.time.microsecondsSinceEpoch.littleEndian, to: &bytes)
        append(Int64(summary.version.counter).littleEndian, to: &bytes)
    }

    /// Appends one completed-order element to `bytes`.
    package static func appendOrderElement(endedAt: Timestamp, entry: Int, folder: Int, to bytes: inout [UInt8]) {
        append(endedAt.microsecondsSinceEpoch.littleEndian, to: &bytes)
        append(UInt32(entry).littleEndian, to: &bytes)
        append(UInt32(folder).littleEndian, to: &bytes)
    }

    private static func append(_ value: some FixedWidthInteger, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }
}

extension RunTable: Equatable {
    /// The same bytes with the same folders retired.
    package static func == (lhs: RunTable, rhs: RunTable) -> Bool { lhs.isSame(as: rhs) && lhs.isLive == rhs.isLive }
}
