import Glibc

/// A regular file mapped read-only into memory, unmapped when the last reference goes away.
///
/// Its pages are read from the page cache as they are touched and count in the process's RSS only
/// while mapped in; `releaseResidentPages` lets go of them. The file must not be shortened while it
/// is mapped (reading past its new end raises `SIGBUS`): files replaced by rename, as `AtomicFile`
/// does, are safe, since the mapping keeps the old inode.
package final class MappedFile: @unchecked Sendable {
    // Unchecked: the mapping is read-only and its address and length never change.
    package let bytes: UnsafeRawBufferPointer

    /// What `init` found instead of a regular file to map.
    package enum Failure: Error, Sendable {
        case missing
        case notARegularFile
        case tooLarge(bytes: Int)
        case failed(SystemCallError)
    }

    /// Maps `path` (not following a symbolic link); an empty file maps to no bytes.
    package init(path: String, maximumBytes: Int) throws(Failure) {
        let file: FileDescriptor
        do {
            file = try FileDescriptor(opening: path, [.noFollow, .nonBlocking])
        } catch {
            switch error.errno {
            case ENOENT: throw .missing
            case ELOOP: throw .notARegularFile
            default: throw .failed(error)
            }
        }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            throw .failed(error)
        }
        guard status.kind == .regularFile else { throw .notARegularFile }
        let size = status.size
        guard size <= maximumBytes else { throw .tooLarge(bytes: size) }
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, file.rawValue, 0), address != MAP_FAILED else {
            throw .failed(.last("mmap", path: path))
        }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// Drops the pages touched so far from this process (`MADV_DONTNEED`); they are read again from
    /// the page cache when next touched.
    package func releaseResidentPages() {
        guard let base = bytes.baseAddress else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, MADV_DONTNEED)
    }
}
