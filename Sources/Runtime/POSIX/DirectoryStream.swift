import Glibc

/// A directory being listed one entry at a time, so a folder of 100,000 files is never held in memory.
///
/// Not `Sendable`: one thread lists it, and it closes itself when released.
package final class DirectoryStream {
    /// One entry (never `.` or `..`).
    package struct Entry {
        package let name: String
        fileprivate let type: UInt8
        fileprivate let directory: String

        /// What the entry is, from `d_type`, asking `lstat` on file systems that do not fill it in
        /// (an entry that vanished meanwhile reads as a file; opening it then reports it missing).
        package var kind: FileStatus.Kind {
            switch Int32(type) {
            case Int32(DT_DIR): return .directory
            case Int32(DT_REG): return .regularFile
            case Int32(DT_UNKNOWN):
                return (try? FileStatus(of: "\(directory)/\(name)", followingLinks: false))?.kind ?? .regularFile
            default: return .other
            }
        }
    }

    package let path: String
    private let stream: OpaquePointer

    /// Opens `path` for listing.
    package init(_ path: String) throws(SystemCallError) {
        guard let stream = opendir(path) else { throw .last("opendir", path: path) }
        self.path = path
        self.stream = stream
    }

    deinit {
        closedir(stream)
    }

    /// The descriptor of the open directory, for `FileStatus(ofEntry:inDirectory:)`; valid while
    /// this stream lives.
    package var descriptor: Int32 { dirfd(stream) }

    /// The next entry, or nil at the end. Entries appear in the file system's order.
    package func next() throws(SystemCallError) -> Entry? {
        while let entry = try nextRaw() {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            return Entry(name: name, type: entry.pointee.d_type, directory: path)
        }
        return nil
    }

    /// Every remaining entry's name, NUL-terminated and end to end in one buffer, with where each
    /// starts: a listing of a huge folder that makes no `String` per name.
    package func packedNames() throws(SystemCallError) -> (names: [CChar], starts: [Int]) {
        var names: [CChar] = []
        var starts: [Int] = []
        while let entry = try nextRaw() {
            withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let name = raw.prefix { $0 != 0 }
                guard
                    !name.elementsEqual([UInt8(ascii: ".")])
                        && !name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
                else { return }
                starts.append(names.count)
                names.append(contentsOf: name.map { CChar(bitPattern: $0) })
                names.append(0)
            }
        }
        return (names, starts)
    }

    /// `readdir(3)`, telling its end from its failure by `errno`.
    private func nextRaw() throws(SystemCallError) -> UnsafeMutablePointer<dirent>? {
        errno = 0
        guard let entry = readdir(stream) else {
            if errno != 0 { throw .last("readdir", path: path) }
            return nil
        }
        return entry
    }
}
