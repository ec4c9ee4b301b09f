import Synchronization

/// Collects values recorded from another thread (an event loop, a watcher) so a test can wait for them.
///
/// The wait polls with a generous timeout purely as a hang guard; assertions are made on what was
/// recorded, never on how long it took.
package final class Recorder<Value: Sendable>: Sendable {
    /// A Mutex because another thread records while the test's task reads.
    private let storage = Mutex<[Value]>([])

    package init() {}

    /// Appends one value.
    package func record(_ value: Value) { storage.withLock { $0.append(value) } }
    /// Appends several values.
    package func record(contentsOf values: [Value]) { storage.withLock { $0.append(contentsOf: values) } }
    /// Everything recorded so far.
    package var values: [Value] { storage.withLock { $0 } }

    /// Waits until `condition` holds for the recorded values, and returns them.
    @discardableResult
    package func wait(
        for what: String, timeout: Duration = .seconds(30), until condition: ([Value]) -> Bool
    ) async throws -> [Value] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let snapshot = values
            if condition(snapshot) { return snapshot }
            guard clock.now < deadline else { throw HangGuardExpired(waitingFor: what, recorded: snapshot.count) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A test waited far longer than the behaviour could plausibly take: something hangs.
package struct HangGuardExpired: Error, CustomStringConvertible {
    package init(waitingFor: String, recorded: Int) {
        self.waitingFor = waitingFor
        self.recorded = recorded
    }

    package let waitingFor: String
    package let recorded: Int
    package var description: String { "gave up waiting for \(waitingFor) (\(recorded) values recorded)" }
}
