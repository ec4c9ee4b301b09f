import Foundation
import LinkRuntime
import POSIX
import Synchronization
import WatchEngine
import WorkoutModel

/// The watch's cache on disk: plain JSON files, no database.
///
/// ```
/// <cache>/Workouts/<id>.json   every run the last applied context (or a local edit) left in the cache
/// <cache>/Splits/<id>.json     every split
/// <cache>/session.json         the workout session record (running / ended), so a restart knows it
/// <cache>/phone-epoch.json     the phone epoch the cached runs belong to (docs/PROTOCOL.md)
/// <cache>/complication.json    the newest-sent complication that arrived from the phone
/// <cache>/.pending-runs        the runs written since their files were last synced (`PendingRuns`)
/// ```
/// Every write is atomic (temp file, fsync, rename, fsync the directory), but for a run's: it is
/// durable once its file's bytes are in `.pending-runs` (a `RecordFile`, one in-place write and
/// `fdatasync`), and the file is then replaced without a sync, so an edit waits for one device flush
/// instead of two journal commits. Start-up (`load`) puts back each pending run's file that does not
/// hold its bytes (a machine crash lost the replace, or a kill came between the two writes) and
/// syncs them all; a write that would leave more than `PendingRuns.limit` runs pending first syncs
/// the others' files and drops them from the record. A removed run leaves the record before its
/// file goes, so it never comes back. The last received context
/// itself is kept by the link (`<state>/link/received-context`) and re-applied at start-up, so a
/// crash half-way through applying one is repaired by applying it again. A file that does not decode
/// is reported and left alone, never fatal.
package final class WatchCacheDirectory: Sendable {
    package let root: String
    private var workoutsDirectory: String { "\(root)/Workouts" }
    private var splitsDirectory: String { "\(root)/Splits" }
    private var sessionPath: String { "\(root)/session.json" }
    private var epochPath: String { "\(root)/phone-epoch.json" }
    private var complicationPath: String { "\(root)/complication.json" }
    private let pendingFile: RecordFile
    /// What the pending record holds on disk, once `load` read it; writes come one at a time (the
    /// write queue), the lock only makes that visible to the compiler.
    private let pending = Mutex(PendingRuns())
    /// The pending record when start-up found it damaged, for `load` to report.
    private let pendingDamage: (path: String, reason: String)?

    /// What `load` found.
    package struct Contents: Sendable {
        package var workouts: [WorkoutDocument] = []
        package var splits: [SplitDocument] = []
        package var session: SessionRecord?
        package var phoneEpoch: PhoneEpochRecord?
        package var complication: ComplicationPayload?
        /// Files that could not be read, with the reason; left on disk.
        package var skipped: [(path: String, reason: String)] = []
    }

    package init(root: String) throws {
        self.root = root
        pendingFile = RecordFile(path: "\(root)/.pending-runs")
        for directory in [root, "\(root)/Workouts", "\(root)/Splits"] {
            if let status = try? FileStatus(of: directory), status.kind != .directory {
                throw CacheLayoutError(description: "\(directory) is in the way of the cache: it is not a folder")
            }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try AtomicFile.sweepTemporaryFiles(in: directory)
        }
        pendingDamage = try Self.restorePendingRuns(pendingFile, in: root)
    }

    /// Reads the whole cache.
    package func load() throws -> Contents {
        var contents = Contents()
        contents.skipped = pendingDamage.map { [$0] } ?? []
        contents.workouts = try documents(in: workoutsDirectory, as: WorkoutDocument.self, skipped: &contents.skipped)
        contents.splits = try documents(in: splitsDirectory, as: SplitDocument.self, skipped: &contents.skipped)
        contents.session = try record(at: sessionPath, skipped: &contents.skipped)
        contents.phoneEpoch = try record(at: epochPath, skipped: &contents.skipped)
        contents.complication = try record(at: complicationPath, skipped: &contents.skipped)
        return contents
    }

    private func record<Record: VersionedDocument>(
        at path: String, skipped: inout [(path: String, reason: String)]
    ) throws -> Record? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        do {
            return try DocumentCoder.decode(Record.self, from: bytes)
        } catch {
            skipped.append((path, error.description))
            return nil
        }
    }

    /// Makes `run` durable in the pending record; its file follows at `publish(_:)`.
    package func write(_ run: WorkoutDocument) throws {
        let bytes = DocumentCoder.encodeForDisk(run)
        try pending.withLock { pending in
            var next = pending
            if next[run.id] == nil, next.count >= PendingRuns.limit {
                try Self.settle(next, in: workoutsDirectory)
                next = PendingRuns()
            }
            next[run.id] = bytes
            try pendingFile.write(next.record)
            pending = next
        }
    }

    /// Replaces the file of a run written since its last publish with the bytes `write` recorded,
    /// without a sync (the record keeps them durable); a run with nothing new is left alone. A replace
    /// that fails leaves the file as it was until the next start puts it back (`restorePendingRuns`).
    package func publish(_ run: DocumentID) {
        pending.withLock { pending in
            guard let bytes = pending[run], !pending.isPublished(run) else { return }
            if (try? AtomicFile.writeUnsynced(bytes, to: path(of: run))) != nil { pending.markPublished(run) }
        }
    }

    private func path(of run: DocumentID) -> String { "\(workoutsDirectory)/\(run).json" }

    /// Makes each pending run's file hold its bytes durably: puts back a file that does not (a failed
    /// or lost replace), syncs each file and then the folder.
    private static func settle(_ runs: PendingRuns, in directory: String) throws {
        for id in runs.ids {
            let path = "\(directory)/\(id).json"
            if try AtomicFile.read(path) != runs[id] { try AtomicFile.writeUnsynced(runs[id]!, to: path) }
            try AtomicFile.sync(path)
        }
        try AtomicFile.fsyncDirectory(directory)
    }

    /// Puts back each pending run's file that does not hold its bytes, syncs them all, and empties
    /// the record; returns the damage when the record is not whole (left for the next write to replace).
    private static func restorePendingRuns(_ file: RecordFile, in root: String) throws -> (
        path: String, reason: String
    )? {
        let found: PendingRuns
        do {
            guard let contents = try file.read() else { return nil }
            guard let runs = PendingRuns(record: contents.record) else {
                return (file.path, "not a list of pending runs")
            }
            found = runs
        } catch {
            return (file.path, "\(error)")
        }
        guard found.count > 0 else { return nil }
        try settle(found, in: "\(root)/Workouts")
        try file.write(PendingRuns().record)
        return nil
    }

    package func write(_ split: SplitDocument) throws {
        try AtomicFile.write(DocumentCoder.encodeForDisk(split), to: "\(splitsDirectory)/\(split.id).json")
    }

    package func write(_ session: SessionRecord) throws {
        try AtomicFile.write(DocumentCoder.encodeForDisk(session), to: sessionPath)
    }

    package func write(_ complication: ComplicationPayload) throws {
        try AtomicFile.write(DocumentCoder.encodeForDisk(complication), to: complicationPath)
    }

    package func write(_ epoch: PhoneEpochRecord) throws {
        try AtomicFile.write(DocumentCoder.encodeForDisk(epoch), to: epochPath)
    }

    package func removeWorkout(_ id: DocumentID) throws {
        try pending.withLock { pending in
            guard pending[id] != nil else { return }
            var next = pending
            next[id] = nil
            try pendingFile.write(next.record)
            pending = next
        }
        try remove(path(of: id), in: workoutsDirectory)
    }

    package func removeSplit(_ id: DocumentID) throws {
        try remove("\(splitsDirectory)/\(id).json", in: splitsDirectory)
    }

    private func remove(_ path: String, in directory: String) throws {
        _ = try FileSystem.removeFileIfPresent(path)
        try AtomicFile.fsyncDirectory(directory)
    }

    private func documents<Document: VersionedDocument>(
        in directory: String, as type: Document.Type, skipped: inout [(path: String, reason: String)]
    ) throws -> [Document] {
        var found: [Document] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where !name.hasPrefix(".") {
            let path = "\(directory)/\(name)"
            guard name.hasSuffix(".json"), DocumentID(String(name.dropLast(5))) != nil else {
                skipped.append((path, "not a <UUID>.json document file"))
                continue
            }
            do {
                guard let bytes = try AtomicFile.read(path) else { continue }
                found.append(try DocumentCoder.decode(type, from: bytes))
            } catch let error as DocumentError {
                skipped.append((path, error.description))
            }
        }
        return found
    }
}

/// Something other than a folder where the cache keeps one (a file named as `cacheDirectory`).
package struct CacheLayoutError: Error, CustomStringConvertible {
    package let description: String
}
