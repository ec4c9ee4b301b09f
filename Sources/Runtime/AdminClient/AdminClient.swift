import AdminCommands
import Foundation
import POSIX

/// Why an admin request got no usable answer (as opposed to a daemon that answered `refused`).
package enum AdminClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No daemon listens at `path`: the socket file is missing or stale. A CLI exits 69.
    case daemonUnreachable(path: String)
    /// The daemon did not answer within `timeout`. A CLI exits 69: it is not serving.
    case timedOut(path: String, timeout: Duration)
    /// Connecting, sending or receiving failed otherwise (permission denied on the socket, say).
    case transport(SocketError)
    /// The daemon answered with something that is not an `AdminResponse`.
    case malformedResponse(path: String, detail: String)
    /// The daemon closed the connection without a byte of reply: it most likely stopped while
    /// serving the request (a kill, or its exit after a failed durable write).
    case noReply(path: String)

    package var description: String {
        switch self {
        case .daemonUnreachable(let path): return "no daemon is listening on \(path)"
        case .timedOut(let path, let timeout): return "the daemon on \(path) did not answer within \(timeout)"
        case .transport(let error): return error.description
        case .malformedResponse(let path, let detail):
            return "the daemon on \(path) sent a malformed response: \(detail)"
        case .noReply(let path): return "the daemon on \(path) closed the connection without a reply"
        }
    }
}

/// The CLI side of the admin socket: one blocking request, one response (whole, or in chunks).
///
/// Blocking like `UnixSocketClient`, which it uses: call it from a CLI's main thread only.
package enum AdminClient {
    /// Sends `command` to the daemon at `path` and returns its response, whatever its status; a
    /// chunked reply is returned whole (its pieces concatenated).
    package static func send(
        path: String, command: some AdminCommand, timeout: Duration = .seconds(10)
    ) throws(AdminClientError) -> AdminResponse {
        try send(path: path, request: AdminWire.encode(command), timeout: timeout)
    }

    /// Sends the encoded request `body` (see `AdminWire`) and returns the daemon's response.
    ///
    /// Each chunk of a chunked reply (`more`) goes to `onChunk` as it arrives when one is given —
    /// and then the returned response is only the last one, which says how the reply ended — else
    /// into the returned response. `timeout` bounds each wait for the daemon's next bytes, so a long
    /// reply that keeps coming never times out.
    package static func send(
        path: String, request body: [UInt8], timeout: Duration = .seconds(10),
        onChunk: ((AdminResponse) -> Void)? = nil
    ) throws(AdminClientError) -> AdminResponse {
        var reader = ReplyReader(onChunk: onChunk)
        do {
            try UnixSocketClient.stream(path: path, bytes: body, idleTimeout: timeout) { reader.take($0) }
        } catch {
            switch error {
            case .daemonUnreachable(let path): throw .daemonUnreachable(path: path)
            case .requestTimedOut(let path, let timeout): throw .timedOut(path: path, timeout: timeout)
            default: throw .transport(error)
            }
        }
        guard let reply = reader.finish() else {
            if reader.closedWithoutReply { throw .noReply(path: path) }
            throw .malformedResponse(path: path, detail: reader.failure ?? "no reply")
        }
        return reply
    }
}

/// Splits a reply into its newline-terminated `AdminResponse`s and puts a chunked one together.
private struct ReplyReader {
    let onChunk: ((AdminResponse) -> Void)?
    var line: [UInt8] = []
    var reply: AdminResponse?
    var ended = false
    var failure: String?
    /// The daemon sent nothing at all before closing.
    var closedWithoutReply = false

    /// Takes the next bytes; false once the reply cannot be used (then `finish` says why).
    mutating func take(_ piece: ArraySlice<UInt8>) -> Bool {
        for byte in piece {
            guard byte == 0x0A else {
                line.append(byte)
                continue
            }
            guard !ended else {
                failure = "bytes after the last response"
                return false
            }
            guard accept(line) else { return false }
            line = []
        }
        return true
    }

    /// The reply; nil when there is none, and then `failure` says why.
    mutating func finish() -> AdminResponse? {
        // A reply without its trailing newline (a daemon cut off mid-line fails to decode here).
        if failure == nil, !line.isEmpty, !ended { _ = accept(line) }
        guard failure == nil else { return nil }
        guard let reply, ended else {
            closedWithoutReply = reply == nil && line.isEmpty
            failure =
                closedWithoutReply
                ? "the connection closed without a reply" : "the connection closed before the reply ended"
            return nil
        }
        return reply
    }

    private mutating func accept(_ line: [UInt8]) -> Bool {
        let response: AdminResponse
        do {
            response = try AdminWire.read(line, byHand: AdminResponse.readByHand)
        } catch {
            failure = AdminWire.describe(error)
            return false
        }
        ended = response.more != true
        if !ended, let onChunk {
            onChunk(response)
        } else if reply == nil {
            reply = response
        } else {
            reply?.append(response)
        }
        return true
    }
}
