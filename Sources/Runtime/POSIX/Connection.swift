import Glibc
import Synchronization

/// One connected, non-blocking stream socket (TCP or Unix-domain) owned by an `EventLoop`.
///
/// Loop-confined: set the callbacks and call `write`/`close`/`closeAfterFlush` on the loop's thread
/// only (checked); every callback runs there. Set the callbacks inside the `onAccept` or `connect`
/// completion that hands you the connection: no bytes are read before that returns.
///
/// `onClose` is called exactly once — peer EOF, reset, error, buffer limit, local close or loop
/// shutdown — and afterwards all callbacks are released (breaking reference cycles through them).
/// `onClose` is never called from inside `write`; it is called synchronously from `close()`.
package final class Connection: LoopChannel, @unchecked Sendable {
    // @unchecked Sendable is sound because, apart from the immutable `id`, `remoteDescription` and
    // `loop`, every member is used only on the loop thread (checked by `loop.preconditionInLoop()`);
    // Sendable only lets the reference travel through `execute` closures back to that thread.

    /// Why a connection closed; passed once to `onClose`.
    package enum CloseReason: Equatable, Sendable, CustomStringConvertible {
        /// The peer closed its side (EOF) and no `onEndOfInput` handler kept the connection open.
        case peerClosed
        /// The peer reset the connection (`ECONNRESET`/`EPIPE`).
        case reset
        /// A read or write failed for another reason.
        case failed(SocketError)
        /// This side called `close()` or its `closeAfterFlush()` completed.
        case closedLocally
        /// More than `limitBytes` were queued for a peer that does not read fast enough.
        case writeBufferLimitExceeded(bufferedBytes: Int, limitBytes: Int)
        /// The event loop was shut down.
        case loopShutDown

        package var description: String {
            switch self {
            case .peerClosed: return "the peer closed the connection"
            case .reset: return "the peer reset the connection"
            case .failed(let error): return "I/O failed: \(error)"
            case .closedLocally: return "closed locally"
            case .writeBufferLimitExceeded(let buffered, let limit):
                return "the peer is not reading: \(buffered) bytes queued, over the \(limit)-byte limit"
            case .loopShutDown: return "the event loop shut down"
            }
        }
    }

    private enum State: Equatable {
        /// Reading and writing.
        case open
        /// `closeAfterFlush()` was called; sending what is queued, discarding input.
        case flushingBeforeClose
        /// Everything was sent and our FIN is out; waiting for the peer's EOF before closing.
        case waitingForPeerClose
        /// A close with this reason is deferred to the next turn.
        case closing(CloseReason)
        /// The descriptor is closed and `onClose` has been called.
        case closed
    }

    /// The default for `maximumBufferedWriteBytes`: 8 MiB.
    package static let defaultMaximumBufferedWriteBytes = 8 * 1024 * 1024
    /// How long `closeAfterFlush()` waits for the flush and the peer's EOF before closing anyway.
    package static let closeAfterFlushLinger: Duration = .seconds(5)

    private static let lastID = Atomic<Int>(0)

    /// Unique within the process, for logs and maps.
    package let id: Int
    /// The peer, e.g. `127.0.0.1:53122` or `unix:/run/phoned.sock (client)`.
    package let remoteDescription: String
    /// The peer's numeric host (`127.0.0.1`) for a TCP connection the listener accepted, else nil:
    /// the key by which unauthenticated connections are bounded per source address.
    package let remoteHost: String?
    /// The loop that owns this connection.
    package let loop: EventLoop

    /// Receives bytes as they arrive, in order, in chunks of any size.
    package var onRead: ([UInt8]) -> Void = { _ in } { willSet { loop.preconditionInLoop() } }
    /// Called exactly once when the connection has closed.
    package var onClose: (CloseReason) -> Void = { _ in } { willSet { loop.preconditionInLoop() } }
    /// If set, called when the peer half-closes (EOF) and the connection stays open for writing
    /// until `close()`/`closeAfterFlush()` — how an admin server answers a request. If nil, EOF
    /// closes the connection with `peerClosed`.
    package var onEndOfInput: (() -> Void)? { willSet { loop.preconditionInLoop() } }
    /// When more than this many bytes are queued, the connection closes with `writeBufferLimitExceeded`.
    package var maximumBufferedWriteBytes = Connection.defaultMaximumBufferedWriteBytes {
        willSet { loop.preconditionInLoop() }
    }

    /// While true, nothing is read (the kernel's buffer fills and TCP slows the peer); set by an
    /// owner that has more in hand than it wants to handle in one turn.
    package var isReadingPaused = false { willSet { loop.preconditionInLoop() } }

    let descriptor: Int32
    private let socket: SocketDescriptor
    private var state = State.open
    private var inputClosed = false
    private var writeBuffer: [UInt8] = []
    private var writeOffset = 0
    private var lingerTimer: TimerID?

    /// Wraps a connected non-blocking socket and adds it to the loop's poll set. Loop-only.
    init(loop: EventLoop, socket: SocketDescriptor, remoteDescription: String, remoteHost: String? = nil) {
        loop.preconditionInLoop()
        self.loop = loop
        self.socket = socket
        descriptor = socket.rawValue
        self.remoteDescription = remoteDescription
        self.remoteHost = remoteHost
        id = Self.lastID.wrappingAdd(1, ordering: .relaxed).newValue
        loop.register(self)
    }

    /// The number of bytes queued but not yet accepted by the kernel.
    package var bufferedWriteBytes: Int { writeBuffer.count - writeOffset }

    /// Whether `close` has happened (or is about to, on the next turn).
    package var isClosed: Bool {
        switch state {
        case .open, .flushingBeforeClose, .waitingForPeerClose: return false
        case .closing, .closed: return true
        }
    }

    /// Reads what has arrived already, now rather than on the next turn: for a handler set up just
    /// after the accept, so a client that wrote its request at once is answered a turn earlier.
    /// Loop-only.
    package func readNow() {
        loop.preconditionInLoop()
        guard state == .open, !inputClosed, !isReadingPaused else { return }
        readAvailable()
    }

    /// Queues `bytes` and sends as much as the socket takes now; never blocks. Loop-only.
    ///
    /// Dropped after `close()` or `closeAfterFlush()`. If the queue then exceeds
    /// `maximumBufferedWriteBytes`, the connection closes (on the next turn) with `writeBufferLimitExceeded`.
    package func write(_ bytes: [UInt8]) {
        loop.preconditionInLoop()
        guard state == .open, !bytes.isEmpty else { return }
        let wasIdle = bufferedWriteBytes == 0
        writeBuffer.append(contentsOf: bytes)
        if wasIdle { flush(closingNow: false) }
        guard state == .open else { return }
        if bufferedWriteBytes > maximumBufferedWriteBytes {
            closeOnNextTurn(
                .writeBufferLimitExceeded(bufferedBytes: bufferedWriteBytes, limitBytes: maximumBufferedWriteBytes))
        }
    }

    /// Closes now, discarding anything queued; `onClose(.closedLocally)` runs before this returns. Idempotent. Loop-only.
    package func close() {
        loop.preconditionInLoop()
        switch state {
        case .open, .flushingBeforeClose, .waitingForPeerClose: finish(.closedLocally)
        case .closing, .closed: return
        }
    }

    /// Aborts the connection with a TCP reset (RST, via `SO_LINGER` 0) instead of an orderly FIN,
    /// discarding anything queued: the peer's next read or write fails with `ECONNRESET`. For fault
    /// injection (a proxy's `reset_peer`); `onClose(.closedLocally)` runs before this returns.
    /// Idempotent. Loop-only.
    package func reset() {
        loop.preconditionInLoop()
        switch state {
        case .open, .flushingBeforeClose, .waitingForPeerClose:
            // If the option cannot be set the close is an orderly one, which still ends the connection.
            try? socket.setResetOnClose()
            finish(.closedLocally)
        case .closing, .closed: return
        }
    }

    /// Sends what is queued (a final error frame, say), then half-closes and closes once the peer
    /// has closed too, so the queued bytes are not lost to a reset. Input is discarded from now on.
    /// Gives up after `closeAfterFlushLinger`. Idempotent. Loop-only.
    package func closeAfterFlush() {
        loop.preconditionInLoop()
        guard state == .open else { return }
        state = .flushingBeforeClose
        lingerTimer = loop.scheduleTimer(after: Self.closeAfterFlushLinger) { [weak self] in
            self?.lingerTimer = nil
            self?.finish(.closedLocally)
        }
        if bufferedWriteBytes == 0 { sendFIN() }
    }

    var pollEvents: Int16 {
        switch state {
        case .closing, .closed: return 0
        case .open, .flushingBeforeClose, .waitingForPeerClose:
            var events: Int16 = 0
            if !inputClosed, !isReadingPaused { events |= Int16(POLLIN) }
            if bufferedWriteBytes > 0 { events |= Int16(POLLOUT) }
            return events
        }
    }

    func handle(events: Int16) {
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0, !inputClosed, !isReadingPaused { readAvailable() }
        if events & Int16(POLLOUT | POLLERR) != 0, bufferedWriteBytes > 0, !isClosed { flush(closingNow: true) }
        if events & Int16(POLLHUP) != 0, inputClosed, !isClosed { finish(.peerClosed) }
    }

    func closeForShutdown() {
        if case .closing(let reason) = state {
            finish(reason)
        } else {
            finish(.loopShutDown)
        }
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        // A few reads per turn at most, so one busy peer cannot starve the others.
        for _ in 0..<4 where !isReadingPaused {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 {
                if state == .open { onRead(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))) }
                // A short read usually emptied the socket, but an EOF behind it (an admin client
                // that sent its request and shut down) is seen now rather than a turn later.
                if isClosed { return }
            } else if count == 0 {
                endOfInput()
                return
            } else {
                let error = errno
                if error == EINTR { continue }
                if isWouldBlock(error) { return }
                finish(Self.reason(forErrno: error, call: "recv"))
                return
            }
        }
    }

    private func endOfInput() {
        inputClosed = true
        switch state {
        case .open:
            if let onEndOfInput { onEndOfInput() } else { finish(.peerClosed) }
        case .waitingForPeerClose:
            finish(.closedLocally)
        case .flushingBeforeClose, .closing, .closed:
            break
        }
    }

    /// Sends until the queue is empty or the socket is full. On failure closes now if `closingNow`,
    /// else on the next turn (so `write` never calls `onClose`).
    private func flush(closingNow: Bool) {
        while writeOffset < writeBuffer.count {
            let sent = writeBuffer.withUnsafeBytes { bytes in
                send(descriptor, bytes.baseAddress! + writeOffset, bytes.count - writeOffset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                writeOffset += sent
                continue
            }
            let error = errno
            if error == EINTR { continue }
            if isWouldBlock(error) { break }
            let reason = Self.reason(forErrno: error, call: "send")
            if closingNow { finish(reason) } else { closeOnNextTurn(reason) }
            return
        }
        if writeOffset == writeBuffer.count {
            writeBuffer = []
            writeOffset = 0
            if state == .flushingBeforeClose { sendFIN() }
        } else if writeOffset >= 64 * 1024, writeOffset * 2 >= writeBuffer.count {
            writeBuffer.removeFirst(writeOffset)
            writeOffset = 0
        }
    }

    /// Everything queued is sent: half-close, then wait for the peer's EOF (or close now if it came already).
    private func sendFIN() {
        if inputClosed {
            finish(.closedLocally)
            return
        }
        state = .waitingForPeerClose
        if shutdown(descriptor, Int32(SHUT_WR)) != 0 { finish(.closedLocally) }
    }

    private func closeOnNextTurn(_ reason: CloseReason) {
        state = .closing(reason)
        loop.deferToNextTurn { [self] in finish(reason) }
    }

    /// Closes the descriptor, calls `onClose(reason)` once and releases every callback.
    private func finish(_ reason: CloseReason) {
        guard state != .closed else { return }
        state = .closed
        loop.deregister(self)
        socket.close()
        if let lingerTimer { loop.cancelTimer(lingerTimer) }
        lingerTimer = nil
        writeBuffer = []
        writeOffset = 0
        let handler = onClose
        onRead = { _ in }
        onClose = { _ in }
        onEndOfInput = nil
        handler(reason)
    }

    private static func reason(forErrno error: Int32, call: String) -> CloseReason {
        error == ECONNRESET || error == EPIPE ? .reset : .failed(.systemCall(call: call, errno: error))
    }
}
