import POSIX
import WorkoutModel

/// A file or folder in the document directory that the scan or the watcher left alone, and why.
///
/// Skipped entries are reported, never deleted and never fatal: the directory is the person's, and a
/// file this build cannot read may be one a newer build wrote.
package struct SkippedEntry: Equatable, Sendable, CustomStringConvertible {
    /// The entry's path relative to the document root, e.g. `Workouts/2026/01/notes.txt`.
    package var path: String
    package var reason: SkipReason

    package init(path: String, reason: SkipReason) {
        self.path = path
        self.reason = reason
    }

    package var description: String { "\(path): \(reason)" }
}

/// Why an entry of the document directory is not used.
package enum SkipReason: Equatable, Sendable, CustomStringConvertible {
    /// A file in a folder that holds only folders (the root, `Workouts/`, a year folder).
    case unexpectedFile
    /// A file in a document folder whose name is not `<UUID>.json` with the ID in upper case.
    case unexpectedName
    /// A folder the layout has no place for; it is not looked into.
    case unexpectedFolder
    /// A symbolic link, socket, FIFO or device: never followed or opened for reading.
    case notARegularFile
    /// Larger than any document this build writes; not read into memory.
    case tooLarge(bytes: Int, maximumBytes: Int)
    /// Opening or reading it failed.
    case unreadable(SystemCallError)
    /// Not JSON, an unknown `schemaVersion`, a missing or invalid field, or a document of another
    /// kind than its folder holds (a tombstone in `Splits/` fails to decode as a split).
    case undecodable(DocumentError)
    /// The ID in the file name differs from the ID inside: the writer derives paths from IDs, so it
    /// could neither replace nor remove this file.
    case idMismatch(fileName: DocumentID, document: DocumentID)
    /// A run in another month's folder than its `startedAt` (UTC) names; `belongsIn` is the folder it
    /// would be written to. Skipped for the same reason as an ID mismatch, and because accepting it
    /// would leave two files for one run once the writer saved it.
    case misfiled(belongsIn: String)
    /// Skipped, for `reason`, when the run index was recorded, in a month folder that has not changed
    /// since (so the file was not read again).
    case recorded(String)

    package var description: String {
        switch self {
        case .unexpectedFile:
            return "not part of the layout (documents live in Splits/, Stubs/ and Workouts/YYYY/MM/)"
        case .unexpectedName: return "file name is not <UUID>.json with the UUID in upper case"
        case .unexpectedFolder: return "folder is not part of the layout (Splits/, Stubs/, Workouts/YYYY/MM/)"
        case .notARegularFile: return "not a regular file (links, sockets, FIFOs and devices are not followed)"
        case .tooLarge(let bytes, let maximum): return "\(bytes) bytes is larger than a document can be (\(maximum))"
        case .unreadable(let error): return "unreadable: \(error)"
        case .undecodable(let error): return error.description
        case .idMismatch(let fileName, let document):
            return "file name says \(fileName) but the document's id is \(document)"
        case .misfiled(let belongsIn): return "run belongs in \(belongsIn)/ (the UTC year and month of its startedAt)"
        case .recorded(let reason): return reason
        }
    }
}
