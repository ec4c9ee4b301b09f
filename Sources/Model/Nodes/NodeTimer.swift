import WorkoutModel

/// The timers a node keeps.
///
/// A timer's deadline is on the wall clock, which can step. The shell fires it once the wall clock
/// has reached it, the wait it was armed with has passed on the monotonic clock, or the wall clock
/// has stepped (`isDue`), looking at least every `wallClockCheck`: a step either way reaches the
/// node within that as a tick, which sees the stepped clock (runs in or out of the recent window)
/// and arms again.
package enum NodeTimer: Hashable, Sendable {
    /// How long a shell waits at most before it looks at the wall clock again for an armed timer.
    package static let wallClockCheck: Duration = .seconds(10)
    /// The deadline of a timer kept armed only to notice a wall clock step (year 9999): it is never
    /// reached, and fires on a step like any other.
    package static let noDeadline = Timestamp(microsecondsSinceEpoch: 253_402_300_799_000_000)

    /// How long to wait before looking again for a deadline `at`, the wall clock reading `now`, of a
    /// timer armed `waited` ago for `armedFor`.
    package static func wait(
        until at: Timestamp, now: Timestamp, waited: Duration = .zero, armedFor: Duration = .seconds(86_400 * 365)
    ) -> Duration {
        min(max(now.duration(to: at), .zero), max(armedFor - waited, .zero), wallClockCheck)
    }

    /// Whether a timer armed `waited` ago (on the monotonic clock), for the wait to `at` then
    /// (`armedFor`), is due now; `armedFor` is also how far the wall clock was from `at` at the arming,
    /// so a wall clock that is not `armedFor - waited` from `at` now has stepped.
    package static func isDue(at: Timestamp, now: Timestamp, waited: Duration, armedFor: Duration) -> Bool {
        let drift = now.duration(to: at) - (armedFor - waited)
        return now >= at || waited >= armedFor || drift > .seconds(1) || drift < .seconds(-1)
    }

    /// The SyncEngine's next deadline (a push retry, a run leaving the recent window).
    case push
    /// The live mirror's next boundary or retry.
    case live
    /// The graceful-shutdown deadline.
    case shutdown
    /// The earliest deadline of a `watchctl wait` (`SyncWaits`).
    case syncWait
}
