import Glibc

/// Linux system calls the Glibc module does not import (their headers need `_GNU_SOURCE`), looked
/// up once in the C library by name.
///
/// Both exist in every glibc the project supports (2.9+), so a failed lookup is a broken
/// installation, not a runtime condition.
package enum LinuxSystemCalls {
    private typealias Accept4 =
        @convention(c) (
            Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
        ) -> Int32
    private typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
    private typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32

    /// `EFD_NONBLOCK` from `<sys/eventfd.h>` (equal to `O_NONBLOCK`).
    package static let eventFDNonBlocking = O_NONBLOCK
    /// `EFD_CLOEXEC` from `<sys/eventfd.h>` (equal to `O_CLOEXEC`).
    package static let eventFDCloseOnExec = O_CLOEXEC

    private static let accept4Function: Accept4 = lookUp("accept4")
    private static let eventFDFunction: EventFD = lookUp("eventfd")
    private static let setThreadNameFunction: SetThreadName = lookUp("pthread_setname_np")

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

    private static func lookUp<Function>(_ symbol: String) -> Function {
        // The C library is always loaded, so the default namespace (RTLD_DEFAULT, a null handle) has it.
        guard let address = dlsym(nil, symbol) else {
            preconditionFailure("the C library has no \(symbol); Linux with glibc 2.9 or later is required")
        }
        return unsafeBitCast(address, to: Function.self)
    }
}
