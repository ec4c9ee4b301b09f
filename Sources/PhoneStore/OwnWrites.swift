import Synchronization

/// The bytes phoned last wrote to each document path whose watcher event has not come yet. The
/// watcher hears of phoned's own writes like anyone's; a file that holds exactly what phoned wrote
/// is nothing new to the engine, so it is not decoded (a run's decode was about a quarter of
/// phoned's work on an edit's round trip). Anything else, an external edit or a later write, takes
/// the full path. Each event takes its path's entry, matched or not (a removal too), so an entry
/// lives at most until the next event on its path; lost events, or more than `capacity` entries,
/// forget them all.
final class OwnWrites: Sendable {
    static let capacity = 4_096
    private let written = Mutex<[String: [UInt8]]>([:])

    /// Notes `bytes` as about to be written to `path` (before the rename that makes them visible).
    func note(_ bytes: [UInt8], at path: String) {
        written.withLock { written in
            if written.count >= Self.capacity { written.removeAll() }
            written[path] = bytes
        }
    }

    /// Forgets `path`'s entry: its write failed, or the file went away.
    func forget(_ path: String) {
        _ = written.withLock { $0.removeValue(forKey: path) }
    }

    /// Forgets every entry (the watcher lost events).
    func forgetAll() {
        written.withLock { $0.removeAll() }
    }

    /// Whether `bytes`, just read from `path`, are what phoned last wrote there; takes the entry.
    func take(_ path: String, matching bytes: [UInt8]) -> Bool {
        written.withLock { $0.removeValue(forKey: path) } == bytes
    }
}
