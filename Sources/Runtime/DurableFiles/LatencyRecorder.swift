import Synchronization
import Trace

/// A process-wide latency distribution that any thread may add to and `metrics` reads: a
/// `LatencyHistogram` (Sources/Model/Trace) behind a lock.
///
/// One lives for the whole process: `fsync`, which every durable write records (the file and
/// directory syncs of `AtomicFile`, the outbox's `fdatasync`). (An edit's round trip is the watch
/// node's own histogram: it is a decision-free sum of times the node already has.) Recording takes the lock for a few additions, far below the
/// cost of the sync it measures.
package final class LatencyRecorder: Sendable {
    /// Every `fsync`/`fdatasync` the durable files make: `AtomicFile.write` (the file, then
    /// its directory), the outbox's group commit and segment roll, and the directory syncs after
    /// creating or removing files. Shared by everything in the process that writes through them
    /// (PhoneStore's documents, WatchStore's cache), so phoned's and watchd's figures cover all of it.
    package static let fsync = LatencyRecorder(slowedByTests: true)

    private let histogram: Mutex<LatencyHistogram>
    private let slowedByTests: Bool

    package init(bounds: [Double] = LatencyHistogram.defaultBounds, slowedByTests: Bool = false) {
        histogram = Mutex(LatencyHistogram(bounds: bounds))
        self.slowedByTests = slowedByTests
    }

    /// Adds one observation of `seconds`.
    package func record(seconds: Double) {
        histogram.withLock { $0.record(seconds: seconds) }
    }

    /// Adds one observation of `duration`.
    package func record(_ duration: Duration) {
        let (whole, attoseconds) = duration.components
        record(seconds: Double(whole) + Double(attoseconds) / 1e18)
    }

    /// Runs `body` and records how long it took, whether it returned or threw.
    package func time<Result>(_ body: () throws -> Result) rethrows -> Result {
        let start = ContinuousClock.now
        defer { record(ContinuousClock.now - start) }
        if slowedByTests { SlowFsyncInjection.wait() }
        return try body()
    }

    /// A copy of the distribution so far, to render.
    package var snapshot: LatencyHistogram {
        histogram.withLock { $0 }
    }
}
