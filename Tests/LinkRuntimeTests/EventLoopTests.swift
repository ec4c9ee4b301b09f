import Foundation
import Glibc
import LinkRuntime
import POSIX
import TestSupport
import Testing

@Suite("Event loop: thread, work queue, timers, shutdown")
struct EventLoopTests {
    @Test("timers fire in deadline order, ties in scheduling order, and a cancelled timer never fires")
    func timersFireInDeadlineOrder() async throws {
        let loop = try EventLoop(name: "timers")
        defer { loop.shutdown() }
        let fired = Recorder<String>()
        loop.execute {
            loop.scheduleTimer(after: .milliseconds(30)) { fired.record("c") }
            loop.scheduleTimer(after: .milliseconds(10)) { fired.record("a") }
            loop.scheduleTimer(after: .milliseconds(20)) { fired.record("b") }
            loop.scheduleTimer(after: .milliseconds(10)) { fired.record("a2") }
            let cancelled = loop.scheduleTimer(after: .milliseconds(15)) { fired.record("cancelled") }
            // Later than every other deadline: once it fires, all earlier timers have had their turn.
            loop.scheduleTimer(after: .milliseconds(40)) { fired.record("end") }
            loop.cancelTimer(cancelled)
        }
        let order = try await fired.wait(for: "the last timer") { $0.contains("end") }
        #expect(order == ["a", "a2", "b", "c", "end"])
    }

    @Test("execute from many threads runs every closure exactly once, on the loop thread")
    func executeFromManyThreads() async throws {
        let loop = try EventLoop(name: "execute")
        defer { loop.shutdown() }
        let onLoop = Recorder<Bool>()
        #expect(!loop.inLoop)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<200 { loop.execute { onLoop.record(loop.inLoop) } }
        }
        let results = try await onLoop.wait(for: "1600 closures") { $0.count >= 1600 }
        #expect(results.count == 1600)
        #expect(results.allSatisfy { $0 })
    }

    @Test("submit returns the closure's result from the loop thread")
    func submitReturnsResult() async throws {
        let loop = try EventLoop(name: "submit")
        defer { loop.shutdown() }
        let ranOnLoop = try await loop.submit { loop.inLoop }
        #expect(ranOnLoop)
    }

    @Test("shutdown is idempotent, stops the thread, and later work is refused")
    func shutdownStopsThread() async throws {
        let name = uniqueLoopName("stop")
        let loop = try EventLoop(name: name)
        _ = try await loop.submit { () }
        #expect(threadExists(named: name))
        loop.shutdown()
        loop.shutdown()
        #expect(!threadExists(named: name))
        await #expect(throws: SocketError.loopShutDown(loop: name)) { try await loop.submit { () } }
    }

    @Test("shutdown called on the loop thread stops the loop; a later shutdown from outside returns")
    func shutdownFromInsideLoop() async throws {
        let name = uniqueLoopName("inside")
        let loop = try EventLoop(name: name)
        try await loop.submit { loop.shutdown() }
        loop.shutdown()
        await #expect(throws: SocketError.loopShutDown(loop: name)) { try await loop.submit { () } }
    }

    @Test("shutdown closes listeners and connections, reporting loopShutDown, and leaves no socket open")
    func shutdownClosesEverything() async throws {
        let loop = try EventLoop(name: "shutdown-all")
        let closes = Recorder<Connection.CloseReason>()
        let accepted = Recorder<Int>()
        let listener = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onClose = { closes.record($0) }
                accepted.record(connection.id)
            }
        }
        for _ in 0..<3 {
            _ = try await connect(on: loop, port: listener.port) { connection in
                connection.onClose = { closes.record($0) }
            }.get()
        }
        try await accepted.wait(for: "three accepted connections") { $0.count == 3 }
        let inodes = try socketInodes(usingPort: listener.port)
        #expect(inodes.count == 7)  // the listener plus both ends of three connections
        loop.shutdown()
        #expect(closes.values == Array(repeating: .loopShutDown, count: 6))
        #expect(try openSocketInodes().isDisjoint(with: inodes))
    }
}
