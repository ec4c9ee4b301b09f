import Glibc
import Synchronization

/// An inotify instance and the wake-up that ends its read loop: set watches, run `readEvents` on a
/// thread of its own, and `wake()` it from any thread to make it return.
///
/// The inotify descriptor is closed when `readEvents` returns (or, if it never ran, with the
/// instance); the wake-up sockets with the instance.
package final class Inotify: Sendable {
    /// What a watch reports, and what an event says happened.
    package struct Events: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        package static let closeWrite = Events(rawValue: UInt32(IN_CLOSE_WRITE))
        package static let movedTo = Events(rawValue: UInt32(IN_MOVED_TO))
        package static let movedFrom = Events(rawValue: UInt32(IN_MOVED_FROM))
        package static let delete = Events(rawValue: UInt32(IN_DELETE))
        package static let create = Events(rawValue: UInt32(IN_CREATE))
        package static let deleteSelf = Events(rawValue: UInt32(IN_DELETE_SELF))
        package static let moveSelf = Events(rawValue: UInt32(IN_MOVE_SELF))
        /// When watching: refuse a path that is not a directory.
        package static let onlyDirectory = Events(rawValue: UInt32(IN_ONLYDIR))
        /// The kernel's queue overflowed and events were lost.
        package static let queueOverflow = Events(rawValue: UInt32(IN_Q_OVERFLOW))
        /// The watch is gone (removed, or its directory deleted).
        package static let ignored = Events(rawValue: UInt32(IN_IGNORED))
        /// The entry the event is about is a directory.
        package static let isDirectory = Events(rawValue: UInt32(IN_ISDIR))
    }

    /// One event: the watch it came through, what happened, and the entry's name (empty when the
    /// event is about the watched directory itself).
    package struct Event {
        package let watch: Int32
        package let events: Events
        package let name: String
    }

    /// Room for many events per read; one event is 16 bytes plus a name of at most 256.
    private static let bufferBytes = 64 * 1024

    /// The inotify descriptor.
    package let descriptor: Int32
    private let wakeSender: Int32
    private let wakeReceiver: Int32
    /// Whether `descriptor` has been closed (by `readEvents` on its way out).
    private let descriptorClosed = Atomic(false)

    /// A non-blocking, close-on-exec inotify instance with no watches yet.
    package init() throws(SystemCallError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw .last("inotify_init1") }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            let failure = SystemCallError.last("socketpair")
            close(descriptor)
            throw failure
        }
        self.descriptor = descriptor
        wakeReceiver = pair[0]
        wakeSender = pair[1]
    }

    deinit {
        closeDescriptor()
        close(wakeSender)
        close(wakeReceiver)
    }

    /// Adds (or refreshes) a watch on `path`; returns its number, which events carry.
    package func addWatch(_ path: String, for events: Events) throws(SystemCallError) -> Int32 {
        let watch = inotify_add_watch(descriptor, path, events.rawValue)
        guard watch >= 0 else { throw .last("inotify_add_watch") }
        return watch
    }

    /// Removes a watch; the kernel then reports it `ignored`.
    package func removeWatch(_ watch: Int32) {
        inotify_rm_watch(descriptor, watch)
    }

    /// Waits for events and hands each to `handle`, in order, until `wake()` is called (returns nil)
    /// or polling or reading fails (returns the error). Closes the inotify descriptor as it returns.
    package func readEvents(_ handle: (Event) -> Void) -> SystemCallError? {
        defer { closeDescriptor() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Self.bufferBytes, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        var polled = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReceiver, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            polled[0].revents = 0
            polled[1].revents = 0
            guard poll(&polled, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                return .last("poll")
            }
            if polled[1].revents != 0 { return nil }
            if polled[0].revents != 0, let failure = drain(buffer, handle) { return failure }
        }
    }

    /// Makes `readEvents` return; callable from any thread, more than once.
    package func wake() {
        var byte: UInt8 = 1
        while write(wakeSender, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Reads and handles every queued event; the error when reading failed.
    private func drain(_ buffer: UnsafeMutableRawBufferPointer, _ handle: (Event) -> Void) -> SystemCallError? {
        while true {
            let count = read(descriptor, buffer.baseAddress!, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
                return .last("read (inotify)")
            }
            var offset = 0
            // The kernel writes whole events only: a header, then `len` bytes of NUL-padded name.
            while offset + 16 <= count {
                let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + 16)..<(offset + 16 + nameLength)])
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                handle(Event(watch: watch, events: Events(rawValue: mask), name: name))
                offset += 16 + nameLength
            }
        }
    }

    private func closeDescriptor() {
        guard !descriptorClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(descriptor)
    }
}
