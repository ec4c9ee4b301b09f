import DurableFiles
import POSIX
import SyncEngine
import WorkoutModel

/// The phone's iCloud-Drive-style document directory: the source of truth for splits, runs and
/// tombstones, of which phoned is the sole writer.
///
/// ```
/// <root>/Splits/<splitID>.json
/// <root>/Workouts/<YYYY>/<MM>/<workoutID>.json   (UTC year and month of the run's startedAt)
/// <root>/Stubs/<id>.json                         (tombstones, kept forever)
/// ```
///
/// File names are validated `DocumentID`s, so no document can name a path outside `root`. Every
/// write is atomic (`AtomicFile`: temp file, fsync, rename, fsync of the folder) and encoded with
/// `DocumentCoder.encodeForDisk`; a folder created on the way is made durable by fsyncing its parent.
///
/// Every method blocks on disk I/O (fsync): call them from the owner's own thread (its `EventLoop`),
/// never from Swift's cooperative pool. The class holds its immutable paths and the locked record of
/// its own writes, so it is `Sendable`; two threads writing the same document at once would race,
/// which the single owner rules out.
package final class DocumentDirectory: Sendable {
    /// The absolute path of the document directory.
    package let root: String
    /// What this process wrote, for its watcher to pass over (`OwnWrites`).
    package let ownWrites = OwnWrites()
    /// The runs written since their files were last synced, when runs are kept pending
    /// (`pendingRecord`); nil: a run's write is an atomic replace like any other.
    private let pending: PendingFiles?

    /// Opens the directory at `root`, creating it (one level) and its `Splits`, `Stubs` and `Workouts`
    /// folders where missing. With `pendingRecord` (phoned: `<state>/pending-documents`) a run's
    /// write is durable in that record and its file replaced without a sync at `publish`
    /// (`PendingFiles`, keeping the file each publish replaces in `spares` for the next one:
    /// phoned's `<state>/spare-documents`); opening puts back a run whose publish a crash lost.
    ///
    /// A directory without its epoch file and without a document (wiped, or never used) is not the
    /// data the pending record was written for: the record is removed unread (`droppedPendingRecord`),
    /// so a wiped directory is never refilled from phoned's own bookkeeping.
    package init(root: String, pendingRecord: String? = nil, spares: String? = nil) throws(DocumentStoreError) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        let parent = Self.parent(of: self.root)
        try Self.createFolder(self.root, in: parent)
        for folder in [DocumentFolder.splits, .stubs, .workouts] {
            try Self.createFolder("\(self.root)/\(folder.relativePath)", in: self.root)
        }
        guard let pendingRecord else {
            pending = nil
            droppedPendingRecord = false
            return
        }
        let wiped =
            (try? FileStatus(of: "\(self.root)/\(Self.epochFileName)")) == nil && !Self.holdsDocuments(self.root)
        droppedPendingRecord = wiped && ((try? FileSystem.removeFileIfPresent(pendingRecord)) ?? false)
        do {
            pending = try PendingFiles(record: pendingRecord, root: self.root, spares: spares) {
                [ownWrites, root = self.root] path, spare, bytes in
                // The month folder is made here, off the write's path (a start may put back a run
                // whose folder never came to be).
                try Self.createFolders(above: path, under: root)
                ownWrites.note(bytes, at: path)
                do { try AtomicFile.writeUnsynced(bytes, to: path, reusing: spare) } catch {
                    ownWrites.forget(path)
                    throw error
                }
            }
        } catch {
            throw .writeFailed(path: pendingRecord, Self.systemCallError(error, call: "open", path: pendingRecord))
        }
    }

    /// Why the pending record found at the start was not used (it is replaced by the next write).
    package var pendingDamage: String? { pending?.damage }
    /// Whether the pending record was removed unread at the open: the directory had been wiped.
    package let droppedPendingRecord: Bool

    // MARK: Epoch

    /// The file at the root that names the phone epoch of these documents (docs/PROTOCOL.md, "Phone
    /// epochs"): it lives with the data it guards, so a wiped directory is a new epoch whatever the
    /// state directory kept, and a lost state directory is not.
    package static let epochFileName = ".phone-epoch.json"

    /// The epoch the documents belong to; nil when the file is missing (a wiped or new directory, or
    /// one written by a version that kept the epoch in the state directory).
    package func readEpoch() throws(DocumentStoreError) -> Timestamp? {
        let path = "\(root)/\(Self.epochFileName)"
        switch FileSystem.readRegularFile(path, maximumBytes: 4_096) {
        case .missing:
            return nil
        case .bytes(let bytes):
            do {
                return try DocumentCoder.decode(PhoneEpochRecord.self, from: bytes).epoch
            } catch {
                throw .unreadable(path: path, reason: "\(error)")
            }
        case .notARegularFile:
            throw .unreadable(path: path, reason: "not a regular file")
        case .tooLarge(let bytes):
            throw .unreadable(path: path, reason: "\(bytes) bytes, more than an epoch record can be")
        case .failed(let error):
            throw .unreadable(path: path, reason: "\(error)")
        }
    }

    /// Writes the epoch file atomically.
    package func writeEpoch(_ epoch: Timestamp) throws(DocumentStoreError) {
        try atomicWrite(DocumentCoder.encodeForDisk(PhoneEpochRecord(epoch)), to: "\(root)/\(Self.epochFileName)")
    }

    /// Whether any document folder holds an entry (a split, a stub, a year of runs).
    private static func holdsDocuments(_ root: String) -> Bool {
        [DocumentFolder.splits, .stubs, .workouts].contains { folder in
            let names = (try? FileSystem.entryNames(in: "\(root)/\(folder.relativePath)")) ?? []
            return names.contains { !$0.hasPrefix(".") }
        }
    }

    // MARK: Paths

    /// The absolute path of a layout folder.
    package func path(of folder: DocumentFolder) -> String {
        folder == .root ? root : "\(root)/\(folder.relativePath)"
    }

    /// `Splits/<id>.json`.
    package func path(ofSplit id: DocumentID) -> String {
        "\(path(of: .splits))/\(id.rawValue).json"
    }

    /// `Workouts/<YYYY>/<MM>/<id>.json`, the year and month of `startedAt` in UTC.
    package func path(ofWorkout id: DocumentID, startedAt: Timestamp) -> String {
        "\(path(of: .month(of: startedAt)))/\(id.rawValue).json"
    }

    /// `Stubs/<id>.json`.
    package func path(ofStub id: DocumentID) -> String {
        "\(path(of: .stubs))/\(id.rawValue).json"
    }

    // MARK: Writing

    /// Writes a split atomically; when this returns it survives a crash.
    package func write(_ split: SplitDocument) throws(DocumentStoreError) {
        try ensureFolder(.splits)
        try atomicWrite(DocumentCoder.encodeForDisk(split), to: path(ofSplit: split.id))
    }

    /// Writes a run durably for the folder of its start month, creating `Workouts/YYYY/MM` as needed:
    /// atomically, or (runs kept pending) into the pending record, its file following at `publish`.
    package func write(_ run: WorkoutDocument) throws(DocumentStoreError) {
        let bytes = DocumentCoder.encodeForDisk(run)
        guard let pending else {
            try ensureFolder(.month(of: run.startedAt))
            return try atomicWrite(bytes, to: path(ofWorkout: run.id, startedAt: run.startedAt))
        }
        do {
            try pending.write(bytes, at: relativePath(ofWorkout: run.id, startedAt: run.startedAt))
        } catch {
            let path = path(ofWorkout: run.id, startedAt: run.startedAt)
            throw .writeFailed(path: path, Self.systemCallError(error, call: "write", path: path))
        }
    }

    /// Replaces the file of a run written since its last publish, without a sync; nothing else.
    package func publish(workout id: DocumentID, startedAt: Timestamp) {
        pending?.publish(relativePath(ofWorkout: id, startedAt: startedAt))
    }

    /// `Workouts/<YYYY>/<MM>/<id>.json`, relative to the root.
    private func relativePath(ofWorkout id: DocumentID, startedAt: Timestamp) -> String {
        DocumentFolder.month(of: startedAt).relativePath(of: "\(id.rawValue).json")
    }

    /// Writes a tombstone atomically.
    package func write(_ stub: Tombstone) throws(DocumentStoreError) {
        try ensureFolder(.stubs)
        try atomicWrite(DocumentCoder.encodeForDisk(stub), to: path(ofStub: stub.id))
    }

    /// Removes a run's live file durably; returns false when there was none (already gone is fine).
    @discardableResult
    package func removeWorkout(id: DocumentID, startedAt: Timestamp) throws(DocumentStoreError) -> Bool {
        let path = path(ofWorkout: id, startedAt: startedAt)
        do {
            try pending?.remove(relativePath(ofWorkout: id, startedAt: startedAt))
        } catch {
            throw .removeFailed(path: path, Self.systemCallError(error, call: "write", path: path))
        }
        return try remove(path, in: .month(of: startedAt))
    }

    /// Removes a split's file durably; returns false when there was none.
    @discardableResult
    package func removeSplit(id: DocumentID) throws(DocumentStoreError) -> Bool {
        try remove(path(ofSplit: id), in: .splits)
    }

    /// Writes a companion file of a run (its samples, at `relative`) atomically, creating the month folder.
    func writeCompanion(_ bytes: [UInt8], at relative: String, startedAt: Timestamp) throws(DocumentStoreError) {
        try ensureFolder(.month(of: startedAt))
        try atomicWrite(bytes, to: "\(root)/\(relative)", noted: false)
    }

    /// Removes a companion file of a run durably; false when there was none.
    func removeCompanion(_ path: String, startedAt: Timestamp) throws(DocumentStoreError) -> Bool {
        try remove(path, in: .month(of: startedAt))
    }

    // MARK: Reading

    /// Loads a run the engine needs but does not hold (`SyncEngine.needsDocument`).
    ///
    /// Applies the same rules as the scan: a file that is there but unusable (undecodable, another ID
    /// inside, …) throws `unusable` with the reason; no file throws `notFound`.
    package func loadWorkout(id: DocumentID, startedAt: Timestamp) throws(DocumentStoreError) -> WorkoutDocument {
        let folder = DocumentFolder.month(of: startedAt)
        let name = "\(id.rawValue).json"
        let path = path(ofWorkout: id, startedAt: startedAt)
        // A run whose publish has not taken effect (it failed) reads as written.
        let written = pending?.unpublished(at: relativePath(ofWorkout: id, startedAt: startedAt)).map {
            DocumentFile.decode($0, as: .workout, fileID: id, in: folder)
        }
        switch written ?? DocumentFile.load(name: name, in: folder, root: root) {
        case .missing, .companion: throw .notFound(path: path)
        case .skipped(let reason): throw .unusable(path: path, reason)
        case .document(.workout(let run)): return run
        case .document:
            // A month folder only ever yields runs (DocumentFile decodes by the folder's kind).
            preconditionFailure("a month folder yielded a document that is not a run: \(path)")
        }
    }

    // MARK: Helpers

    /// Creates the folders between `root` and the file at `path` where missing, each made durable.
    private static func createFolders(above path: String, under root: String) throws(DocumentStoreError) {
        let folders = path.dropFirst(root.count + 1).split(separator: "/").dropLast()
        var parent = root
        for name in folders {
            let folder = "\(parent)/\(name)"
            try createFolder(folder, in: parent)
            parent = folder
        }
    }

    /// Creates `folder` and, for a month, its year and `Workouts` above it, where missing.
    private func ensureFolder(_ folder: DocumentFolder) throws(DocumentStoreError) {
        switch folder {
        case .root:
            return
        case .splits, .stubs, .workouts:
            try Self.createFolder(path(of: folder), in: root)
        case .year:
            try ensureFolder(.workouts)
            try Self.createFolder(path(of: folder), in: path(of: .workouts))
        case .month(let year, _):
            try ensureFolder(.year(year))
            try Self.createFolder(path(of: folder), in: path(of: .year(year)))
        }
    }

    /// Writes `bytes` to `path` atomically; `noted`: for the watcher to pass over (a companion file,
    /// which the watcher never reads, is not).
    private func atomicWrite(_ bytes: [UInt8], to path: String, noted: Bool = true) throws(DocumentStoreError) {
        if noted { ownWrites.note(bytes, at: path) }
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            if noted { ownWrites.forget(path) }
            throw .writeFailed(path: path, Self.systemCallError(error, call: "write", path: path))
        }
    }

    private func remove(_ file: String, in folder: DocumentFolder) throws(DocumentStoreError) -> Bool {
        let removed: Bool
        do {
            removed = try FileSystem.removeFileIfPresent(file)
        } catch {
            throw .removeFailed(path: file, error)
        }
        guard removed else { return false }
        let folderPath = path(of: folder)
        do {
            try AtomicFile.fsyncDirectory(folderPath)
        } catch {
            throw .removeFailed(path: file, Self.systemCallError(error, call: "fsync", path: folderPath))
        }
        return true
    }

    /// Creates the folder `path` inside `parent` and fsyncs `parent` so the new entry is durable; an
    /// existing folder is fine, anything else in its place is refused.
    private static func createFolder(_ path: String, in parent: String) throws(DocumentStoreError) {
        let created: Bool
        do {
            created = try FileSystem.createDirectory(path)
        } catch {
            throw .createFolderFailed(path: path, error)
        }
        guard created else {
            guard (try? FileStatus(of: path))?.kind == .directory else { throw .notAFolder(path: path) }
            return
        }
        do {
            try AtomicFile.fsyncDirectory(parent)
        } catch {
            throw .createFolderFailed(path: path, Self.systemCallError(error, call: "fsync", path: parent))
        }
    }

    /// `AtomicFile` throws only `SystemCallError`; anything else is described in one, so callers can
    /// keep one error shape.
    private static func systemCallError(_ error: any Error, call: String, path: String) -> SystemCallError {
        if let error = error as? SystemCallError { return error }
        return SystemCallError(call: "\(call) (\(error))", errno: Errno.ioError, path: path)
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
