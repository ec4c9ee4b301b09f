import AdminCommands
import Foundation
import POSIX

/// A daemon's admin endpoint: a Unix-domain socket (mode 0600 — only the daemon's user may connect)
/// on the daemon's `EventLoop`, answering one `Command` (`PhoneCommand`, `WatchCommand`) per connection.
///
/// Per connection: bytes are collected until the client half-closes (`onEndOfInput`); the request
/// is decoded by `AdminWire.decode` and handed to the handler on the loop; the encoded `AdminResponse` is written
/// and the connection closed after the flush, whatever its size. A handler may first send chunks
/// (`AdminResponder.chunk`: responses with `more`, docs/PROTOCOL.md "Admin socket"), each written as it
/// comes; it is told when the client has taken one (what is queued for it has drained below
/// `chunkLowWaterBytes`) or is gone, so a long reply is produced only as fast as it is read and
/// never sits whole in memory. Limits, each answered with an `error` response:
/// - a request over `maximumRequestBytes` (default 1 MiB) is refused as soon as it crosses the cap,
///   without buffering the rest;
/// - a request that is not a JSON `Command` is refused with the decoder's reason;
/// - a client that neither finishes nor closes within `requestTimeout` (default 10 s) is answered
///   with a timeout error and dropped, so a stuck client cannot pin a connection forever.
///
/// Loop-confined like `Listener`: create it and call `close()` on the loop's thread. Keep a
/// reference for as long as it should serve: releasing the last one closes the listener.
package final class AdminServer<Command: AdminCommand>: @unchecked Sendable {
    // @unchecked Sendable is sound because `path`, `loop` and the limits are immutable and the rest
    // (`listener`, `handler`) is used only on the loop thread (checked with `preconditionInLoop()`);
    // Sendable only lets `loop.submit` hand the server back to the task that created it.

    /// Answers a request asynchronously: call `respond` exactly once, on the loop, when done (after
    /// any number of `respond.chunk`s).
    package typealias AsyncHandler = (Command, _ respond: AdminResponder) -> Void

    /// A chunk's sender is told to go on once no more than this is queued for the client.
    package static var chunkLowWaterBytes: Int { 256 * 1024 }
    /// How often a sender waiting for the client is checked on.
    static var drainCheckInterval: Duration { .milliseconds(2) }

    /// The default cap on one request's size: 1 MiB.
    package static var defaultMaximumRequestBytes: Int { 1024 * 1024 }
    /// The default time a client has to send its whole request.
    package static var defaultRequestTimeout: Duration { .seconds(10) }

    /// The socket file.
    package let path: String
    /// The loop the server runs on.
    package let loop: EventLoop
    /// Requests larger than this are refused.
    package let maximumRequestBytes: Int
    /// Clients that take longer than this to send their request are answered with an error and dropped.
    package let requestTimeout: Duration
    private let listener: Listener
    private let handler: AsyncHandler

    /// Listens on `path` (replacing a stale socket file, refusing a live one; see `listenUnix`) and
    /// answers each request with `handler`'s response. Loop-only.
    package convenience init(
        loop: EventLoop, path: String, maximumRequestBytes: Int = defaultMaximumRequestBytes,
        requestTimeout: Duration = defaultRequestTimeout, handler: @escaping (Command) -> AdminResponse
    ) throws(SocketError) {
        try self.init(
            loop: loop, path: path, maximumRequestBytes: maximumRequestBytes, requestTimeout: requestTimeout,
            asyncHandler: { request, respond in respond(handler(request)) })
    }

    /// Listens on `path` and hands each request to `asyncHandler`, which may answer later (after an
    /// fsync finished elsewhere, say) by calling `respond` on the loop. Loop-only.
    package init(
        loop: EventLoop, path: String, maximumRequestBytes: Int = defaultMaximumRequestBytes,
        requestTimeout: Duration = defaultRequestTimeout, asyncHandler: @escaping AsyncHandler
    ) throws(SocketError) {
        loop.preconditionInLoop()
        self.path = path
        self.loop = loop
        self.maximumRequestBytes = maximumRequestBytes
        self.requestTimeout = requestTimeout
        handler = asyncHandler
        var accept: (Connection) -> Void = { $0.close() }
        listener = try loop.listenUnix(path: path, mode: 0o600) { accept($0) }
        accept = { [weak self] connection in
            guard let self else { return connection.close() }
            self.serve(connection)
        }
    }

    /// Hears why accepting clients paused (near or out of descriptors, out of memory), once per run
    /// of pauses: the clients wait in the socket's backlog meanwhile. Loop-only.
    package var onAcceptPaused: ((String) -> Void)? {
        get { listener.onAcceptPaused }
        set { listener.onAcceptPaused = newValue }
    }

    /// Stops accepting and removes the socket file; exchanges in progress still complete. Loop-only.
    package func close() {
        listener.close()
    }

    deinit {
        // The listener only holds this server weakly; once the last owner lets go, stop listening
        // (on the loop, since the last release may happen on any thread).
        let listener = listener
        loop.execute { listener.close() }
    }

    /// Runs one request/response exchange on `connection`.
    private func serve(_ connection: Connection) {
        var request: [UInt8] = []
        var answered = false
        let maximum = maximumRequestBytes
        let handler = handler

        func answer(_ response: AdminResponse) {
            guard !answered else { return }
            answered = true
            var response = response
            response.daemon = Command.daemon
            let bytes = response.encoded
            // A response is ours and already whole in memory: the write buffer's cap (meant for
            // peers that stop reading) must never truncate it.
            connection.maximumBufferedWriteBytes = max(
                connection.maximumBufferedWriteBytes, connection.bufferedWriteBytes + bytes.count)
            connection.write(bytes)
            connection.closeAfterFlush()
        }

        // Never called back from inside `chunk`: the sender is still carrying out its actions.
        func scheduleSoon(_ work: @escaping () -> Void) { _ = loop.scheduleTimer(after: .zero, work) }
        // The sender of the chunk in flight, told once the client has taken it (true) or is gone.
        var waiting: ((Bool) -> Void)?
        func chunk(_ response: AdminResponse, then next: @escaping (Bool) -> Void) {
            guard !answered, !connection.isClosed else { return scheduleSoon { next(false) } }
            var piece = response
            piece.more = true
            piece.daemon = Command.daemon
            let bytes = piece.encoded
            connection.maximumBufferedWriteBytes = max(
                connection.maximumBufferedWriteBytes, connection.bufferedWriteBytes + bytes.count)
            connection.write(bytes)
            waiting = next
            awaitDrain()
        }
        func awaitDrain() {
            guard let next = waiting else { return }
            if connection.isClosed {
                waiting = nil
                scheduleSoon { next(false) }
            } else if connection.bufferedWriteBytes <= Self.chunkLowWaterBytes {
                waiting = nil
                scheduleSoon { next(true) }
            } else {
                _ = loop.scheduleTimer(after: Self.drainCheckInterval) { awaitDrain() }
            }
        }

        let timer = loop.scheduleTimer(after: requestTimeout) { [requestTimeout] in
            answer(.error("the request was not completed within \(requestTimeout); send it and close the write side"))
        }
        connection.onClose = { [loop] _ in
            loop.cancelTimer(timer)
            awaitDrain()
        }
        connection.onRead = { bytes in
            guard !answered else { return }
            request += bytes
            if request.count > maximum {
                request = []
                answer(.error("the request is larger than \(maximum) bytes"))
            }
        }
        connection.onEndOfInput = { [loop] in
            guard !answered else { return }
            loop.cancelTimer(timer)
            let decoded: Command
            switch AdminWire.decode(request, as: Command.self) {
            case .success(let command): decoded = command
            case .failure(let error): return answer(.error(error.description))
            }
            request = []
            handler(
                decoded,
                AdminResponder(
                    finish: { response in
                        loop.preconditionInLoop()
                        answer(response)
                    },
                    chunk: { response, next in
                        loop.preconditionInLoop()
                        chunk(response, then: next)
                    }))
        }
        // A client usually sends its whole request before the accept: answered in this turn.
        connection.readNow()
    }
}

/// How an admin handler answers one request: `respond(response)` once, the reply or its last part,
/// after any number of `chunk`s. Loop-only.
package struct AdminResponder {
    private let finish: (AdminResponse) -> Void
    private let sendChunk: (AdminResponse, @escaping (Bool) -> Void) -> Void

    /// A responder that hands the final response to `finish` and chunks to `chunk`.
    package init(
        finish: @escaping (AdminResponse) -> Void,
        chunk: @escaping (AdminResponse, @escaping (Bool) -> Void) -> Void
    ) {
        self.finish = finish
        sendChunk = chunk
    }

    /// Sends the reply (or, after chunks, its last part) and ends the exchange.
    package func callAsFunction(_ response: AdminResponse) { finish(response) }

    /// Sends one chunk of the reply (sent with `more`, whatever `response` says) and calls `next`
    /// on the loop once the client has taken it (true: send the next) or has gone (false: stop).
    package func chunk(_ response: AdminResponse, then next: @escaping (Bool) -> Void) {
        sendChunk(response, next)
    }
}
