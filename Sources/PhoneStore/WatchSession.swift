import Glibc
import LinkRuntime
import POSIX
import SyncEngine
import WorkoutModel

/// The watcher thread's state: the inotify descriptor, which folder each watch stands for, and the
/// read loop that turns inotify events into the owner's reports.
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
    private static let watchMask = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ONLYDIR)
    /// Room for many events per read; one event is 16 bytes plus a name of at most 256.
    private static let bufferBytes = 64 * 1024

    private let directory: DocumentDirectory
    private let descriptor: Int32
    private let wakeReceiver: Int32
    private let handlers: Handlers
    /// The folder each watch descriptor stands for.
    private var folders: [Int32: DocumentFolder] = [:]
    private let buffer: UnsafeMutableRawBufferPointer

    init(directory: DocumentDirectory, descriptor: Int32, wakeReceiver: Int32, handlers: Handlers) {
        self.directory = directory
        self.descriptor = descriptor
        self.wakeReceiver = wakeReceiver
        self.handlers = handlers
        buffer = .allocate(byteCount: Self.bufferBytes, alignment: MemoryLayout<inotify_event>.alignment)
    }

    deinit {
        buffer.deallocate()
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

    /// The read loop: waits for inotify events or the wake-up, handles events in order, and closes the
    /// inotify descriptor when woken.
    func run() {
        defer { close(descriptor) }
        var polled = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReceiver, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            polled[0].revents = 0
            polled[1].revents = 0
            guard poll(&polled, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                let error = SystemCallError(call: "poll", errno: errno)
                handlers.onNotice(.stopped(.watchFailed(path: directory.root, error)))
                return
            }
            if polled[1].revents != 0 { return }
            if polled[0].revents != 0 && !drainEvents() { return }
        }
    }

    /// Reads and handles every queued event; false when reading failed and the loop must end.
    private func drainEvents() -> Bool {
        while true {
            let count = read(descriptor, buffer.baseAddress!, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return true }
                let error = SystemCallError(call: "read (inotify)", errno: errno)
                handlers.onNotice(.stopped(.watchFailed(path: directory.root, error)))
                return false
            }
            var offset = 0
            // The kernel writes whole events only: a header, then `len` bytes of NUL-padded name.
            while offset + 16 <= count {
                let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + 16)..<(offset + 16 + nameLength)])
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                handle(watch: watch, mask: mask, name: name)
                offset += 16 + nameLength
            }
        }
    }

    private func handle(watch: Int32, mask: UInt32, name: String) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            handlers.onNotice(.eventsLost)
            return
        }
        guard let folder = folders[watch] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            folders[watch] = nil
            return
        }
        if mask & UInt32(IN_DELETE_SELF) != 0 {
            handlers.onNotice(.folderRemoved(path: folder.description))
            return
        }
        if mask & UInt32(IN_MOVE_SELF) != 0 {
            folderMoved(folder, watch: watch)
            return
        }
        guard !name.isEmpty else { return }
        if mask & UInt32(IN_ISDIR) != 0 {
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { folderAppeared(named: name, in: folder) }
            return
        }
        guard !name.hasPrefix(".") else { return }
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
            fileChanged(named: name, in: folder)
        } else if mask & UInt32(IN_CREATE) != 0 {
            entryCreated(named: name, in: folder)
        } else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
            fileRemoved(named: name, in: folder)
        }
    }

    /// Reads a file that was written or moved in and reports it as a change or as skipped.
    private func fileChanged(named name: String, in folder: DocumentFolder) {
        let path = folder.relativePath(of: name)
        switch DocumentFile.load(name: name, in: folder, root: directory.root) {
        case .missing, .companion: handlers.onSettled(path)
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
        var status = stat()
        let path = "\(directory.path(of: folder))/\(name)"
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG else { return }
        handlers.onSkipped(SkippedEntry(path: folder.relativePath(of: name), reason: .notARegularFile))
    }

    /// Reports a document file that was deleted or moved away (names that are not documents are ignored).
    private func fileRemoved(named name: String, in folder: DocumentFolder) {
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
                switch entry.type {
                case .folder: folderAppeared(named: entry.name, in: folder)
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
        inotify_rm_watch(descriptor, watch)
        folders[watch] = nil
        handlers.onNotice(.folderMoved(path: folder.description))
        var status = stat()
        let path = directory.path(of: folder)
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return }
        do {
            try self.watch(folder)
        } catch {
            handlers.onNotice(.folderNotWatched(error))
        }
    }

    /// Adds (or refreshes) the watch on a layout folder.
    private func watch(_ folder: DocumentFolder) throws(DocumentStoreError) {
        let path = directory.path(of: folder)
        let watch = inotify_add_watch(descriptor, path, Self.watchMask)
        guard watch >= 0 else {
            throw .watchFailed(path: path, SystemCallError(call: "inotify_add_watch", errno: errno))
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
                if entry.type == .folder, let child = folder.child(named: entry.name) { children.append(child) }
            }
        } catch {
            throw .listFailed(path: path, error)
        }
        return children
    }
}
