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

    package var description: String {
        switch self {
        case .daemonUnreachable(let path): return "no daemon is listening on \(path)"
        case .timedOut(let path, let timeout): return "the daemon on \(path) did not answer within \(timeout)"
        case .transport(let error): return error.description
        case .malformedResponse(let path, let detail):
            return "the daemon on \(path) sent a malformed response: \(detail)"
        }
    }
}

/// The CLI side of the admin socket: one blocking request, one response.
///
/// Blocking like `UnixSocketClient`, which it uses: call it from a CLI's main thread only.
package enum AdminClient {
    /// Sends `command` to the daemon at `path` and returns its response, whatever its status.
    package static func send(
        path: String, command: some AdminCommand, timeout: Duration = .seconds(10)
    ) throws(AdminClientError) -> AdminResponse {
        try send(path: path, request: AdminWire.encode(command), timeout: timeout)
    }

    /// Sends the encoded request `body` (see `AdminWire`) and returns the daemon's response.
    package static func send(
        path: String, request body: [UInt8], timeout: Duration = .seconds(10)
    ) throws(AdminClientError) -> AdminResponse {
        let reply: [UInt8]
        do {
            // No cap on the reply: a daemon's answer (a long history, say) must arrive whole.
            reply = try UnixSocketClient.request(
                path: path, bytes: body, timeout: timeout, maximumResponseBytes: Int.max)
        } catch {
            switch error {
            case .daemonUnreachable(let path): throw .daemonUnreachable(path: path)
            case .requestTimedOut(let path, let timeout): throw .timedOut(path: path, timeout: timeout)
            default: throw .transport(error)
            }
        }
        do {
            return try JSONDecoder().decode(AdminResponse.self, from: Data(reply))
        } catch {
            let detail = reply.isEmpty ? "the connection closed without a reply" : AdminWire.describe(error)
            throw .malformedResponse(path: path, detail: detail)
        }
    }
}
