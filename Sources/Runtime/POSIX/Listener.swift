import Glibc

/// A listening TCP or Unix-domain socket on an `EventLoop`; hands each accepted `Connection` to `onAccept`.
///
/// Created by `EventLoop.listen` or `listenUnix`. `port` and `localAddress` may be read from any
/// thread; `close()` is loop-only. A Unix-domain listener removes its socket file when it closes.
package final class Listener: LoopChannel, @unchecked Sendable {
    // @unchecked Sendable is sound because `localAddress`, `port` and `loop` are immutable and all
    // mutable state is used only on the loop thread (checked by `loop.preconditionInLoop()`).

    /// How long accepting pauses after the process runs out of descriptors or memory, so a full
    /// accept queue does not spin the loop; pending clients wait in the backlog meanwhile.
    package static let acceptRetryDelay: Duration = .milliseconds(100)

    /// The address actually bound (with the kernel's port when 0 was asked for).
    package let localAddress: SocketAddress
    /// The bound TCP port; 0 for a Unix-domain listener.
    package let port: UInt16
    /// The loop that owns this listener.
    package let loop: EventLoop

    let descriptor: Int32
    private let socket: SocketDescriptor
    private let onAccept: (Connection) -> Void
    /// Set for Unix-domain listeners: the file to remove on close, and how clients are described.
    private let unixPath: String?
    private var isClosed = false
    private var retryTimer: TimerID?
    /// Descriptors kept free for the process's own files: no client is accepted while fewer are left
    /// under the soft `RLIMIT_NOFILE`, so a durable write never finds none (clients wait meanwhile).
    package static let reservedDescriptors: Int32 = 16
    /// Whether accepting is paused for want of descriptors or memory (a run of pauses is reported once).
    private var acceptFailing = false
    /// Hears why accepting paused, at the first pause of each run of them (near the descriptor limit,
    /// or out of descriptors or memory): the clients wait in the backlog and accepting is tried again
    /// every `acceptRetryDelay`. Loop-only.
    package var onAcceptPaused: ((String) -> Void)?

    /// Wraps a bound, listening, non-blocking socket and adds it to the loop's poll set. Loop-only.
    init(
        loop: EventLoop, socket: SocketDescriptor, localAddress: SocketAddress, unixPath: String?,
        onAccept: @escaping (Connection) -> Void
    ) {
        self.loop = loop
        self.socket = socket
        descriptor = socket.rawValue
        self.localAddress = localAddress
        port = localAddress.port ?? 0
        self.unixPath = unixPath
        self.onAccept = onAccept
        loop.register(self)
    }

    /// Stops accepting, closes the socket and removes a Unix-domain socket file. Connections already
    /// accepted stay open. Idempotent. Loop-only.
    package func close() {
        loop.preconditionInLoop()
        guard !isClosed else { return }
        isClosed = true
        if let retryTimer { loop.cancelTimer(retryTimer) }
        loop.deregister(self)
        socket.close()
        if let unixPath { _ = unlink(unixPath) }
    }

    var pollEvents: Int16 { isClosed || retryTimer != nil ? 0 : Int16(POLLIN) }

    func handle(events: Int16) {
        // Bounded so a flood of clients cannot starve the rest of the loop.
        for _ in 0..<64 {
            guard !isClosed else { return }
            if let shortage = descriptorShortage() {
                pauseAccepting(because: shortage)
                return
            }
            let accepted = LinuxSystemCalls.accept4(
                descriptor, flags: Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            guard accepted >= 0 else {
                let error = errno
                if error == EINTR || error == ECONNABORTED || error == EPROTO { continue }
                if !isWouldBlock(error) {
                    pauseAccepting(because: "\(SystemCallError(call: "accept4", errno: error, path: unixPath))")
                }
                return
            }
            acceptFailing = false
            let client = SocketDescriptor(rawValue: accepted)
            let remote: String
            var host: String?
            if let unixPath {
                remote = "unix:\(unixPath) (client)"
            } else {
                // Latency over throughput for small frames; failure only costs latency, so it is ignored.
                try? client.disableNagle()
                let peer = client.peerAddress()
                remote = peer?.description ?? "unknown TCP peer"
                host = peer?.host
            }
            onAccept(Connection(loop: loop, socket: client, remoteDescription: remote, remoteHost: host))
        }
    }

    func closeForShutdown() {
        close()
    }

    /// Why a client must not be accepted now: fewer than `reservedDescriptors` are left under the
    /// soft limit (the lowest free descriptor says how many are in use: the kernel hands out the
    /// lowest), or none at all; nil when there is room.
    private func descriptorShortage() -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        let lowestFree = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard lowestFree >= 0 else { return "\(SystemCallError.last("fcntl(F_DUPFD)", path: unixPath))" }
        Glibc.close(lowestFree)
        guard rlim_t(lowestFree) + rlim_t(Self.reservedDescriptors) > limit.rlim_cur else { return nil }
        return "\(lowestFree) descriptors in use of the limit of \(limit.rlim_cur); "
            + "the last \(Self.reservedDescriptors) are kept for the daemon's files"
    }

    /// Near or out of descriptors, or out of memory: stop polling the listener for a while instead of
    /// spinning, and say why at the first pause of a run of them.
    private func pauseAccepting(because reason: String) {
        if !acceptFailing { onAcceptPaused?(reason) }
        acceptFailing = true
        retryTimer = loop.scheduleTimer(after: Self.acceptRetryDelay) { [weak self] in
            self?.retryTimer = nil
        }
    }
}
