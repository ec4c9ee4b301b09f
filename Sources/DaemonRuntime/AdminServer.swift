import AdminCommands
import Foundation
import Glibc
import LinkRuntime
import POSIX

/// A daemon's admin endpoint: a Unix-domain socket (mode 0600 — only the daemon's user may connect)
/// on the daemon's `EventLoop`, answering one `Command` (`PhoneCommand`, `WatchCommand`) per connection.
///
/// Per connection: bytes are collected until the client half-closes (`onEndOfInput`); the request
/// is decoded by `AdminWire.decode` and handed to the handler on the loop; the encoded `AdminResponse` is written
/// and the connection closed after the flush, whatever its size. Limits, each answered with an `error` response:
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

    /// Answers a request asynchronously: call `respond` exactly once, on the loop, when done.
    package typealias AsyncHandler = (Command, _ respond: @escaping (AdminResponse) -> Void) -> Void

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
            let bytes = response.encoded
            // A response is ours and already whole in memory: the write buffer's cap (meant for
            // peers that stop reading) must never truncate it.
            connection.maximumBufferedWriteBytes = max(connection.maximumBufferedWriteBytes, bytes.count)
            connection.write(bytes)
            connection.closeAfterFlush()
        }

        let timer = loop.scheduleTimer(after: requestTimeout) { [requestTimeout] in
            answer(.error("the request was not completed within \(requestTimeout); send it and close the write side"))
        }
        connection.onClose = { [loop] _ in loop.cancelTimer(timer) }
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
            handler(decoded) { response in
                loop.preconditionInLoop()
                answer(response)
            }
        }
    }
}
