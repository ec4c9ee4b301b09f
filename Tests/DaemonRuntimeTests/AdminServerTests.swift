import AdminClient
import AdminCommands
import ArgumentParsing
import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime
import POSIX
import Synchronization
import TestSupport
import Testing

/// A stand-in daemon's command enum: the transport serves any `AdminCommand`.
enum StubCommand: AdminCommand {
    /// It stands in for phoned (the CLI runner under test administers "phoned").
    static let daemon = "phoned"

    case status
    case endSession(id: String)
    case tag(documents: [String])
    /// Every `AdminCommand` has the trace verb (`trace --follow` repeats it); the stub grammar never parses it.
    case trace(TraceQuery)

    /// `status`, `session end <session-id>`, `tag <documents>...` (the grammar of `fakePhonectlParse`).
    init(_ parsed: ParsedCommand) throws(UsageError) {
        switch parsed.path {
        case ["status"]: self = .status
        case ["session", "end"]: self = .endSession(id: try parsed.string("session-id"))
        default: self = .tag(documents: parsed.strings("documents"))
        }
    }

    func validate() {}
}

/// Starts an `AdminServer` at `path` on `loop` answering with `handler`.
func startAdminServer(
    on loop: EventLoop, path: String,
    maximumRequestBytes: Int = AdminServer<StubCommand>.defaultMaximumRequestBytes,
    requestTimeout: Duration = AdminServer<StubCommand>.defaultRequestTimeout,
    handler: @escaping @Sendable (StubCommand) -> AdminResponse
) async throws -> AdminServer<StubCommand> {
    try await loop.submit {
        try AdminServer(
            loop: loop, path: path, maximumRequestBytes: maximumRequestBytes, requestTimeout: requestTimeout,
            handler: handler)
    }
}

/// The response a raw exchange produced, decoded.
private func decodeResponse(_ bytes: [UInt8]) throws -> AdminResponse {
    try JSONDecoder().decode(AdminResponse.self, from: Data(bytes))
}

@Suite("Admin socket: one JSON request, one JSON response, over a 0600 Unix socket")
struct AdminServerTests {
    @Test("a request round-trips through an owner-only socket and the handler runs on the loop")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory("admin")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin")
        defer { loop.shutdown() }
        let seen = Mutex<[(StubCommand, Bool)]>([])
        let server = try await startAdminServer(on: loop, path: path) { command in
            seen.withLock { $0.append((command, loop.inLoop)) }
            guard case .endSession(let id) = command else { return .ok() }
            return .ok(text: "ended \(id)", json: #"{"ended":true}"#)
        }

        var status = stat()
        try #require(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == 0o600)

        let request = StubCommand.endSession(id: "S-1")
        let response = try AdminClient.send(path: path, command: request)
        #expect(response == AdminResponse(status: .ok, text: "ended S-1", json: #"{"ended":true}"#).from("phoned"))
        let recorded = seen.withLock { $0 }
        #expect(recorded.count == 1)
        #expect(recorded.first?.0 == request)
        #expect(recorded.first?.1 == true)

        // Sequential requests each get their own connection and answer.
        #expect(try AdminClient.send(path: path, command: StubCommand.status).status == .ok)
        try await loop.submit { server.close() }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("the wire format is plain JSON with the documented field names")
    func wireFormat() async throws {
        let directory = try TemporaryDirectory("admin-wire")
        let path = directory.appending("watchd.sock")
        let loop = try EventLoop(name: "admin-wire")
        defer { loop.shutdown() }
        let server = try await startAdminServer(on: loop, path: path) { command in
            command == .tag(documents: ["a", "b"]) ? .refused("no such tag") : .error("unexpected request \(command)")
        }
        let raw = #"{"tag":{"documents":["a","b"]}}"#
        let reply = try UnixSocketClient.request(path: path, bytes: Array(raw.utf8))
        #expect(
            String(decoding: reply, as: UTF8.self)
                == #"{"daemon":"phoned","message":"no such tag","status":"refused"}"# + "\n")
        _ = server
    }

    @Test("a request over the size cap is refused without reaching the handler")
    func oversizedRequest() async throws {
        let directory = try TemporaryDirectory("admin-cap")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-cap")
        defer { loop.shutdown() }
        let handled = Mutex(0)
        let server = try await startAdminServer(on: loop, path: path, maximumRequestBytes: 4096) { _ in
            handled.withLock { $0 += 1 }
            return .ok()
        }
        let huge = StubCommand.tag(documents: [String(repeating: "x", count: 300_000)])
        let response = try AdminClient.send(path: path, command: huge)
        #expect(response == .error("the request is larger than 4096 bytes").from("phoned"))
        #expect(handled.withLock { $0 } == 0)
        // The server is still serving afterwards.
        #expect(try AdminClient.send(path: path, command: StubCommand.status) == .ok().from("phoned"))
        _ = server
    }

    @Test("the default cap is 1 MiB: a request just over it is refused")
    func defaultCap() async throws {
        let directory = try TemporaryDirectory("admin-mib")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-mib")
        defer { loop.shutdown() }
        let server = try await startAdminServer(on: loop, path: path) { _ in .ok() }
        let request = StubCommand.tag(documents: [String(repeating: "z", count: 1024 * 1024)])
        #expect(
            try AdminClient.send(path: path, command: request)
                == .error("the request is larger than 1048576 bytes").from("phoned"))
        _ = server
    }

    @Test("a request that is not JSON, or lacks a field, gets an error response")
    func malformedRequest() async throws {
        let directory = try TemporaryDirectory("admin-bad")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-bad")
        defer { loop.shutdown() }
        let server = try await startAdminServer(on: loop, path: path) { _ in .ok() }
        let notJSON = try decodeResponse(UnixSocketClient.request(path: path, bytes: Array("status --json".utf8)))
        #expect(notJSON.status == .error)
        #expect(notJSON.message?.hasPrefix("malformed admin request: ") == true)
        let missing = try decodeResponse(UnixSocketClient.request(path: path, bytes: Array(#"{"endSession":{}}"#.utf8)))
        #expect(missing == .error(#"malformed admin request: missing field "id" in "endSession""#).from("phoned"))
        // The string-path requests of old are not commands any more.
        let legacyRequest = #"{"command":["status"],"arguments":{},"flags":[]}"#
        let legacy = try decodeResponse(UnixSocketClient.request(path: path, bytes: Array(legacyRequest.utf8)))
        #expect(legacy.status == .error && legacy.message?.hasPrefix("malformed admin request: ") == true)
        _ = server
    }

    @Test("a handler may answer later, from a timer on the loop")
    func asynchronousHandler() async throws {
        let directory = try TemporaryDirectory("admin-async")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-async")
        defer { loop.shutdown() }
        let server = try await loop.submit {
            try AdminServer(loop: loop, path: path) { (command: StubCommand, respond) in
                loop.scheduleTimer(after: .milliseconds(20)) { respond(.ok(text: "later: \(command)")) }
            }
        }
        #expect(try AdminClient.send(path: path, command: StubCommand.status).text == "later: status")
        _ = server
    }

    @Test("a client that never finishes its request is answered with a timeout error and dropped")
    func stuckClient() async throws {
        let directory = try TemporaryDirectory("admin-stuck")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-stuck")
        defer { loop.shutdown() }
        let server = try await startAdminServer(on: loop, path: path, requestTimeout: .milliseconds(100)) { _ in .ok() }

        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(client >= 0)
        defer { close(client) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(connected == 0)
        _ = send(client, "{\"comm", 6, Int32(MSG_NOSIGNAL))  // a partial request, never finished

        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            try #require(poll(&entry, 1, 30_000) == 1, "no answer to a stuck client")
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            reply += chunk[0..<count]
        }
        let response = try decodeResponse(reply)
        #expect(response.status == .error)
        #expect(response.message?.contains("not completed within") == true)
        _ = server
    }

    @Test("a client aimed at a missing socket reports the daemon unreachable")
    func missingSocket() throws {
        let directory = try TemporaryDirectory("admin-missing")
        let path = directory.appending("absent.sock")
        #expect(throws: AdminClientError.daemonUnreachable(path: path)) {
            try AdminClient.send(path: path, command: StubCommand.status)
        }
    }

    /// A daemon that exits while serving (after a failed durable write, say) sends nothing; phonectl
    /// said "sent a malformed response", which blamed the wrong thing.
    @Test("a connection closed without a byte of reply is reported as no reply, not as malformed")
    func noReply() async throws {
        let directory = try TemporaryDirectory("admin-silent")
        let path = directory.appending("silent.sock")
        let loop = try EventLoop(name: "admin-silent")
        defer { loop.shutdown() }
        let listener = try await loop.submit {
            try loop.listenUnix(path: path) { connection in
                connection.onEndOfInput = { connection.close() }
            }
        }
        #expect(throws: AdminClientError.noReply(path: path)) {
            try AdminClient.send(path: path, command: StubCommand.status)
        }
        _ = listener
    }

    @Test("a reply that is not an AdminResponse is reported as malformed")
    func malformedResponse() async throws {
        let directory = try TemporaryDirectory("admin-garbage")
        let path = directory.appending("odd.sock")
        let loop = try EventLoop(name: "admin-garbage")
        defer { loop.shutdown() }
        let listener = try await loop.submit {
            try loop.listenUnix(path: path) { connection in
                connection.onEndOfInput = {
                    connection.write(Array("hello".utf8))
                    connection.closeAfterFlush()
                }
            }
        }
        #expect {
            try AdminClient.send(path: path, command: StubCommand.status)
        } throws: { error in
            guard case AdminClientError.malformedResponse(let reported, _) = error else { return false }
            return reported == path
        }
        _ = listener
    }
}

extension AdminResponse {
    /// This response as `daemon`'s server sends it: every response names the daemon that answered.
    func from(_ daemon: String) -> AdminResponse {
        var stamped = self
        stamped.daemon = daemon
        return stamped
    }
}
