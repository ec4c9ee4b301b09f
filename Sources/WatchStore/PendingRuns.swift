import LinkProtocol
import WorkoutModel

/// The runs whose files may not be on disk yet, with each one's file bytes: the record of
/// `<cache>/.pending-runs` (a `RecordFile`), so a run's write is durable with one in-place write and
/// its file follows without a sync (`WatchCacheDirectory.write(_:)`).
///
/// ```
/// record = entry*, ordered by ID
/// entry  = u32 ID length | ID (UTF-8, a UUID) | u32 file length | file bytes (as encodeForDisk writes)
/// ```
struct PendingRuns: Equatable {
    private(set) var files: [DocumentID: [UInt8]] = [:]
    /// The runs whose files hold their bytes already (not kept in the record).
    private var published: Set<DocumentID> = []

    /// At most this many runs wait for their files' sync; the write that would add one more first
    /// syncs the others' files (and drops them), so a record stays a few pages.
    static let limit = 8

    var count: Int { files.count }
    var ids: Dictionary<DocumentID, [UInt8]>.Keys { files.keys }

    /// A run's file bytes; setting them marks the file not yet published.
    subscript(id: DocumentID) -> [UInt8]? {
        get { files[id] }
        set {
            files[id] = newValue
            published.remove(id)
        }
    }

    func isPublished(_ id: DocumentID) -> Bool { published.contains(id) }
    mutating func markPublished(_ id: DocumentID) { published.insert(id) }

    init() {}

    /// Reads a record; nil when it is not whole (a record file only hands over whole records, so
    /// that is damage).
    init?(record: [UInt8]) {
        var offset = 0
        func chunk() -> [UInt8]? {
            guard record.count - offset >= 4 else { return nil }
            let length = Int(BigEndian.read(UInt32.self, from: record, at: offset))
            offset += 4
            guard record.count - offset >= length else { return nil }
            defer { offset += length }
            return Array(record[offset..<(offset + length)])
        }
        while offset < record.count {
            guard let idBytes = chunk(), let id = DocumentID(String(decoding: idBytes, as: UTF8.self)),
                let file = chunk()
            else { return nil }
            files[id] = file
        }
    }

    var record: [UInt8] {
        var bytes: [UInt8] = []
        for id in files.keys.sorted(by: { $0.description < $1.description }) {
            let idBytes = Array(id.description.utf8)
            BigEndian.append(UInt32(idBytes.count), to: &bytes)
            bytes += idBytes
            BigEndian.append(UInt32(files[id]!.count), to: &bytes)
            bytes += files[id]!
        }
        return bytes
    }
}
