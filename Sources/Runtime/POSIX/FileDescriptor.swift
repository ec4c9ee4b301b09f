import Glibc

/// An open file descriptor that closes itself when the last reference goes away.
///
/// A class rather than a struct so a group-commit leader can keep a segment's descriptor alive
/// while it runs `fdatasync` outside the lock, even if another thread rolls to a new segment
/// meanwhile. It is `Sendable` because its only state, `rawValue` and `path`, is immutable; the
/// kernel serialises concurrent calls on one descriptor.
package final class FileDescriptor: Sendable {
    /// The kernel's descriptor number.
    package let rawValue: Int32
    /// The path it was opened with, for error messages.
    package let path: String

    /// How to open a file: read-only unless `writeOnly` or `readWrite` is in the set.
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let writeOnly = Options(rawValue: O_WRONLY)
        package static let readWrite = Options(rawValue: O_RDWR)
        /// Create the file if it does not exist.
        package static let create = Options(rawValue: O_CREAT)
        /// With `create`: fail with `EEXIST` if it does.
        package static let exclusive = Options(rawValue: O_EXCL)
        /// Cut an existing file to length 0.
        package static let truncate = Options(rawValue: O_TRUNC)
        /// Every write goes to the end of the file.
        package static let append = Options(rawValue: O_APPEND)
        /// Fail unless `path` is a directory (to `sync` one).
        package static let directory = Options(rawValue: O_DIRECTORY)
        /// Fail with `ELOOP` if `path` is a symbolic link.
        package static let noFollow = Options(rawValue: O_NOFOLLOW)
        /// Do not block in `open` (a FIFO) or in reads and writes.
        package static let nonBlocking = Options(rawValue: O_NONBLOCK)
    }

    /// Opens `path` (close-on-exec always) with `options`, and `mode` for a created file.
    package init(opening path: String, _ options: Options = [], mode: UInt32 = 0o644) throws(SystemCallError) {
        let descriptor = open(path, options.rawValue | O_CLOEXEC, mode_t(mode))
        guard descriptor >= 0 else { throw .last("open", path: path) }
        self.rawValue = descriptor
        self.path = path
    }

    deinit {
        close(rawValue)
    }

    /// `flock(LOCK_EX | LOCK_NB)`: true when this descriptor now holds the file's exclusive lock,
    /// false when another open file description holds it (in this process or another). The lock
    /// goes with the descriptor's close, or the process's end however it ends.
    package func tryLockExclusively() throws(SystemCallError) -> Bool {
        while flock(rawValue, LOCK_EX | LOCK_NB) != 0 {
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw .last("flock", path: path)
            }
        }
        return true
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and `EINTR`.
    package func write(_ bytes: [UInt8], at offset: Int) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                pwrite(rawValue, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .last("pwrite", path: path)
            }
            written += result
        }
    }

    /// Reads up to `count` bytes at `offset`, retrying short reads and `EINTR`; fewer only at the end.
    package func read(count: Int, at offset: Int) throws(SystemCallError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(rawValue, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .last("pread", path: path)
            }
            if result == 0 { break }
            filled += result
        }
        return Array(bytes[0..<filled])
    }

    /// Reads the whole file from offset 0, however long it is.
    package func readAll() throws(SystemCallError) -> [UInt8] {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let result = chunk.withUnsafeMutableBytes { buffer in
                pread(rawValue, buffer.baseAddress!, buffer.count, off_t(contents.count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .last("pread", path: path)
            }
            if result == 0 { return contents }
            contents.append(contentsOf: chunk[0..<result])
        }
    }

    /// Flushes the file's data (and the metadata needed to read it back, such as its size) to disk.
    package func dataSync() throws(SystemCallError) {
        guard fdatasync(rawValue) == 0 else { throw .last("fdatasync", path: path) }
    }

    /// Writes the file's dirty pages to the device and waits for them (`sync_file_range`): not durable
    /// by itself (no metadata, no flush of the device's cache), but a later flush covers them.
    package func writeOutPages() throws(SystemCallError) {
        guard LinuxSystemCalls.writeOutPages(rawValue) == 0 else { throw .last("sync_file_range", path: path) }
    }

    /// Flushes the file's data and all its metadata to disk; the call to use on a directory.
    package func sync() throws(SystemCallError) {
        guard fsync(rawValue) == 0 else { throw .last("fsync", path: path) }
    }

    /// Cuts the file to `length` bytes.
    package func truncate(to length: Int) throws(SystemCallError) {
        guard ftruncate(rawValue, off_t(length)) == 0 else { throw .last("ftruncate", path: path) }
    }

    /// Reads on from the current offset with `read(2)` until the end, or until more than `limit`
    /// bytes have arrived (then returns them all, over the limit, so a device or a file growing
    /// without end is never slurped), `chunkBytes` at a time.
    package func readToEnd(limit: Int, chunkBytes: Int) throws(SystemCallError) -> [UInt8] {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkBytes)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(rawValue, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .last("read", path: path)
            }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[0..<count])
            if contents.count > limit { return contents }
        }
    }

    /// Writes all of `bytes` at the current offset (the end, with `append`), retrying short writes
    /// and `EINTR`.
    package func write(_ bytes: [UInt8]) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(rawValue, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .last("write", path: path)
            }
            written += result
        }
    }

    /// `fstat(2)`.
    package func status() throws(SystemCallError) -> FileStatus {
        var status = stat()
        guard fstat(rawValue, &status) == 0 else { throw .last("fstat", path: path) }
        return FileStatus(status)
    }
}
