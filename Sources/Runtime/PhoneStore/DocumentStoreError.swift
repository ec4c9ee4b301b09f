import POSIX
import WorkoutModel

/// Why an operation on the document directory failed; every case names the file or folder.
///
/// Paths are absolute, as the operation used them, so a log line can be acted on directly:
/// `cannot write /home/a/Documents/Splits/3F25….json: open(…) failed: No space left on device (errno 28)`.
package enum DocumentStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A folder of the layout could not be created.
    case createFolderFailed(path: String, SystemCallError)
    /// Something that is not a folder sits where the layout needs one.
    case notAFolder(path: String)
    /// A folder could not be listed.
    case listFailed(path: String, SystemCallError)
    /// An atomic write (temp file, fsync, rename, fsync of the folder) failed.
    case writeFailed(path: String, SystemCallError)
    /// Unlinking a document, or making its removal durable, failed.
    case removeFailed(path: String, SystemCallError)
    /// There is no document at `path`.
    case notFound(path: String)
    /// The file exists but is not a document this layout accepts there (see `SkipReason`).
    case unusable(path: String, SkipReason)
    /// Setting up inotify, or watching a folder, failed.
    case watchFailed(path: String, SystemCallError)
    /// The epoch file exists but cannot be read as one (`DocumentDirectory.readEpoch`).
    case unreadable(path: String, reason: String)

    package var description: String {
        switch self {
        case .createFolderFailed(let path, let error): return "cannot create folder \(path): \(error)"
        case .notAFolder(let path): return "\(path) is in the way of the document layout: it is not a folder"
        case .listFailed(let path, let error): return "cannot list folder \(path): \(error)"
        case .writeFailed(let path, let error): return "cannot write \(path): \(error)"
        case .removeFailed(let path, let error): return "cannot remove \(path): \(error)"
        case .notFound(let path): return "no document at \(path)"
        case .unusable(let path, let reason): return "cannot use \(path): \(reason)"
        case .watchFailed(let path, let error): return "cannot watch \(path) for changes: \(error)"
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        }
    }
}
