import Glibc

/// Makes writing to a socket whose peer has gone away return `EPIPE` instead of killing the process.
///
/// The loop already sends with `MSG_NOSIGNAL`; this covers any other write path in the process
/// (a `FileHandle`, a library). Call it once at daemon or CLI start-up; it is process-wide and
/// idempotent.
package func ignoreSIGPIPE() {
    _ = signal(SIGPIPE, SIG_IGN)
}

/// A thin wrapper over a socket file descriptor: the system calls the loop makes, with errno turned
/// into `SocketError`.
///
/// A value type without ownership: whoever created it closes it exactly once (`close()`).
package struct SocketDescriptor {
    /// The raw file descriptor.
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// Opens a close-on-exec stream socket of `family`; `nonBlocking` for sockets the loop owns.
    package static func open(family: Int32, nonBlocking: Bool) throws(SocketError) -> SocketDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw .systemCall(call: "socket", errno: errno) }
        return SocketDescriptor(rawValue: fd)
    }

    /// Sets an integer socket option such as `SO_REUSEADDR` or `TCP_NODELAY`.
    package func setOption(level: Int32, name: Int32, value: Int32) throws(SocketError) {
        var value = value
        guard setsockopt(rawValue, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .systemCall(call: "setsockopt(\(name))", errno: errno)
        }
    }

    /// Turns Nagle's algorithm off: the link sends small frames that must not wait for an ACK.
    package func disableNagle() throws(SocketError) {
        try setOption(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// Makes the next `close()` abort the connection with a TCP reset instead of a FIN (`SO_LINGER`
    /// on with a zero timeout): unsent data is discarded and the peer's next read or write fails
    /// with `ECONNRESET`.
    package func setResetOnClose() throws(SocketError) {
        var option = linger(l_onoff: 1, l_linger: 0)
        guard setsockopt(rawValue, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size)) == 0 else {
            throw .systemCall(call: "setsockopt(SO_LINGER)", errno: errno)
        }
    }

    /// The pending socket error (`SO_ERROR`), which is how a non-blocking connect reports its outcome.
    package func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// The address this socket is bound to.
    package func localAddress() -> SocketAddress? {
        SocketAddress.filled { getsockname(rawValue, $0, &$1) }
    }

    /// The address of the connected peer.
    package func peerAddress() -> SocketAddress? {
        SocketAddress.filled { getpeername(rawValue, $0, &$1) }
    }

    /// Closes the descriptor. `EINTR` is not retried: on Linux the descriptor is gone either way.
    package func close() {
        _ = Glibc.close(rawValue)
    }
}

/// Whether `error` means "try again later" on a non-blocking socket.
package func isWouldBlock(_ error: Int32) -> Bool {
    error == EAGAIN || error == EWOULDBLOCK
}
