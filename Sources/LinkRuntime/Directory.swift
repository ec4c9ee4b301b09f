import Glibc
import POSIX

/// Directory operations the durable files need: listing, syncing, creating and removing entries.
enum Directory {
    /// The names (not paths) of the entries in `path`, without `.` and `..`, in no particular order.
    static func entryNames(in path: String) throws -> [String] {
        guard let stream = opendir(path) else { throw SystemCallError.last("opendir", path: path) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemCallError.last("readdir", path: path) }
                return names
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Makes the directory's entries (creations, renames, removals) durable; timed in `LatencyRecorder.fsync`.
    static func sync(_ path: String) throws {
        let directory = try FileDescriptor(opening: path, flags: O_RDONLY | O_DIRECTORY)
        try LatencyRecorder.fsync.time { try directory.sync() }
    }

    /// Creates `path` (one level) if it does not exist yet; an existing directory is fine.
    static func create(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw SystemCallError.last("mkdir", path: path) }
    }

    /// Removes the file at `path`; the caller syncs the directory if the removal must be durable.
    static func removeFile(_ path: String) throws {
        guard unlink(path) == 0 else { throw SystemCallError.last("unlink", path: path) }
    }
}
