import Glibc

/// The kernel's clocks, read directly: for times that must agree with the kernel's own (file times,
/// journald, systemd's `MONOTONIC_USEC`), where Swift's clocks promise no particular epoch.
package enum SystemClock {
    /// `CLOCK_REALTIME`: the wall clock, as time since the Unix epoch.
    package static func realTime() -> Duration {
        read(CLOCK_REALTIME)
    }

    /// `CLOCK_MONOTONIC`: time since an arbitrary point (boot), never stepped.
    package static func monotonic() -> Duration {
        read(CLOCK_MONOTONIC)
    }

    /// Blocks the calling thread for `duration`; never call it on Swift's cooperative pool.
    package static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    private static func read(_ clock: clockid_t) -> Duration {
        var now = timespec()
        clock_gettime(clock, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
