import Glibc

/// The admin CLIs' side of a daemon's Unix-domain socket: one blocking request and its reply.
///
/// Blocking by design — a CLI has nothing else to do — so call it from a CLI's main thread, never
/// from an event loop or Swift's cooperative pool.
package enum UnixSocketClient {
    /// The default cap on a reply's size: 16 MiB.
    package static let defaultMaximumResponseBytes = 16 * 1024 * 1024

    /// Connects to the daemon at `path`, sends `bytes`, half-closes (so the daemon sees the end of the
    /// request) and returns everything the daemon writes until it closes.
    ///
    /// Throws `daemonUnreachable(path:)` if the socket file is missing or nobody accepts on it (a
    /// CLI exits 69 then), `requestTimedOut` if the whole exchange takes longer than `timeout`,
    /// `responseTooLarge` past `maximumResponseBytes`, and `systemCall` for anything else.
    package static func request(
        path: String, bytes: [UInt8], timeout: Duration = .seconds(10),
        maximumResponseBytes: Int = defaultMaximumResponseBytes
    ) throws(SocketError) -> [UInt8] {
        var response: [UInt8] = []
        try exchange(path: path, bytes: bytes, timeout: timeout, idle: false) { piece in
            response.append(contentsOf: piece)
            return response.count <= maximumResponseBytes
        }
        guard response.count <= maximumResponseBytes else {
            throw .responseTooLarge(path: path, maximumBytes: maximumResponseBytes)
        }
        return response
    }

    /// Like `request`, but hands the reply to `receive` as it arrives, in pieces of any size, until
    /// the daemon closes or `receive` returns false; `idleTimeout` bounds each wait rather than the
    /// whole exchange, so a long reply that keeps coming (a daemon streaming a history) never times
    /// out, and a daemon that stops sending does.
    package static func stream(
        path: String, bytes: [UInt8], idleTimeout: Duration = .seconds(10),
        _ receive: (ArraySlice<UInt8>) -> Bool
    ) throws(SocketError) {
        try exchange(path: path, bytes: bytes, timeout: idleTimeout, idle: true, receive)
    }

    /// Connects, sends, half-closes and hands every piece of the reply to `receive` until the daemon
    /// closes or `receive` returns false. `timeout` bounds the whole exchange, or with `idle` each
    /// wait for the socket.
    private static func exchange(
        path: String, bytes: [UInt8], timeout: Duration, idle: Bool, _ receive: (ArraySlice<UInt8>) -> Bool
    ) throws(SocketError) {
        let address = try SocketAddress(unixPath: path)
        let clock = ContinuousClock()
        var deadline = clock.now.advanced(by: timeout)
        let socket = try SocketDescriptor.open(family: AF_UNIX, nonBlocking: true)
        defer { socket.close() }

        /// Waits until `socket` is ready for `events`, or throws once the deadline has passed.
        func wait(for events: Int32) throws(SocketError) {
            while true {
                let remaining = clock.now.duration(to: deadline)
                guard remaining > .zero else { throw .requestTimedOut(path: path, timeout: timeout) }
                let (seconds, attoseconds) = remaining.components
                let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
                var entry = pollfd(fd: socket.rawValue, events: Int16(events), revents: 0)
                let ready = poll(&entry, 1, milliseconds)
                if ready > 0 { return }
                if ready < 0, errno != EINTR { throw .systemCall(call: "poll (\(path))", errno: errno) }
            }
        }

        while address.withSockAddr({ Glibc.connect(socket.rawValue, $0, $1) }) != 0 {
            let error = errno
            switch error {
            case EINTR: continue
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .daemonUnreachable(path: path)
            case EAGAIN:
                // The daemon's backlog is full: it is alive but busy, so retry until the deadline.
                guard clock.now < deadline else { throw .requestTimedOut(path: path, timeout: timeout) }
                _ = poll(nil, 0, 10)
            default: throw .systemCall(call: "connect (\(path))", errno: error)
            }
        }

        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(socket.rawValue, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            let error = errno
            if error == EINTR { continue }
            guard isWouldBlock(error) else { throw .systemCall(call: "send (\(path))", errno: error) }
            try wait(for: POLLOUT)
        }
        guard shutdown(socket.rawValue, Int32(SHUT_WR)) == 0 else {
            throw .systemCall(call: "shutdown (\(path))", errno: errno)
        }

        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket.rawValue, $0.baseAddress, $0.count, 0) }
            if count == 0 { return }
            if count > 0 {
                guard receive(chunk[0..<count]) else { return }
                if idle { deadline = clock.now.advanced(by: timeout) }
                continue
            }
            let error = errno
            if error == EINTR { continue }
            guard isWouldBlock(error) else { throw .systemCall(call: "recv (\(path))", errno: error) }
            try wait(for: POLLIN)
        }
    }
}
