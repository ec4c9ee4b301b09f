/// Why a socket operation of the event loop or of `UnixSocketClient` failed.
///
/// Every case names what a person needs to act on: the address or path, and the system's reason.
package enum SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed; `errno` is the raw error number (described with `strerror`).
    case systemCall(call: String, errno: Int32)
    /// The host is neither a numeric IPv4/IPv6 address nor `localhost` (the loop never does DNS).
    case unsupportedHost(String)
    /// Binding or listening on `address` failed, typically `EADDRINUSE`.
    case listenFailed(address: String, call: String, errno: Int32)
    /// Nobody listens on `host:port` (`ECONNREFUSED`).
    case connectionRefused(host: String, port: UInt16)
    /// The TCP handshake with `host:port` did not finish within `timeout`.
    case connectTimedOut(host: String, port: UInt16, timeout: Duration)
    /// Connecting to `host:port` failed for another reason.
    case connectFailed(host: String, port: UInt16, errno: Int32)
    /// A Unix-domain socket path is longer than `sockaddr_un` can hold.
    case unixPathTooLong(path: String, maximumBytes: Int)
    /// `path` exists but is not a socket, so `listenUnix` refuses to delete it.
    case notASocket(path: String)
    /// A live process already listens on the Unix-domain socket at `path`.
    case unixSocketInUse(path: String)
    /// No daemon answers at `path`: the socket file is missing or nobody accepts on it.
    case daemonUnreachable(path: String)
    /// A `UnixSocketClient` request to `path` did not complete within `timeout`.
    case requestTimedOut(path: String, timeout: Duration)
    /// A daemon's reply on `path` exceeded `maximumBytes`.
    case responseTooLarge(path: String, maximumBytes: Int)
    /// The event loop `loop` has been shut down and no longer accepts work.
    case loopShutDown(loop: String)

    package var description: String {
        switch self {
        case .systemCall(let call, let errno):
            return "\(call) failed: \(Errno.describe(errno))"
        case .unsupportedHost(let host):
            return "cannot use host \"\(host)\": give a numeric IPv4 or IPv6 address, or localhost"
        case .listenFailed(let address, let call, let errno):
            return "cannot listen on \(address): \(call) failed: \(Errno.describe(errno))"
        case .connectionRefused(let host, let port):
            return "connection to \(Self.join(host, port)) refused: nothing listens on port \(port)"
        case .connectTimedOut(let host, let port, let timeout):
            return "connecting to \(Self.join(host, port)) timed out after \(timeout)"
        case .connectFailed(let host, let port, let errno):
            return "connecting to \(Self.join(host, port)) failed: \(Errno.describe(errno))"
        case .unixPathTooLong(let path, let maximumBytes):
            return "Unix socket path \(path) is longer than \(maximumBytes) bytes; choose a shorter directory"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; refusing to replace it"
        case .unixSocketInUse(let path):
            return "another process is already listening on \(path)"
        case .daemonUnreachable(let path):
            return "no daemon is listening on \(path) (is it running?)"
        case .requestTimedOut(let path, let timeout):
            return "the daemon on \(path) did not answer within \(timeout)"
        case .responseTooLarge(let path, let maximumBytes):
            return "the daemon on \(path) sent more than \(maximumBytes) bytes"
        case .loopShutDown(let loop):
            return "event loop \(loop) has been shut down"
        }
    }

    /// `host:port`, bracketing IPv6 literals.
    package static func join(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
