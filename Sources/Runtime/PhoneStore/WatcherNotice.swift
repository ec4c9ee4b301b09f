/// Something the watcher saw that is neither a document change nor a skipped file; the owner logs
/// it, and for `folderMoved` and `eventsLost` rescans, because changes may have gone unreported.
package enum WatcherNotice: Equatable, Sendable, CustomStringConvertible {
    /// A tombstone file vanished. Ignored: tombstones are forever, and the engine keeps its copy.
    case stubRemoved(path: String)
    /// A watched folder was deleted; its files were reported removed one by one before it went.
    case folderRemoved(path: String)
    /// A watched folder was renamed or moved away. Its files were **not** reported removed (the
    /// kernel sends no per-file events for a folder move): rescan to catch up.
    case folderMoved(path: String)
    /// The kernel's event queue overflowed and events were dropped: rescan to catch up.
    case eventsLost
    /// A folder that appeared could not be watched or listed (e.g. `fs.inotify.max_user_watches`
    /// reached); changes in it go unreported until a restart.
    case folderNotWatched(DocumentStoreError)
    /// Waiting for events failed; the watcher thread has ended.
    case stopped(DocumentStoreError)

    package var description: String {
        switch self {
        case .stubRemoved(let path): return "\(path) removed; ignored (tombstones are kept forever)"
        case .folderRemoved(let path): return "folder \(path) removed"
        case .folderMoved(let path): return "folder \(path) was moved; changes in it may be missed until a rescan"
        case .eventsLost: return "inotify event queue overflowed; changes may be missed until a rescan"
        case .folderNotWatched(let error): return "changes will be missed: \(error)"
        case .stopped(let error): return "the watcher stopped: \(error)"
        }
    }
}

extension WatcherNotice {
    /// Whether the watcher may have missed changes, so the directory must be scanned again.
    package var needsRescan: Bool {
        switch self {
        case .folderMoved, .eventsLost: true
        default: false
        }
    }
}
