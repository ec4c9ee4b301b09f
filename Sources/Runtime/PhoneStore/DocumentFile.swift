import POSIX
import SyncEngine
import WorkoutModel

/// Reading one file of the layout and deciding whether it is a document this build can use.
///
/// The rules, checked in this order, are shared by the scan, the watcher and `loadWorkout`:
///
/// 1. Only document folders (`Splits/`, `Stubs/`, `Workouts/YYYY/MM/`) hold documents; a file
///    elsewhere is `unexpectedFile`.
/// 2. The name must be `<UUID>.json`, UUID in canonical upper case (`unexpectedName`).
/// 3. It must be a regular file of at most `maximumBytes` (`notARegularFile`, `tooLarge`).
/// 4. It must decode with `DocumentCoder` as the folder's kind (`undecodable`: not JSON, unknown
///    `schemaVersion`, a bad field, or another kind of document).
/// 5. The ID inside must equal the ID in the name (`idMismatch`).
/// 6. A run must sit in the folder of its `startedAt`'s UTC year and month (`misfiled`).
///
/// A run's companion `<UUID>.samples` in a month folder (its exported samples) is not a document
/// and not a stray: it is `companion`, passed over.
package enum DocumentFile {
    /// The largest file read as a document. A run of 100 exercises of 100 sets is about 1 MB, so
    /// anything past 16 MiB is not one of ours and is not read into memory.
    static let maximumBytes = 16 * 1024 * 1024

    package enum Outcome {
        case document(SyncEngine.ScannedDocument)
        case skipped(SkipReason)
        /// The file vanished before it could be read (a removal event follows, or already came).
        case missing
        /// A run's companion file (`<UUID>.samples`), not a document.
        case companion
    }

    /// Reads and checks the file `name` in `folder` of the layout rooted at `root`.
    package static func load(name: String, in folder: DocumentFolder, root: String) -> Outcome {
        load(name: name, in: folder, root: root) { _, _ in false } ?? .missing
    }

    /// `load`, except nil, the bytes not decoded, when `ownWrite` (given the path and the bytes read)
    /// says they are this process's own write.
    static func load(
        name: String, in folder: DocumentFolder, root: String, ownWrite: (String, [UInt8]) -> Bool
    ) -> Outcome? {
        guard let kind = folder.documentKind else { return .skipped(.unexpectedFile) }
        if kind == .workout, DocumentFolder.isSamplesFileName(name) { return .companion }
        guard let fileID = DocumentFolder.documentID(fromFileName: name) else { return .skipped(.unexpectedName) }
        let path = "\(root)/\(folder.relativePath(of: name))"
        switch FileSystem.readRegularFile(path, maximumBytes: maximumBytes) {
        case .missing: return .missing
        case .notARegularFile: return .skipped(.notARegularFile)
        case .tooLarge(let bytes): return .skipped(.tooLarge(bytes: bytes, maximumBytes: maximumBytes))
        case .failed(let error): return .skipped(.unreadable(error))
        case .bytes(let bytes):
            if ownWrite(path, bytes) { return nil }
            return decode(bytes, as: kind, fileID: fileID, in: folder)
        }
    }

    /// Applies rules 4–6 to bytes read from a file named `fileID` in `folder`.
    static func decode(
        _ bytes: [UInt8], as kind: DocumentKind, fileID: DocumentID, in folder: DocumentFolder
    ) -> Outcome {
        let document: SyncEngine.ScannedDocument
        let documentID: DocumentID
        do {
            switch kind {
            case .split:
                let split = try DocumentCoder.decode(SplitDocument.self, from: bytes)
                (document, documentID) = (.split(split), split.id)
            case .workout:
                let run = try DocumentCoder.decode(WorkoutDocument.self, from: bytes)
                (document, documentID) = (.workout(run), run.id)
            case .tombstone:
                let stub = try DocumentCoder.decode(Tombstone.self, from: bytes)
                (document, documentID) = (.tombstone(stub), stub.id)
            }
        } catch {
            return .skipped(.undecodable(error))
        }
        guard documentID == fileID else { return .skipped(.idMismatch(fileName: fileID, document: documentID)) }
        if case .workout(let run) = document {
            let home = DocumentFolder.month(of: run.startedAt)
            guard home == folder else { return .skipped(.misfiled(belongsIn: home.relativePath)) }
        }
        return .document(document)
    }
}
