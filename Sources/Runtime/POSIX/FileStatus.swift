import Glibc

/// What `stat` says about a file: the fields the stores read, in Swift types.
package struct FileStatus: Sendable, Equatable {
    /// What an entry is, as far as the stores care.
    package enum Kind: Sendable, Equatable {
        case directory
        case regularFile
        /// A symbolic link (when not followed), socket, FIFO or device.
        case other
    }

    package let kind: Kind
    /// `st_mode` whole: type and permission bits.
    package let mode: UInt32
    /// The permission bits alone (`mode & 0o777`).
    package var permissions: UInt32 { mode & 0o777 }
    package let size: Int
    package let inode: UInt64
    /// How many names the file has (`st_nlink`).
    package let linkCount: Int
    /// The device the file is on (`st_dev`): two paths can be renamed or linked into each other only
    /// on the same one.
    package let device: UInt64
    /// Last modification, in nanoseconds since the Unix epoch.
    package let modificationNanoseconds: Int64
    /// Last status change, in nanoseconds since the Unix epoch.
    package let changeNanoseconds: Int64

    init(_ status: stat) {
        switch status.st_mode & S_IFMT {
        case S_IFDIR: kind = .directory
        case S_IFREG: kind = .regularFile
        default: kind = .other
        }
        mode = UInt32(status.st_mode)
        size = Int(status.st_size)
        inode = UInt64(status.st_ino)
        linkCount = Int(status.st_nlink)
        device = UInt64(status.st_dev)
        modificationNanoseconds = Int64(status.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_mtim.tv_nsec)
        changeNanoseconds = Int64(status.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_ctim.tv_nsec)
    }

    /// `stat(2)` of `path`, or with `followingLinks` false `lstat(2)` (a link is then `.other`).
    package init(of path: String, followingLinks: Bool = true) throws(SystemCallError) {
        var status = stat()
        let result = followingLinks ? stat(path, &status) : lstat(path, &status)
        guard result == 0 else { throw .last(followingLinks ? "stat" : "lstat", path: path) }
        self.init(status)
    }

    /// `fstatat(2)` of the entry `name` of the open directory `directory`, not following a link;
    /// nil when it cannot be had (the entry is gone since it was listed, say). Safe on any thread.
    package init?(ofEntry name: UnsafePointer<CChar>, inDirectory directory: Int32) {
        var status = stat()
        guard fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        self.init(status)
    }
}
