import Glibc
import LinkRuntime
import POSIX

/// The handful of file-system calls the document directory needs beyond `AtomicFile`: listing a
/// folder one entry at a time, reading a document without following links, creating and removing.
///
/// All of them block; callers run them on their own threads, never on Swift's cooperative pool.
enum FileSystem {
    /// What an entry of a folder is, as far as the layout cares.
    enum EntryType: Equatable {
        case folder
        case regularFile
        /// A symbolic link, socket, FIFO or device.
        case other
    }

    /// The outcome of reading a would-be document.
    enum ReadOutcome {
        case bytes([UInt8])
        /// Gone between being listed (or announced) and being opened.
        case missing
        case notARegularFile
        case tooLarge(bytes: Int)
        case failed(SystemCallError)
    }

    /// Reads the regular file at `path` whole, refusing links, special files and anything over
    /// `maximumBytes` before reading it.
    ///
    /// `O_NONBLOCK` keeps a FIFO dropped into a folder from blocking the open; `O_NOFOLLOW` keeps a
    /// symbolic link from pointing the read outside the directory.
    static func read(_ path: String, maximumBytes: Int) -> ReadOutcome {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return .missing
            case ELOOP: return .notARegularFile
            default: return .failed(SystemCallError(call: "open", errno: errno, path: path))
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            return .failed(SystemCallError(call: "fstat", errno: errno, path: path))
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return .notARegularFile }
        let size = Int(status.st_size)
        guard size <= maximumBytes else { return .tooLarge(bytes: size) }
        // One byte more than the size fstat reported, so a file that grew meanwhile is noticed.
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: size + 1)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(SystemCallError(call: "read", errno: errno, path: path))
            }
            if count == 0 { return .bytes(contents) }
            contents.append(contentsOf: chunk[0..<count])
            if contents.count > maximumBytes { return .tooLarge(bytes: contents.count) }
        }
    }

    /// Creates the folder `path` inside `parent` and fsyncs `parent` so the new entry is durable; an
    /// existing folder is fine, anything else in its place is refused.
    static func createFolder(_ path: String, in parent: String) throws(DocumentStoreError) {
        if mkdir(path, 0o755) == 0 {
            do {
                try AtomicFile.fsyncDirectory(parent)
            } catch {
                throw .createFolderFailed(path: path, Self.systemCallError(error, call: "fsync", path: parent))
            }
            return
        }
        let failure = errno
        guard failure == EEXIST else {
            throw .createFolderFailed(path: path, SystemCallError(call: "mkdir", errno: failure, path: path))
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { throw .notAFolder(path: path) }
    }

    /// Unlinks the file at `path`; returns false when there was none. The caller syncs the folder.
    static func removeFile(_ path: String) throws(SystemCallError) -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw SystemCallError(call: "unlink", errno: errno, path: path)
        }
        return true
    }

    /// `AtomicFile` throws only `SystemCallError`; anything else is described in one, so callers can
    /// keep one error shape.
    static func systemCallError(_ error: any Error, call: String, path: String) -> SystemCallError {
        if let error = error as? SystemCallError { return error }
        return SystemCallError(call: "\(call) (\(error))", errno: EIO, path: path)
    }
}

/// A folder being listed one entry at a time, so a folder of 100,000 files is never held in memory.
///
/// Not `Sendable`: one thread lists it and it closes itself when released.
final class DirectoryStream {
    /// One entry (never `.` or `..`).
    struct Entry {
        var name: String
        var type: FileSystem.EntryType
    }

    let path: String
    private let stream: OpaquePointer

    /// Opens `path` for listing.
    init(_ path: String) throws(SystemCallError) {
        guard let stream = opendir(path) else { throw SystemCallError(call: "opendir", errno: errno, path: path) }
        self.path = path
        self.stream = stream
    }

    deinit {
        closedir(stream)
    }

    /// The next entry, or nil at the end. Entries appear in the file system's order.
    func next() throws(SystemCallError) -> Entry? {
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemCallError(call: "readdir", errno: errno, path: path) }
                return nil
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            return Entry(name: name, type: entryType(entry.pointee.d_type, name: name))
        }
    }

    /// The entry's type from `d_type`, asking `lstat` on file systems that do not fill it in.
    private func entryType(_ code: UInt8, name: String) -> FileSystem.EntryType {
        switch Int32(code) {
        case Int32(DT_DIR): return .folder
        case Int32(DT_REG): return .regularFile
        case Int32(DT_UNKNOWN):
            var status = stat()
            // An entry that vanished meanwhile reads as a file; opening it then reports it missing.
            guard lstat("\(path)/\(name)", &status) == 0 else { return .regularFile }
            switch status.st_mode & S_IFMT {
            case S_IFDIR: return .folder
            case S_IFREG: return .regularFile
            default: return .other
            }
        default: return .other
        }
    }
}
