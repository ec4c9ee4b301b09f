import WorkoutModel

/// Where an exercise flow stands. The cycle, per set `k` of `n` (0-based `k`):
///
/// ```
/// ready(k) ──countdown ends / countdownSkipped──▶ work(k)
/// ready(k) or work(k) ──setCompleted, k < n-1──▶ rest(k)
/// ready(k) or work(k) ──setCompleted, k = n-1──▶ finish      (no rest after the last set)
/// rest(k)  ──rest ends / restSkipped──▶ ready(k+1)
/// finish   ──(terminal; flowClosed ends the flow with liveEnded)
/// ```
///
/// - `ready`: the timed countdown before set `k` (`Settings.doneCountdownSeconds`); ends by itself.
/// - `work`: the person lifts set `k`; untimed, ended only by the person completing the set.
/// - `rest`: the timed rest after set `k` (`Settings.restSeconds`); never after the last set; ends by
///   itself into the next set's countdown.
/// - `finish`: every set of the exercise is done; stays until the person closes the flow.
///
/// Durable repair adds one more transition from any phase: forward to `work(j)` for a later set `j`, or
/// to `finish` (see `RunFlow.jumpForward`). Nothing ever moves a flow backward except a newer frame
/// from the peer (a later human action).
package enum LivePhase: String, Codable, Sendable, CaseIterable {
    case ready
    case work
    case rest
    case finish

    /// Whether the phase ends by itself when its timer runs out.
    package var isTimed: Bool { self == .ready || self == .rest }
}

/// How long the timed phases last, carried in every frame so both devices run the driver's timers even
/// when a settings push has not reached the follower yet.
package struct LiveTimings: Hashable, Sendable {
    /// Length of the ready countdown before each set (`Settings.doneCountdownSeconds`), 0...600.
    package var countdownSeconds: Int
    /// Length of the rest after each set but the last (`Settings.restSeconds`), 0...3600.
    package var restSeconds: Int

    package init(countdownSeconds: Int, restSeconds: Int) {
        self.countdownSeconds = countdownSeconds
        self.restSeconds = restSeconds
    }

    /// The timings the person's settings ask for.
    package init(_ settings: Settings) {
        self.init(countdownSeconds: settings.doneCountdownSeconds, restSeconds: settings.restSeconds)
    }

    /// The ready countdown as a duration.
    package var countdown: Duration { .seconds(countdownSeconds) }
    /// The rest as a duration.
    package var rest: Duration { .seconds(restSeconds) }
}

/// The phase a flow is in, which set it is on, and when that phase began.
package struct LivePosition: Hashable, Sendable, CustomStringConvertible {
    package var phase: LivePhase
    /// The 0-based set within the exercise: the set being counted down to or lifted, or for `rest` the
    /// set just completed; `setCount - 1` in `finish`.
    package var setIndex: Int
    /// The wall-clock instant the phase began (microsecond precision). For a human action it is the
    /// moment of the action; for a timed crossing it is the previous phase's computed end.
    package var anchor: Timestamp

    package init(phase: LivePhase, setIndex: Int, anchor: Timestamp) {
        self.phase = phase
        self.setIndex = setIndex
        self.anchor = anchor
    }

    package var description: String { "\(phase) set \(setIndex + 1) @ \(anchor)" }
}
