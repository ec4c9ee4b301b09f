import Foundation
import Glibc
import LinkRuntime
import POSIX
import TestSupport
import Testing

@Suite("Event loop: TCP listeners and connections over loopback")
struct ConnectionTests {
    /// Listens on 127.0.0.1, port 0, with connections echoing what they read.
    private func echoListener(on loop: EventLoop) async throws -> Listener {
        try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onRead = { connection.write($0) }
            }
        }
    }

    @Test("a client sending 1 MiB in pieces gets every byte echoed back in order")
    func echoesOneMebibyte() async throws {
        let loop = try EventLoop(name: "echo")
        defer { loop.shutdown() }
        let listener = try await echoListener(on: loop)
        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let received = Recorder<UInt8>()
        let client = try await connect(on: loop, port: listener.port) { connection in
            connection.onRead = { received.record(contentsOf: $0) }
        }.get()
        loop.execute {
            for start in stride(from: 0, to: payload.count, by: 7919) {
                client.write(Array(payload[start..<min(start + 7919, payload.count)]))
            }
        }
        let echoed = try await received.wait(for: "1 MiB echoed") { $0.count >= payload.count }
        #expect(echoed == payload)
    }

    @Test("connecting to a port nobody listens on fails with connectionRefused naming the port")
    func connectionRefused() async throws {
        let loop = try EventLoop(name: "refused")
        defer { loop.shutdown() }
        // Bound but not listening: the port is ours, and every connect to it is refused.
        let reserved = try RawSocket()
        let port = try reserved.bindLoopback()
        let result = await connect(on: loop, port: port)
        #expect(throws: SocketError.connectionRefused(host: "127.0.0.1", port: port)) { try result.get() }
        if case .failure(let error) = result { #expect(error.description.contains("127.0.0.1:\(port)")) }
    }

    @Test("a connect the listener's full backlog never answers fails with connectTimedOut")
    func connectTimesOut() async throws {
        let loop = try EventLoop(name: "timeout")
        defer { loop.shutdown() }
        let listener = try RawSocket()
        let port = try listener.bindLoopback()
        try #require(Glibc.listen(listener.descriptor, 0) == 0)
        // One queued, never-accepted connection fills a backlog of 0; Linux then drops further SYNs.
        let filler = try RawSocket()
        try filler.connectLoopback(port: port)
        try listener.waitUntilReady(for: POLLIN)
        let result = await connect(on: loop, port: port, timeout: .milliseconds(300))
        #expect(throws: SocketError.connectTimedOut(host: "127.0.0.1", port: port, timeout: .milliseconds(300))) {
            try result.get()
        }
    }

    @Test("a host that is not a numeric address or localhost is refused without any lookup")
    func unsupportedHost() async throws {
        let loop = try EventLoop(name: "host")
        defer { loop.shutdown() }
        await #expect(throws: SocketError.unsupportedHost("watch.example")) {
            try await loop.submit { try loop.listen(host: "watch.example", port: 0) { _ in } }
        }
        let result = await connect(on: loop, host: "watch.example", port: 1)
        #expect(throws: SocketError.unsupportedHost("watch.example")) { try result.get() }
    }

    @Test("listen and connect work over IPv6 loopback and localhost")
    func ipv6AndLocalhost() async throws {
        let loop = try EventLoop(name: "ipv6")
        defer { loop.shutdown() }
        let received = Recorder<UInt8>()
        let listeners = try await loop.submit {
            [
                try loop.listen(host: "::1", port: 0) { connection in connection.onRead = { connection.write($0) } },
                try loop.listen(host: "localhost", port: 0) { connection in connection.onRead = { connection.write($0) }
                },
            ]
        }
        #expect(listeners[0].localAddress.description == "[::1]:\(listeners[0].port)")
        for (host, listener) in zip(["::1", "localhost"], listeners) {
            let client = try await connect(on: loop, host: host, port: listener.port) { connection in
                connection.onRead = { received.record(contentsOf: $0) }
            }.get()
            loop.execute { client.write([1, 2, 3]) }
        }
        try await received.wait(for: "both echoes") { $0.count == 6 }
    }

    @Test("a peer close reaches onClose exactly once on both sides; a repeated local close is a no-op")
    func closeIsReportedOnce() async throws {
        let loop = try EventLoop(name: "close")
        let serverCloses = Recorder<Connection.CloseReason>()
        let clientCloses = Recorder<Connection.CloseReason>()
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onClose = { serverCloses.record($0) }
                connection.onRead = { _ in connection.close() }
            }
        }
        let client = try await connect(on: loop, port: listener.port) { connection in
            connection.onClose = { clientCloses.record($0) }
        }.get()
        loop.execute { client.write([0]) }
        try await clientCloses.wait(for: "the client's close") { !$0.isEmpty }
        try await loop.submit {
            client.close()
            client.close()
        }
        // Shutdown would report loopShutDown for anything still registered: nothing may be.
        loop.shutdown()
        #expect(serverCloses.values == [.closedLocally])
        #expect(clientCloses.values == [.peerClosed])
    }

    @Test("a peer reset is reported as reset, and writing to it raises no SIGPIPE")
    func peerReset() async throws {
        let loop = try EventLoop(name: "reset")
        defer { loop.shutdown() }
        let accepted = Recorder<Connection>()
        let closes = Recorder<Connection.CloseReason>()
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onClose = { closes.record($0) }
                accepted.record(connection)
            }
        }
        do {
            let peer = try RawSocket()
            try peer.connectLoopback(port: listener.port)
            try await accepted.wait(for: "the accept") { !$0.isEmpty }
            // Linger 0: close() sends RST instead of FIN.
            var abort = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(peer.descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        }
        let server = try #require(accepted.values.first)
        // Writes race the RST's arrival; whichever side notices first, the reason is the same.
        loop.execute { server.write([1, 2, 3]) }
        try await closes.wait(for: "the reset to be noticed") { !$0.isEmpty }
        #expect(closes.values == [.reset])
    }

    @Test("closeAfterFlush sends every queued byte before the FIN")
    func closeAfterFlushDeliversQueuedBytes() async throws {
        let loop = try EventLoop(name: "flush")
        defer { loop.shutdown() }
        let farewell = (0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let serverCloses = Recorder<Connection.CloseReason>()
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onClose = { serverCloses.record($0) }
                connection.write(farewell)
                connection.closeAfterFlush()
                connection.write([0xFF])  // after closeAfterFlush: dropped
            }
        }
        let received = Recorder<UInt8>()
        let bytesAtClose = Recorder<Int>()
        _ = try await connect(on: loop, port: listener.port) { connection in
            connection.onRead = { received.record(contentsOf: $0) }
            connection.onClose = { _ in bytesAtClose.record(received.values.count) }
        }.get()
        try await bytesAtClose.wait(for: "the client to see EOF") { !$0.isEmpty }
        #expect(bytesAtClose.values == [farewell.count])
        #expect(received.values == farewell)
        try await serverCloses.wait(for: "the server's close") { !$0.isEmpty }
        #expect(serverCloses.values == [.closedLocally])
    }

    @Test("a peer that never reads is cut off at the write-buffer limit while other connections keep working")
    func writeBufferLimit() async throws {
        let loop = try EventLoop(name: "limit")
        defer { loop.shutdown() }
        let closes = Recorder<Connection.CloseReason>()
        let chunk = [UInt8](repeating: 0xAB, count: 64 * 1024)
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.maximumBufferedWriteBytes = 256 * 1024
                connection.onClose = { closes.record($0) }
                connection.onRead = { connection.write($0) }
                func flood() {
                    guard !connection.isClosed else { return }
                    connection.write(chunk)
                    loop.scheduleTimer(after: .zero) { flood() }
                }
                flood()
            }
        }
        let stalled = try RawSocket()
        stalled.setOption(SO_RCVBUF, 4096)
        try stalled.connectLoopback(port: listener.port)
        let reasons = try await closes.wait(for: "the flooding connection to be cut off") { !$0.isEmpty }
        guard case .writeBufferLimitExceeded(let buffered, let limit) = try #require(reasons.first) else {
            Issue.record("closed for another reason: \(reasons)")
            return
        }
        #expect(limit == 256 * 1024)
        #expect(buffered > limit)

        let received = Recorder<UInt8>()
        let healthy = try await connect(on: loop, port: listener.port) { connection in
            connection.onRead = { received.record(contentsOf: $0) }
        }.get()
        // The flood runs on the healthy connection too, but this peer reads, so it stays under the limit.
        try await received.wait(for: "the healthy connection's data") { $0.count >= 1024 * 1024 }
        #expect(try await loop.submit { !healthy.isClosed })
    }

    @Test("opening and closing 50 connections leaves no socket descriptor behind")
    func noDescriptorLeak() async throws {
        let loop = try EventLoop(name: "leak")
        defer { loop.shutdown() }
        let serverCloses = Recorder<Connection.CloseReason>()
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onClose = { serverCloses.record($0) }
            }
        }
        var clients: [Connection] = []
        for _ in 0..<50 {
            clients.append(try await connect(on: loop, port: listener.port).get())
        }
        // Counting all of /proc/self/fd would race with tests running in parallel; the inodes of
        // the sockets on this listener's port identify exactly what this test opened.
        var inodes: Set<String> = []
        try await Recorder<Int>().wait(for: "101 sockets on the listener's port") { _ in
            inodes = (try? socketInodes(usingPort: listener.port)) ?? []
            return inodes.count == 101
        }
        #expect(try inodes.isSubset(of: openSocketInodes()))
        try await loop.submit { [clients] in
            for client in clients { client.close() }
            listener.close()
        }
        try await serverCloses.wait(for: "50 server-side closes") { $0.count == 50 }
        #expect(serverCloses.values.allSatisfy { $0 == .peerClosed })
        #expect(try openSocketInodes().isDisjoint(with: inodes))
    }
}
