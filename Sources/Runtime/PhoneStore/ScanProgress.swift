import POSIX

/// How the start-up scan reports progress on a large document directory: at most every `interval`
/// seconds, `report` gets how many entries were dealt with so far (documents handed on plus entries
/// skipped) and the seconds since the scan began. Nothing is reported before the first interval has
/// passed, so a small directory's scan reports nothing; the scan's final `ScanReport` is the caller's.
///
/// Time comes from `now` (seconds on any monotonic scale), so a test can drive it. The owner logs
/// each report; phoned's line is `gather progress` with `scanned=` and `rate=` (per second), which
/// `scripts/run` shows while it waits for readiness.
package struct ScanProgress {
    /// The least time between two reports, in seconds.
    package var interval: Double
    /// The current time in seconds; only differences matter.
    package var now: () -> Double
    /// Called on the scanning thread with the entries scanned so far and the seconds elapsed.
    package var report: (_ scanned: Int, _ elapsedSeconds: Double) -> Void

    package init(
        every interval: Double = 5, now: @escaping () -> Double = ScanProgress.monotonicSeconds,
        report: @escaping (_ scanned: Int, _ elapsedSeconds: Double) -> Void
    ) {
        self.interval = interval
        self.now = now
        self.report = report
    }

    /// Entries per second over `elapsedSeconds` (0 before any time has passed), for the log line.
    package static func rate(scanned: Int, elapsedSeconds: Double) -> Double {
        elapsedSeconds > 0 ? Double(scanned) / elapsedSeconds : 0
    }

    /// `CLOCK_MONOTONIC` in seconds.
    package static func monotonicSeconds() -> Double {
        let (seconds, attoseconds) = SystemClock.monotonic().components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// A scan's progress reporting in flight: when it started, when it last reported.
struct ScanProgressTicker {
    let progress: ScanProgress?
    let start: Double
    var lastReport: Double
    /// Entries dealt with outside the report being filled (a folder scanned into its own report).
    var earlier = 0

    init(_ progress: ScanProgress?) {
        self.progress = progress
        start = progress?.now() ?? 0
        lastReport = start
    }

    /// Reports `scanned` if an interval has passed since the last report (or the start).
    mutating func tick(scanned: Int) {
        guard let progress else { return }
        let now = progress.now()
        guard now - lastReport >= progress.interval else { return }
        lastReport = now
        progress.report(scanned, now - start)
    }
}
