import Foundation
import LinkRuntime

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
    /// Sends `request` to the daemon at `path` and returns its response, whatever its status.
    package static func send(
        path: String, request: AdminRequest, timeout: Duration = .seconds(10)
    ) throws(AdminClientError) -> AdminResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // AdminRequest holds only strings; encoding it cannot fail.
        let body = (try? encoder.encode(request)).map(Array.init) ?? []
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
            let detail = reply.isEmpty ? "the connection closed without a reply" : AdminServer.describe(error)
            throw .malformedResponse(path: path, detail: detail)
        }
    }
}
