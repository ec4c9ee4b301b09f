import Foundation
import Glibc
import LinkProtocol
import Nodes
import Synchronization
import TestSupport
import Testing

/// Silent TCP connections to phoned's link port, each reopened as soon as phoned drops it: what an
/// unauthenticated client on the network can do without the pairing key. Runs on its own thread.
final class IdleConnectionFlood: Sendable {
    private let running = Atomic<Bool>(true)
    private let reopenCount = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    /// Keeps `count` connections open to `port` on the loopback until `stop()`, reopening the ones
    /// phoned dropped after `pause` (so a flood does not take a core from the other tests).
    init(port: UInt16, count: Int, pause: TimeInterval = 0) {
        Thread.detachNewThread { [self] in
            run(port: port, count: count, pause: pause)
            finished.signal()
        }
    }

    /// How many times a connection phoned dropped was opened again.
    var reopened: Int { reopenCount.load(ordering: .relaxed) }

    func stop() {
        running.store(false, ordering: .relaxed)
        finished.wait()
    }

    private func run(port: UInt16, count: Int, pause: TimeInterval) {
        var sockets = (0..<count).map { _ in Self.connect(port: port) }
        while running.load(ordering: .relaxed) {
            var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polled, nfds_t(polled.count), 50)
            let dropped = sockets.indices.filter { sockets[$0] < 0 || polled[$0].revents != 0 }
            if !dropped.isEmpty, pause > 0 { Thread.sleep(forTimeInterval: pause) }
            for index in dropped {
                // Anything from phoned (an error frame, EOF) means it dropped us: open another.
                if sockets[index] >= 0 { close(sockets[index]) }
                sockets[index] = Self.connect(port: port)
                reopenCount.add(1, ordering: .relaxed)
            }
        }
        for socket in sockets where socket >= 0 { close(socket) }
    }

    /// A blocking connect to 127.0.0.1:`port`; -1 when it fails (tried again on the next round).
    private static func connect(port: UInt16) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socket)
            return -1
        }
        return socket
    }
}

@Suite("Unauthenticated connections never lock the watch out")
struct HandshakeFloodTests {
    @Test("a restarted watchd relinks while a trickle of 8 and a flood of 200 idle connections go on")
    func watchRelinksThroughFlood() async throws {
        let system = try SyncSystem("flood")
        // Idle connections are not dropped at a deadline during the test: only phoned's cap policy
        // can let the watch in (refusing the newest, as before, never does).
        try system.writePhonedConfig(["handshakeTimeoutMilliseconds": "60000"])
        try await system.startBoth()
        try await system.stopWatchd()

        // The trickle of the issue (eight silent connections reopened whenever phoned drops them),
        // and a flood of 200 more, both still going while the watch comes back. The short pauses
        // before reopening keep them from taking a core from the tests running alongside.
        let trickle = IdleConnectionFlood(port: system.port, count: 8, pause: 0.01)
        let flood = IdleConnectionFlood(port: system.port, count: 200, pause: 0.1)
        defer {
            trickle.stop()
            flood.stop()
        }
        try await system.eventually("phoned drops idle connections to make room") { flood.reopened > 0 }

        let clock = ContinuousClock()
        let restarted = clock.now
        try await system.startWatchd()
        try await system.waitForWatchStatus("linked through the flood") { $0.linked }
        // The figure, for people; the assertion is that it relinked at all while the flood went on.
        print(
            "watchd relinked \(clock.now - restarted) after its restart; idle connections reopened: "
                + "\(trickle.reopened + flood.reopened)")
        // The flood goes on, and the link stays up through it.
        let reopened = flood.reopened
        try await system.eventually("the flood goes on") { flood.reopened > reopened + 200 }
        #expect(try await system.watchStatus().linked)
        #expect(system.phoned?.isRunning == true)
        // The link carries data, not just a handshake.
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
    }
}
