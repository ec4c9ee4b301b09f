import POSIX
import SyncEngine
import Synchronization
import WorkoutModel

/// Reports changes to the document directory as they happen (the phone's NSMetadataQuery deltas),
/// using inotify on a thread of its own.
///
/// It watches the root, `Splits/`, `Stubs/`, `Workouts/` and every year and month folder, and adds
/// a watch for each layout folder that appears later (a new month) — then lists that folder once,
/// so files that landed before its watch existed are reported too (possibly twice; the engine
/// ignores a document equal to its copy).
///
/// What it reports, through the owner's handlers, on the watcher thread:
/// - a file written and closed, or renamed into place (`IN_CLOSE_WRITE`, `IN_MOVED_TO`) is read and
///   decoded with the scan's rules: `onChange(.documentChanged(…))`, or `onSkipped` with the reason;
/// - a run or split file deleted or moved away: `onChange(.workoutRemoved(id, year:month:))` (the
///   folder it was in) / `.splitRemoved(id)`;
/// - an entry created that is not a regular file (a symbolic link, FIFO, socket or device):
///   `onSkipped` with `notARegularFile`;
/// - a path that now holds a usable document, or nothing: `onSettled(path)`, so the owner can forget
///   an entry it was told to skip there;
/// - a stub deleted: `onNotice(.stubRemoved)` only (tombstones are forever);
/// - names starting with `.` (our own temporary files, `.DS_Store`) are ignored.
///
/// It sees this process's own writes as well (an atomic write lands as `IN_MOVED_TO`); the engine
/// tells them apart by value, so they are reported like any other change.
///
/// The owner's handlers should hop onto its loop (`loop.execute { … }`) and return: the next event
/// waits for them. Start the watcher before the initial scan so nothing landing during the scan is
/// missed. Call `stop()` when done (releasing the watcher also stops it, so a handler must not hold
/// the last reference to it).
package final class DirectoryWatcher: Sendable {
    /// The inotify descriptor; closed by the watcher thread as it exits, before `stop()` returns.
    package var descriptor: Int32 { inotify.descriptor }
    private let inotify: Inotify
    /// The thread running the read loop; joined by `stop()`.
    private let thread: SystemThread
    /// Whether `stop()` has begun. A Mutex because `stop()` may be called from any thread (and from
    /// `deinit`); it is held across the join so every caller returns only once the thread is gone.
    /// Handlers never take it (`stop()` from a handler traps first), so the join cannot wait on them.
    private let stopped = Mutex(false)
    /// Cleared once the thread has been joined; an Atomic so `isRunning` never waits on a `stop()`.
    private let running = Atomic(true)

    /// Starts watching `directory`; every existing layout folder is watched when this returns.
    ///
    /// Throws when inotify cannot be set up or an existing folder cannot be watched or listed.
    package init(
        directory: DocumentDirectory,
        onChange: @escaping @Sendable (SyncEngine.ExternalChange) -> Void,
        onSkipped: @escaping @Sendable (SkippedEntry) -> Void,
        onNotice: @escaping @Sendable (WatcherNotice) -> Void = { _ in },
        onSettled: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(DocumentStoreError) {
        do {
            inotify = try Inotify()
        } catch {
            throw .watchFailed(path: directory.root, error)
        }
        let session = WatchSession(
            directory: directory, inotify: inotify,
            handlers: WatchSession.Handlers(
                onChange: onChange, onSkipped: onSkipped, onNotice: onNotice, onSettled: onSettled))
        try session.watchExistingFolders()
        // The session is handed to the thread whole: from here on only the watcher thread touches it.
        do {
            thread = try SystemThread.start { session.run() }
        } catch {
            throw .watchFailed(path: directory.root, error)
        }
    }

    deinit {
        stop()
    }

    /// Whether the watcher thread is running: true until `stop()` has joined it.
    package var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Stops watching: wakes the thread and waits for it to exit (it closes the inotify descriptor on
    /// its way out). No handler runs after this returns. Idempotent.
    ///
    /// Must not be called from one of the handlers: they run on the thread this joins.
    package func stop() {
        precondition(
            !thread.isCurrent,
            "DirectoryWatcher.stop() called from its own handler, which runs on the thread it would join")
        stopped.withLock { stopped in
            guard !stopped else { return }
            stopped = true
            inotify.wake()
            thread.join()
            running.store(false, ordering: .releasing)
        }
    }
}
