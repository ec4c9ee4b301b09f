import DaemonRuntime
import Glibc
import POSIX
import Synchronization
import Testing

@Suite("Signal watcher: signals become callbacks on the event loop")
struct SignalWatcherTests {
    @Test("a signal sent to the process is delivered on the loop's thread, and not after cancel")
    func deliveredOnLoop() async throws {
        let loop = try EventLoop(name: "signals")
        defer { loop.shutdown() }
        let received = Mutex<[(signal: Int32, onLoop: Bool)]>([])
        // SIGUSR2, not SIGTERM: other suites run in this process at the same time.
        let watcher = SignalWatcher(signals: [SIGUSR2], loop: loop) { signal in
            received.withLock { $0.append((signal, loop.inLoop)) }
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(30))
        // Thread-directed, so it reaches the watcher's sigwait even though the test process's other
        // threads were created before the signal was blocked.
        watcher.thread.send(SIGUSR2)
        while received.withLock({ $0.isEmpty }), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let first = try #require(received.withLock { $0.first })
        #expect(first.signal == SIGUSR2)
        #expect(first.onLoop)

        watcher.cancel()
        try await Task.sleep(for: .milliseconds(50))
        let countAfterCancel = received.withLock { $0.count }
        watcher.thread.send(SIGUSR2)  // still blocked, so the process survives it
        try await Task.sleep(for: .milliseconds(100))
        #expect(received.withLock { $0.count } == countAfterCancel)
        #expect(SignalWatcher.name(of: SIGTERM) == "SIGTERM" && SignalWatcher.name(of: 64) == "signal 64")
    }
}
