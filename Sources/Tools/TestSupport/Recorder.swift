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
        for what: String, timeout: Duration = hangGuard, until condition: ([Value]) -> Bool
    ) async throws -> [Value] {
        var snapshot: [Value] = []
        try await pollUntil(timeout: timeout, every: .milliseconds(5)) {
            snapshot = values
            return condition(snapshot)
        } expired: {
            HangGuardExpired(waitingFor: what, recorded: snapshot.count)
        }
        return snapshot
    }
}

/// How long a test waits before it calls something hung. Never an assertion on time: the whole
/// suite on two cores can hold a task off its thread for a minute (two long CPU-bound tests at once),
/// and a debug phoned reading 2,250 runs takes about 6 s alone, several times that under the suite.
package let hangGuard: Duration = .seconds(90)

/// Polls `condition` until it holds, or throws `expired()` once a check *begun* after `timeout` fails.
///
/// A check begun in time may come back late: on a loaded machine the task can wait seconds for a
/// thread after the check ran, and judging that stale answer against the clock would fail a test
/// whose condition came true meanwhile. So the guard looks at when each check started.
package func pollUntil(
    timeout: Duration, every interval: Duration, _ condition: () async throws -> Bool,
    expired: () -> any Error
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        let checkedAt = clock.now
        if try await condition() { return }
        guard checkedAt < deadline else { throw expired() }
        try await Task.sleep(for: interval)
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
