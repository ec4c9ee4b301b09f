import Synchronization

/// The bytes phoned last wrote to each document path whose watcher event has not come yet. The
/// watcher hears of phoned's own writes like anyone's; a file that holds exactly what phoned wrote
/// is nothing new to the engine, so it is not decoded (a run's decode was about a quarter of
/// phoned's work on an edit's round trip). Anything else, an external edit or a later write, takes
/// the full path. Each event takes its path's entry, matched or not (a removal too), so an entry
/// lives at most until the next event on its path. Lost events, or more than `capacity` entries or
/// `capacityBytes` bytes (the watcher stopped), forget them all: the full path is always right.
package final class OwnWrites: Sendable {
    package static let capacity = 4_096
    package static let capacityBytes = 16 << 20
    private let written = Mutex<(entries: [String: [UInt8]], bytes: Int)>(([:], 0))

    package init() {}

    /// Notes `bytes` as about to be written to `path` (before the rename that makes them visible).
    package func note(_ bytes: [UInt8], at path: String) {
        written.withLock { written in
            written.bytes -= written.entries[path]?.count ?? 0
            if written.entries.count >= Self.capacity || written.bytes + bytes.count > Self.capacityBytes {
                written = ([:], 0)
            }
            written.entries[path] = bytes
            written.bytes += bytes.count
        }
    }

    /// Forgets `path`'s entry: its write failed, or the file went away.
    package func forget(_ path: String) {
        _ = take(path)
    }

    /// Forgets every entry (the watcher lost events).
    package func forgetAll() {
        written.withLock { $0 = ([:], 0) }
    }

    /// Whether `bytes`, just read from `path`, are what phoned last wrote there; takes the entry.
    package func take(_ path: String, matching bytes: [UInt8]) -> Bool {
        take(path) == bytes
    }

    /// How many entries wait for their event.
    package var count: Int { written.withLock { $0.entries.count } }

    private func take(_ path: String) -> [UInt8]? {
        written.withLock { written in
            guard let bytes = written.entries.removeValue(forKey: path) else { return nil }
            written.bytes -= bytes.count
            return bytes
        }
    }
}
