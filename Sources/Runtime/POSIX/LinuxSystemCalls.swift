import Glibc

/// Linux system calls the Glibc module does not import (their headers need `_GNU_SOURCE`), looked
/// up once in the C library by name.
///
/// Each exists in every glibc the project supports (2.9+; the two `posix_spawn_file_actions_*_np`
/// need 2.34, and Debian 12 ships 2.36), so a failed lookup is a broken installation, not a runtime
/// condition.
package enum LinuxSystemCalls {
    private typealias Accept4 =
        @convention(c) (
            Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
        ) -> Int32
    private typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
    private typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32

    /// `EFD_NONBLOCK` from `<sys/eventfd.h>` (equal to `O_NONBLOCK`).
    package static let eventFDNonBlocking = O_NONBLOCK
    /// `EFD_CLOEXEC` from `<sys/eventfd.h>` (equal to `O_CLOEXEC`).
    package static let eventFDCloseOnExec = O_CLOEXEC

    private static let accept4Function: Accept4 = lookUp("accept4")
    private static let eventFDFunction: EventFD = lookUp("eventfd")
    private static let setThreadNameFunction: SetThreadName = lookUp("pthread_setname_np")
    private static let pipe2Function: Pipe2 = lookUp("pipe2")
    private static let addChangeDirectoryFunction: AddChangeDirectory = lookUp("posix_spawn_file_actions_addchdir_np")
    private static let addCloseFromFunction: AddCloseFrom = lookUp("posix_spawn_file_actions_addclosefrom_np")
    private static let syncFileRangeFunction: SyncFileRange = lookUp("sync_file_range")

    /// `accept4(2)`: accepts with flags such as `SOCK_NONBLOCK | SOCK_CLOEXEC` applied atomically, so
    /// a process spawned concurrently never inherits the new descriptor.
    package static func accept4(_ descriptor: Int32, flags: Int32) -> Int32 {
        accept4Function(descriptor, nil, nil, flags)
    }

    /// `eventfd(2)`: a counter descriptor another thread can write to in order to wake `poll`.
    package static func eventfd(initialValue: UInt32, flags: Int32) -> Int32 {
        eventFDFunction(initialValue, flags)
    }

    /// Names the calling thread (visible in `top -H`, debuggers and /proc), truncated to the
    /// kernel's 15 bytes.
    package static func setThreadName(_ name: String) {
        let bytes = name.utf8.prefix(15).map { CChar(bitPattern: $0) } + [0]
        _ = setThreadNameFunction(pthread_self(), bytes)
    }

    /// `pipe2(2)`: a pipe whose two ends get `flags` such as `O_CLOEXEC` atomically, so a process
    /// spawned concurrently never inherits either end. Returns `(read, write)`, or nil with `errno` set.
    package static func pipe2(flags: Int32) -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe2Function(&ends, flags) == 0 else { return nil }
        return (ends[0], ends[1])
    }

    /// `posix_spawn_file_actions_addchdir_np(3)`: the spawned child changes to `directory` before it
    /// runs (after the file actions added before this one). Returns 0 or an error number.
    package static func addChangeDirectory(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ directory: String
    ) -> Int32 {
        addChangeDirectoryFunction(actions, directory)
    }

    /// `posix_spawn_file_actions_addclosefrom_np(3)`: the spawned child closes every descriptor from
    /// `lowest` up, close-on-exec or not. Returns 0 or an error number.
    package static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32)
        -> Int32
    {
        addCloseFromFunction(actions, lowest)
    }

    /// `sync_file_range(2)` over the whole file with `SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER`:
    /// its dirty pages are written to the device and waited for. Not durable by itself (no metadata,
    /// no flush of the device's cache). Returns 0, or -1 with `errno` set.
    package static func writeOutPages(_ descriptor: Int32) -> Int32 {
        syncFileRangeFunction(descriptor, 0, 0, 1 | 2 | 4)
    }

    private static func lookUp<Function>(_ symbol: String) -> Function {
        // The C library is always loaded, so the default namespace (RTLD_DEFAULT, a null handle) has it.
        guard let address = dlsym(nil, symbol) else {
            preconditionFailure("the C library has no \(symbol); Linux with glibc 2.9 or later is required")
        }
        return unsafeBitCast(address, to: Function.self)
    }
}
