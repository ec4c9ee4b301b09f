import Foundation
import Glibc
import LinkRuntime
import POSIX
import TestSupport
import Testing

@Suite("Event loop: Unix-domain admin sockets and the blocking CLI client")
struct UnixSocketTests {
    /// Listens at `path` answering each request, once the client half-closes, with it reversed.
    private func reversingServer(on loop: EventLoop, path: String) async throws -> Listener {
        try await loop.submit {
            try loop.listenUnix(path: path) { connection in
                var request: [UInt8] = []
                connection.onRead = { request += $0 }
                connection.onEndOfInput = {
                    connection.write(request.reversed())
                    connection.closeAfterFlush()
                }
            }
        }
    }

    @Test("listenUnix creates an owner-only (0600) socket file and a request gets its reply")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory("unix-admin")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "unix")
        defer { loop.shutdown() }
        _ = try await reversingServer(on: loop, path: path)

        var status = stat()
        try #require(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == 0o600)

        let reply = try UnixSocketClient.request(path: path, bytes: Array("status --json".utf8))
        #expect(String(decoding: reply, as: UTF8.self) == "nosj-- sutats")
        let large = (0..<(300 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 5) }
        #expect(try UnixSocketClient.request(path: path, bytes: large) == large.reversed())
    }

    @Test("a stale socket file left by a dead daemon is replaced")
    func staleSocketReplaced() async throws {
        let directory = try TemporaryDirectory("unix-stale")
        let path = directory.appending("watchd.sock")
        do {
            let dead = try RawSocket(family: AF_UNIX)
            try dead.bindUnix(path: path)
        }  // closed without unlinking: the file stays, nobody accepts on it
        #expect(FileManager.default.fileExists(atPath: path))
        let loop = try EventLoop(name: "stale")
        defer { loop.shutdown() }
        _ = try await reversingServer(on: loop, path: path)
        #expect(try UnixSocketClient.request(path: path, bytes: [1, 2]) == [2, 1])
    }

    @Test("listenUnix refuses to delete a regular file or steal a live daemon's socket")
    func refusesToReplaceLiveOrForeignFiles() async throws {
        let directory = try TemporaryDirectory("unix-refuse")
        let loop = try EventLoop(name: "refuse")
        defer { loop.shutdown() }
        let regular = directory.appending("notes.txt")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: regular))
        await #expect(throws: SocketError.notASocket(path: regular)) {
            try await loop.submit { try loop.listenUnix(path: regular) { _ in } }
        }
        #expect(try String(contentsOfFile: regular, encoding: .utf8) == "keep me")

        let live = directory.appending("live.sock")
        _ = try await reversingServer(on: loop, path: live)
        await #expect(throws: SocketError.unixSocketInUse(path: live)) {
            try await loop.submit { try loop.listenUnix(path: live) { _ in } }
        }
        #expect(try UnixSocketClient.request(path: live, bytes: [7]) == [7])
    }

    @Test("a request to a missing socket, or one whose listener closed, is daemonUnreachable")
    func daemonUnreachable() async throws {
        let directory = try TemporaryDirectory("unix-missing")
        let missing = directory.appending("absent.sock")
        #expect(throws: SocketError.daemonUnreachable(path: missing)) {
            try UnixSocketClient.request(path: missing, bytes: [1])
        }
        #expect(SocketError.daemonUnreachable(path: missing).description.contains(missing))

        let path = directory.appending("closing.sock")
        let loop = try EventLoop(name: "unreachable")
        defer { loop.shutdown() }
        let listener = try await reversingServer(on: loop, path: path)
        try await loop.submit { listener.close() }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: SocketError.daemonUnreachable(path: path)) {
            try UnixSocketClient.request(path: path, bytes: [1])
        }
    }

    @Test("a socket path longer than sockaddr_un allows is reported with its limit")
    func pathTooLong() async throws {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        #expect(throws: SocketError.unixPathTooLong(path: path, maximumBytes: SocketAddress.maximumUnixPathBytes)) {
            try UnixSocketClient.request(path: path, bytes: [])
        }
    }
}
