import Glibc

/// Operations on paths — renaming, removing, creating, listing, reading a regular file whole — each
/// failure reported as a `SystemCallError` naming the path.
package enum FileSystem {
    /// `rename(2)`: moves `source` over `target` atomically (same file system); errors name `target`.
    package static func rename(_ source: String, to target: String) throws(SystemCallError) {
        guard Glibc.rename(source, target) == 0 else { throw .last("rename", path: target) }
    }

    /// Gives the file at `source` a second name, `target` (same file system; a link is not followed).
    package static func link(_ source: String, to target: String) throws(SystemCallError) {
        guard Glibc.link(source, target) == 0 else { throw .last("link", path: target) }
    }

    /// Whether the file system holding `path` is mounted read-only (`statvfs`'s `ST_RDONLY`); false
    /// when it cannot be asked (a write will say why).
    package static func isReadOnly(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Unlinks the file at `path`; a missing file is an error too.
    package static func removeFile(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 else { throw .last("unlink", path: path) }
    }

    /// Unlinks the file at `path`; false when there was none.
    package static func removeFileIfPresent(_ path: String) throws(SystemCallError) -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw .last("unlink", path: path)
        }
        return true
    }

    /// Creates the directory `path` (one level); false when something already has that name, which
    /// may not be a directory.
    @discardableResult
    package static func createDirectory(_ path: String, mode: UInt32 = 0o755) throws(SystemCallError) -> Bool {
        guard mkdir(path, mode_t(mode)) == 0 else {
            if errno == EEXIST { return false }
            throw .last("mkdir", path: path)
        }
        return true
    }

    /// The names (not paths) of the entries in `path`, without `.` and `..`, in no particular order.
    package static func entryNames(in path: String) throws(SystemCallError) -> [String] {
        let stream = try DirectoryStream(path)
        var names: [String] = []
        while let entry = try stream.next() { names.append(entry.name) }
        return names
    }

    /// The outcome of `readRegularFile`.
    package enum RegularFileRead {
        case bytes([UInt8])
        /// There is no such file (it may have gone between being listed and being opened).
        case missing
        case notARegularFile
        case tooLarge(bytes: Int)
        case failed(SystemCallError)
    }

    /// Reads the regular file at `path` whole, refusing links, special files and anything over
    /// `maximumBytes` before reading it.
    ///
    /// `nonBlocking` keeps a FIFO dropped into a folder from blocking the open; `noFollow` keeps a
    /// symbolic link from pointing the read elsewhere.
    package static func readRegularFile(_ path: String, maximumBytes: Int) -> RegularFileRead {
        let file: FileDescriptor
        do {
            file = try FileDescriptor(opening: path, [.noFollow, .nonBlocking])
        } catch {
            switch error.errno {
            case ENOENT: return .missing
            case ELOOP: return .notARegularFile
            default: return .failed(error)
            }
        }
        do {
            let status = try file.status()
            guard status.kind == .regularFile else { return .notARegularFile }
            guard status.size <= maximumBytes else { return .tooLarge(bytes: status.size) }
            // One byte more than the size fstat reported, so a file that grew meanwhile is noticed.
            let contents = try file.readToEnd(limit: maximumBytes, chunkBytes: status.size + 1)
            return contents.count > maximumBytes ? .tooLarge(bytes: contents.count) : .bytes(contents)
        } catch {
            return .failed(error)
        }
    }
}
