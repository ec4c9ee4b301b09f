import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the kernel for a TCP port that is free on 127.0.0.1 right now.
///
/// Prefer letting a daemon bind port 0 and announce the port it got; this is for the few tests that
/// must name a port before anything listens (a proxy's upstream, a config file written in advance).
package func freeLoopbackPort() throws -> UInt16 {
    let (fd, port) = try boundLoopbackSocket()
    close(fd)
    return port
}

/// A loopback port held bound and never listened on: a connection to it is refused for as long as
/// this lives. (A port merely found free may be taken by a test running alongside before it is
/// dialled, and then it answers.)
package final class RefusingPort: Sendable {
    package let port: UInt16
    private let fd: Int32

    package init() throws { (fd, port) = try boundLoopbackSocket() }

    deinit { close(fd) }
}

/// A TCP socket bound to a port the kernel chose on 127.0.0.1, and that port.
private func boundLoopbackSocket() throws -> (Int32, UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named =
        bound == 0
        ? withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        } : -1
    guard named == 0 else {
        let error = POSIXError(.init(rawValue: errno) ?? .EIO)
        close(fd)
        throw error
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}
