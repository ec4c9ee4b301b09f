import Glibc

extension EventLoop {
    /// Listens for TCP connections on `host` (`"127.0.0.1"`, `"localhost"`, `"::1"`, `"0.0.0.0"`)
    /// and `port` (0 lets the kernel choose; read it back from `Listener.port`). Loop-only.
    ///
    /// Sets `SO_REUSEADDR` so a restarted daemon can rebind while old connections sit in TIME_WAIT.
    /// Accepted connections have `TCP_NODELAY` on; `onAccept` runs on the loop for each of them.
    package func listen(
        host: String, port: UInt16, backlog: Int32 = 128, onAccept: @escaping (Connection) -> Void
    ) throws(SocketError) -> Listener {
        preconditionInLoop()
        guard !isShuttingDown else { throw .loopShutDown(loop: name) }
        let address = try SocketAddress(host: host, port: port)
        let socket = try SocketDescriptor.open(family: address.family, nonBlocking: true)
        do {
            try socket.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            try bindAndListen(socket, address: address, backlog: backlog, describedAs: address.description)
        } catch {
            socket.close()
            throw error
        }
        let bound = socket.localAddress() ?? address
        return Listener(loop: self, socket: socket, localAddress: bound, unixPath: nil, onAccept: onAccept)
    }

    /// Listens on a Unix-domain stream socket at `path`, readable and writable only as `mode`
    /// allows (default 0600: the owner only). Loop-only.
    ///
    /// A stale socket file left by a crashed daemon is removed first; a file that is not a socket,
    /// or a socket some live process still accepts on, is left alone and reported. The mode is set
    /// between `bind` and `listen`, so no client can connect before it applies.
    package func listenUnix(
        path: String, mode: mode_t = 0o600, backlog: Int32 = 16, onAccept: @escaping (Connection) -> Void
    ) throws(SocketError) -> Listener {
        preconditionInLoop()
        guard !isShuttingDown else { throw .loopShutDown(loop: name) }
        let address = try SocketAddress(unixPath: path)
        try removeStaleSocketFile(at: path, address: address)
        let socket = try SocketDescriptor.open(family: AF_UNIX, nonBlocking: true)
        do {
            try bindAndListen(socket, address: address, backlog: backlog, describedAs: path) { () throws(SocketError) in
                guard chmod(path, mode) == 0 else {
                    throw SocketError.listenFailed(address: path, call: "chmod", errno: errno)
                }
            }
        } catch {
            socket.close()
            _ = unlink(path)
            throw error
        }
        return Listener(loop: self, socket: socket, localAddress: address, unixPath: path, onAccept: onAccept)
    }

    /// Connects to `host:port` without blocking the loop; `completion` runs on the loop, always on a
    /// later turn than this call, with the connection (`TCP_NODELAY` on) or an error naming
    /// `host:port`: `connectionRefused`, `connectTimedOut` after `timeout`, `connectFailed`. Loop-only.
    package func connect(
        host: String, port: UInt16, timeout: Duration = .seconds(10),
        completion: @escaping (Result<Connection, SocketError>) -> Void
    ) {
        preconditionInLoop()
        let fail = { (error: SocketError) in self.deferToNextTurn { completion(.failure(error)) } }
        guard !isShuttingDown else { return fail(.loopShutDown(loop: name)) }
        let address: SocketAddress
        let socket: SocketDescriptor
        do {
            address = try SocketAddress(host: host, port: port)
            socket = try SocketDescriptor.open(family: address.family, nonBlocking: true)
        } catch {
            return fail(error)
        }
        try? socket.disableNagle()
        let result = address.withSockAddr { Glibc.connect(socket.rawValue, $0, $1) }
        let error = result == 0 ? 0 : errno
        switch error {
        case 0:
            deferToNextTurn {
                guard !self.isShuttingDown else {
                    socket.close()
                    return completion(.failure(.loopShutDown(loop: self.name)))
                }
                let connection = Connection(loop: self, socket: socket, remoteDescription: address.description)
                completion(.success(connection))
            }
        case EINPROGRESS:
            _ = PendingConnect(
                loop: self, socket: socket, host: host, port: port, remote: address.description, timeout: timeout,
                completion: completion)
        default:
            socket.close()
            fail(PendingConnect.error(forErrno: error, host: host, port: port))
        }
    }

    private func bindAndListen(
        _ socket: SocketDescriptor, address: SocketAddress, backlog: Int32, describedAs description: String,
        afterBind: () throws(SocketError) -> Void = {}
    ) throws(SocketError) {
        guard address.withSockAddr({ bind(socket.rawValue, $0, $1) }) == 0 else {
            throw .listenFailed(address: description, call: "bind", errno: errno)
        }
        try afterBind()
        guard Glibc.listen(socket.rawValue, backlog) == 0 else {
            throw .listenFailed(address: description, call: "listen", errno: errno)
        }
    }

    /// Deletes a socket file nobody accepts on any more; refuses files that are not sockets or are live.
    private func removeStaleSocketFile(at path: String, address: SocketAddress) throws(SocketError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw .listenFailed(address: path, call: "lstat", errno: errno)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        // A non-blocking probe: a live listener answers (or is busy: EAGAIN), a stale file refuses.
        let probe = try SocketDescriptor.open(family: AF_UNIX, nonBlocking: true)
        defer { probe.close() }
        let result = address.withSockAddr { Glibc.connect(probe.rawValue, $0, $1) }
        let error = result == 0 ? 0 : errno
        guard error == ECONNREFUSED else {
            if error == 0 || isWouldBlock(error) { throw .unixSocketInUse(path: path) }
            throw .listenFailed(address: path, call: "connect (probing the existing socket)", errno: error)
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw .listenFailed(address: path, call: "unlink (stale socket)", errno: errno)
        }
    }
}

/// A TCP connect the kernel is still completing: waits for writability, then reads `SO_ERROR`.
final class PendingConnect: LoopChannel {
    let descriptor: Int32
    private let loop: EventLoop
    private let socket: SocketDescriptor
    private let host: String
    private let port: UInt16
    private let remote: String
    private let completion: (Result<Connection, SocketError>) -> Void
    private var timer: TimerID?
    private var isDone = false

    /// Registers the connect with `loop` and arms its timeout; the loop's channel table keeps it alive.
    init(
        loop: EventLoop, socket: SocketDescriptor, host: String, port: UInt16, remote: String, timeout: Duration,
        completion: @escaping (Result<Connection, SocketError>) -> Void
    ) {
        self.loop = loop
        self.socket = socket
        descriptor = socket.rawValue
        self.host = host
        self.port = port
        self.remote = remote
        self.completion = completion
        loop.register(self)
        timer = loop.scheduleTimer(after: timeout) { [weak self] in
            self?.timer = nil
            self?.fail(.connectTimedOut(host: host, port: port, timeout: timeout))
        }
    }

    var pollEvents: Int16 { isDone ? 0 : Int16(POLLOUT) }

    func handle(events: Int16) {
        let error = socket.pendingError()
        if error == 0, events & Int16(POLLOUT) != 0 {
            finish()
            completion(.success(Connection(loop: loop, socket: socket, remoteDescription: remote)))
        } else {
            // POLLHUP/POLLERR without SO_ERROR still means the handshake failed.
            fail(Self.error(forErrno: error == 0 ? ECONNREFUSED : error, host: host, port: port))
        }
    }

    func closeForShutdown() {
        fail(.loopShutDown(loop: loop.name))
    }

    private func fail(_ error: SocketError) {
        guard !isDone else { return }
        finish()
        socket.close()
        completion(.failure(error))
    }

    /// Leaves the poll set and disarms the timeout; the descriptor stays open.
    private func finish() {
        isDone = true
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        loop.deregister(self)
    }

    /// The error for a failed connect to `host:port`.
    static func error(forErrno error: Int32, host: String, port: UInt16) -> SocketError {
        error == ECONNREFUSED
            ? .connectionRefused(host: host, port: port) : .connectFailed(host: host, port: port, errno: error)
    }
}
