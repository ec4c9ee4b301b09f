import POSIX
import SyncEngine
import WorkoutModel

/// The watcher thread's state: the inotify instance, which folder each watch stands for, and what
/// each event means for the layout, reported to the owner.
///
/// Confined to one thread at a time (not `Sendable`): `DirectoryWatcher.init` sets up the initial
/// watches, then hands the session to the watcher thread, which alone uses it until it exits.
final class WatchSession {
    /// The owner's handlers, called on the watcher thread.
    struct Handlers: Sendable {
        var onChange: @Sendable (SyncEngine.ExternalChange) -> Void
        var onSkipped: @Sendable (SkippedEntry) -> Void
        var onNotice: @Sendable (WatcherNotice) -> Void
        var onSettled: @Sendable (String) -> Void
    }

    /// What each watch is for, on files in it and on itself.
    private static let watchMask: Inotify.Events = [
        .closeWrite, .movedTo, .movedFrom, .delete, .create, .deleteSelf, .moveSelf, .onlyDirectory,
    ]

    private let directory: DocumentDirectory
    private let inotify: Inotify
    private let handlers: Handlers
    /// The folder each watch descriptor stands for.
    private var folders: [Int32: DocumentFolder] = [:]

    init(directory: DocumentDirectory, inotify: Inotify, handlers: Handlers) {
        self.directory = directory
        self.inotify = inotify
        self.handlers = handlers
    }

    /// Watches the root, its three folders and every year and month folder that exists now (files are
    /// left to the owner's scan).
    func watchExistingFolders() throws(DocumentStoreError) {
        for folder in [DocumentFolder.root, .splits, .stubs, .workouts] { try watch(folder) }
        for year in try subfolders(of: .workouts) {
            try watch(year)
            for month in try subfolders(of: year) { try watch(month) }
        }
    }

    /// The read loop: handles inotify events in order until woken (the inotify descriptor is then
    /// closed) or reading fails.
    func run() {
        if let error = inotify.readEvents(handle) {
            handlers.onNotice(.stopped(.watchFailed(path: directory.root, error)))
        }
    }

    private func handle(_ event: Inotify.Event) {
        let (watch, events, name) = (event.watch, event.events, event.name)
        if events.contains(.queueOverflow) {
            // The rescan that follows reads every file: nothing may be passed over as phoned's own.
            directory.ownWrites.forgetAll()
            handlers.onNotice(.eventsLost)
            return
        }
        guard let folder = folders[watch] else { return }
        if events.contains(.ignored) {
            folders[watch] = nil
            return
        }
        if events.contains(.deleteSelf) {
            handlers.onNotice(.folderRemoved(path: folder.description))
            return
        }
        if events.contains(.moveSelf) {
            folderMoved(folder, watch: watch)
            return
        }
        guard !name.isEmpty else { return }
        if events.contains(.isDirectory) {
            if !events.isDisjoint(with: [.create, .movedTo]) {
                folderAppeared(named: name, in: folder)
            } else if !events.isDisjoint(with: [.delete, .movedFrom]) {
                // A folder gone: whatever was reported in it (or of it, a stray folder) is settled.
                handlers.onSettled(folder.relativePath(of: name))
            }
            return
        }
        guard !name.hasPrefix(".") else { return }
        if !events.isDisjoint(with: [.closeWrite, .movedTo]) {
            fileChanged(named: name, in: folder)
        } else if events.contains(.create) {
            entryCreated(named: name, in: folder)
        } else if !events.isDisjoint(with: [.delete, .movedFrom]) {
            fileRemoved(named: name, in: folder)
        }
    }

    /// Reads a file that was written or moved in and reports it as a change or as skipped.
    private func fileChanged(named name: String, in folder: DocumentFolder) {
        let path = folder.relativePath(of: name)
        let ownWrites = directory.ownWrites
        switch DocumentFile.load(name: name, in: folder, root: directory.root, ownWrite: ownWrites.matches) {
        case nil, .missing, .companion: handlers.onSettled(path)
        case .skipped(let reason): handlers.onSkipped(SkippedEntry(path: path, reason: reason))
        case .document(let document):
            handlers.onSettled(path)
            handlers.onChange(.documentChanged(document))
        }
    }

    /// A new entry that is not a folder: a regular file is reported when it is closed after writing
    /// (`IN_CLOSE_WRITE`); anything else — a symbolic link, a FIFO, a socket, a device — never will
    /// be, so it is reported as skipped now, as the scan would.
    private func entryCreated(named name: String, in folder: DocumentFolder) {
        let path = "\(directory.path(of: folder))/\(name)"
        guard let status = try? FileStatus(of: path, followingLinks: false), status.kind != .regularFile else { return }
        handlers.onSkipped(SkippedEntry(path: folder.relativePath(of: name), reason: .notARegularFile))
    }

    /// Reports a document file that was deleted or moved away (names that are not documents are ignored).
    private func fileRemoved(named name: String, in folder: DocumentFolder) {
        // Whatever comes at this path next is not phoned's last write.
        directory.ownWrites.forget("\(directory.root)/\(folder.relativePath(of: name))")
        handlers.onSettled(folder.relativePath(of: name))
        guard let kind = folder.documentKind, let id = DocumentFolder.documentID(fromFileName: name) else { return }
        switch kind {
        case .workout:
            guard case .month(let year, let month) = folder else { return }
            handlers.onChange(.workoutRemoved(id, year: year, month: month))
        case .split: handlers.onChange(.splitRemoved(id))
        case .tombstone: handlers.onNotice(.stubRemoved(path: folder.relativePath(of: name)))
        }
    }

    /// A folder appeared by `mkdir` or by being moved in: watch it if the layout has a place for it,
    /// then report what is already inside.
    private func folderAppeared(named name: String, in parent: DocumentFolder) {
        guard let folder = parent.child(named: name) else {
            handlers.onSkipped(SkippedEntry(path: parent.relativePath(of: name), reason: .unexpectedFolder))
            return
        }
        do throws(DocumentStoreError) {
            try watch(folder)
            let path = directory.path(of: folder)
            let stream: DirectoryStream
            do { stream = try DirectoryStream(path) } catch { throw DocumentStoreError.listFailed(path: path, error) }
            while true {
                let entry: DirectoryStream.Entry?
                do { entry = try stream.next() } catch { throw DocumentStoreError.listFailed(path: path, error) }
                guard let entry else { break }
                switch entry.kind {
                case .directory: folderAppeared(named: entry.name, in: folder)
                case .regularFile where !entry.name.hasPrefix("."): fileChanged(named: entry.name, in: folder)
                case .regularFile: break
                case .other:
                    handlers.onSkipped(
                        SkippedEntry(path: folder.relativePath(of: entry.name), reason: .notARegularFile))
                }
            }
        } catch {
            handlers.onNotice(.folderNotWatched(error))
        }
    }

    /// A watched folder was renamed or moved. Its watch follows the inode wherever it went, so it is
    /// dropped; if a layout folder still sits at the path, it is watched afresh (when it was moved in
    /// from elsewhere in the layout, `folderAppeared` has already listed it).
    private func folderMoved(_ folder: DocumentFolder, watch: Int32) {
        inotify.removeWatch(watch)
        folders[watch] = nil
        handlers.onNotice(.folderMoved(path: folder.description))
        guard (try? FileStatus(of: directory.path(of: folder)))?.kind == .directory else { return }
        do {
            try self.watch(folder)
        } catch {
            handlers.onNotice(.folderNotWatched(error))
        }
    }

    /// Adds (or refreshes) the watch on a layout folder.
    private func watch(_ folder: DocumentFolder) throws(DocumentStoreError) {
        let path = directory.path(of: folder)
        let watch: Int32
        do {
            watch = try inotify.addWatch(path, for: Self.watchMask)
        } catch {
            throw .watchFailed(path: path, error)
        }
        folders[watch] = folder
    }

    /// The layout subfolders of `folder` that exist now (strays are the scan's to report).
    private func subfolders(of folder: DocumentFolder) throws(DocumentStoreError) -> [DocumentFolder] {
        let path = directory.path(of: folder)
        var children: [DocumentFolder] = []
        do {
            let stream = try DirectoryStream(path)
            while let entry = try stream.next() {
                if entry.kind == .directory, let child = folder.child(named: entry.name) { children.append(child) }
            }
        } catch {
            throw .listFailed(path: path, error)
        }
        return children
    }
}
