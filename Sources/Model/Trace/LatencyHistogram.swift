/// A latency distribution in fixed buckets, as an OpenMetrics histogram reports it: per upper
/// bound, how many observations were at or below it (cumulative), plus their count and sum.
///
/// The default bounds (0.5 ms to 5 s) suit an fsync on a laptop SSD or a loaded VM and a message's
/// round trip over the link; an observation above the last bound counts only in the implicit
/// `+Inf` bucket (`count`). A value type: the shell keeps one behind a lock (`LatencyRecorder` in
/// DurableFiles) and copies it out to render.
package struct LatencyHistogram: Equatable, Sendable {
    /// Upper bounds in seconds: 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250 and 500 ms, 1, 2.5 and 5 s.
    package static let defaultBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ]

    /// Bucket upper bounds in seconds, strictly ascending and finite (`+Inf` is implicit).
    package let bounds: [Double]
    /// Observations per bucket, not cumulative: `perBucket[i]` counts those in
    /// `(bounds[i-1], bounds[i]]`; the last slot counts those above every bound.
    private var perBucket: [UInt64]
    /// Seconds of every observation added up.
    package private(set) var sum: Double = 0
    /// How many observations were recorded.
    package private(set) var count: UInt64 = 0

    package init(bounds: [Double] = LatencyHistogram.defaultBounds) {
        precondition(!bounds.isEmpty, "a histogram needs at least one bound")
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend strictly")
        precondition(bounds.allSatisfy { $0.isFinite }, "+Inf is implicit; bounds must be finite")
        self.bounds = bounds
        perBucket = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Adds one observation. A negative or NaN duration (a clock that went backwards, a bug) counts
    /// as zero so the sum stays a sum of non-negative values, as the format requires.
    package mutating func record(seconds: Double) {
        let value = seconds.isNaN || seconds < 0 ? 0 : seconds
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        perBucket[index] += 1
        sum += value
        count += 1
    }

    /// Per bound, the observations at or below it (ascending, as the format lists `_bucket`s); the
    /// `+Inf` bucket is `count`.
    package var cumulativeCounts: [(upperBound: Double, count: UInt64)] {
        var running: UInt64 = 0
        return bounds.indices.map { index in
            running += perBucket[index]
            return (bounds[index], running)
        }
    }
}
