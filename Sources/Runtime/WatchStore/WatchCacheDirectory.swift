import DurableFiles
import Foundation
import POSIX
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
/// <cache>/.pending-runs        the runs written since their files were last synced (`PendingFiles`)
/// <cache>/.spare-runs/         the file each run's last publish replaced, reused by its next one
/// ```
/// Every write is atomic (temp file, fsync, rename, fsync the directory), but for a run's: it is
/// durable once its file's bytes are in `.pending-runs` (`PendingFiles`: one in-place write and
/// `fdatasync`), and the file is replaced without a sync when the node publishes it, so an edit
/// waits for one device flush instead of two journal commits. Opening the cache puts back a run's
/// file whose publish never took effect (a kill between the two, or a machine crash that lost the
/// rename). A removed run leaves the record before its file goes. The last received context
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
    /// The runs written since their files were last synced (`<cache>/.pending-runs`).
    private let pending: PendingFiles

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
        for directory in [root, "\(root)/Workouts", "\(root)/Splits"] {
            if let status = try? FileStatus(of: directory), status.kind != .directory {
                throw CacheLayoutError(description: "\(directory) is in the way of the cache: it is not a folder")
            }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try AtomicFile.sweepTemporaryFiles(in: directory)
        }
        pending = try PendingFiles(record: "\(root)/.pending-runs", root: root, spares: "\(root)/.spare-runs")
    }

    /// Reads the whole cache.
    package func load() throws -> Contents {
        var contents = Contents()
        if let damage = pending.damage { contents.skipped.append(("\(root)/.pending-runs", damage)) }
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
        try pending.write(DocumentCoder.encodeForDisk(run), at: relativePath(of: run.id))
    }

    /// Replaces the file of a run written since its last publish, without a sync (the record keeps it
    /// durable); a run with nothing new is left alone.
    package func publish(_ run: DocumentID) { pending.publish(relativePath(of: run)) }

    private func relativePath(of run: DocumentID) -> String { "Workouts/\(run).json" }

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
        try pending.remove(relativePath(of: id))
        try remove("\(workoutsDirectory)/\(id).json", in: workoutsDirectory)
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
