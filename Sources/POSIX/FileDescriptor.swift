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

    /// Opens `path` with `flags` (`O_CLOEXEC` is always added) and `mode` for a created file.
    package init(opening path: String, flags: Int32, mode: mode_t = 0o644) throws {
        let descriptor = open(path, flags | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemCallError.last("open", path: path) }
        self.rawValue = descriptor
        self.path = path
    }

    deinit {
        close(rawValue)
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and `EINTR`.
    package func write(_ bytes: [UInt8], at offset: Int) throws {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                pwrite(rawValue, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemCallError.last("pwrite", path: path)
            }
            written += result
        }
    }

    /// Reads up to `count` bytes at `offset`, retrying short reads and `EINTR`; fewer only at the end.
    package func read(count: Int, at offset: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(rawValue, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemCallError.last("pread", path: path)
            }
            if result == 0 { break }
            filled += result
        }
        return Array(bytes[0..<filled])
    }

    /// Reads the whole file from offset 0, however long it is.
    package func readAll() throws -> [UInt8] {
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let result = chunk.withUnsafeMutableBytes { buffer in
                pread(rawValue, buffer.baseAddress!, buffer.count, off_t(contents.count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemCallError.last("pread", path: path)
            }
            if result == 0 { return contents }
            contents.append(contentsOf: chunk[0..<result])
        }
    }

    /// Flushes the file's data (and the metadata needed to read it back, such as its size) to disk.
    package func dataSync() throws {
        guard fdatasync(rawValue) == 0 else { throw SystemCallError.last("fdatasync", path: path) }
    }

    /// Flushes the file's data and all its metadata to disk; the call to use on a directory.
    package func sync() throws {
        guard fsync(rawValue) == 0 else { throw SystemCallError.last("fsync", path: path) }
    }

    /// Whether the descriptor is a regular file, and its size in bytes (`fstat`).
    package func status() throws -> (isRegularFile: Bool, size: Int) {
        var info = stat()
        guard fstat(rawValue, &info) == 0 else { throw SystemCallError.last("fstat", path: path) }
        return (info.st_mode & S_IFMT == S_IFREG, Int(info.st_size))
    }

    /// Cuts the file to `length` bytes.
    package func truncate(to length: Int) throws {
        guard ftruncate(rawValue, off_t(length)) == 0 else { throw SystemCallError.last("ftruncate", path: path) }
    }
}
