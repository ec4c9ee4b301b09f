import Synchronization

/// The bytes phoned last wrote to each document path. The watcher hears of phoned's own writes like
/// anyone's; a file that holds exactly what phoned last wrote there is nothing new to the engine, so
/// it is not decoded (a run's decode was about a quarter of phoned's work on an edit's round trip).
/// One write can bring two events: a child process forked while the temporary file was open holds
/// it until its `exec`, and that close comes under the target's name. So a match keeps the entry;
/// anything else at the path (an external edit, a removal) drops it, and takes the full path.
/// Lost events, or more than `capacity` entries or `capacityBytes` bytes, forget them all: the full
/// path is always right.
package final class OwnWrites: Sendable {
    package static let capacity = 1_024
    package static let capacityBytes = 4 << 20
    private let written = Mutex<(entries: [String: [UInt8]], bytes: Int)>(([:], 0))

    package init() {}

    /// Notes `bytes` as about to be written to `path` (before the rename that makes them visible).
    package func note(_ bytes: [UInt8], at path: String) {
        // A copy of exactly their size: an encoding reserves about three times what it writes, and
        // holding that spare capacity made the budget a third of what the entries really took.
        let bytes = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
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
        written.withLock { written in
            guard let noted = written.entries.removeValue(forKey: path) else { return }
            written.bytes -= noted.count
        }
    }

    /// Forgets every entry (the watcher lost events).
    package func forgetAll() {
        written.withLock { $0 = ([:], 0) }
    }

    /// Whether `bytes`, just read from `path`, are what phoned last wrote there; when not, the entry
    /// is dropped.
    package func matches(_ path: String, _ bytes: [UInt8]) -> Bool {
        written.withLock { written in
            guard let noted = written.entries[path] else { return false }
            if noted == bytes { return true }
            written.entries[path] = nil
            written.bytes -= noted.count
            return false
        }
    }

    /// How many paths have an entry.
    package var count: Int { written.withLock { $0.entries.count } }

    /// The bytes the entries' storage takes (their capacity, not only their count).
    package var heldBytes: Int { written.withLock { $0.entries.values.reduce(0) { $0 + $1.capacity } } }
}
