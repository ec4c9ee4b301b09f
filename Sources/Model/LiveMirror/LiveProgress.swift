import WorkoutModel

/// The ordering key of every live frame: the shared version, then the phase anchor.
///
/// Versions come from one monotonic sequence both devices share (each stamps `counter + 1` and bumps its
/// counter past every version it receives), but it is not collision-free: after a lost frame both sides
/// can mint the same number. The tie breaks on the wall-clock anchor of the human action, so the later
/// action wins on both devices.
package struct LiveOrder: Hashable, Sendable, CustomStringConvertible {
    package var version: Int
    package var anchor: Timestamp

    package init(version: Int, anchor: Timestamp) {
        self.version = version
        self.anchor = anchor
    }

    /// Whether `self` outranks `other`: a higher version, or the same version with a later anchor. Equal
    /// keys are not newer either way.
    package func isNewer(than other: LiveOrder) -> Bool {
        version != other.version ? version > other.version : anchor > other.anchor
    }

    package var description: String { "v\(version)@\(anchor)" }
}

/// One live-run frame: what the driving device's exercise flow shows after a human action.
///
/// Sent only over `sendMessage` (reachable-only), never queued, never written to disk. The follower
/// runs the timers itself from `anchor` and `countdownSeconds`/`restSeconds`: auto-advances are never
/// sent.
package struct LiveProgress: Codable, Hashable, Sendable {
    package var runID: DocumentID
    package var logID: DocumentID
    package var exerciseName: String
    package var phase: LivePhase
    /// 0-based set within the exercise (for `rest`, the set just completed; `setCount - 1` in `finish`).
    package var setIndex: Int
    /// Sets in the exercise, at least 1.
    package var setCount: Int
    /// When the phase began, to the microsecond (not rounded: both devices count down from it).
    package var anchor: Timestamp
    /// The driver's ready countdown, seconds.
    package var countdownSeconds: Int
    /// The driver's rest, seconds.
    package var restSeconds: Int
    /// The shared monotonic version (at least 1).
    package var version: Int

    package init(
        runID: DocumentID, logID: DocumentID, exerciseName: String, position: LivePosition, setCount: Int,
        timings: LiveTimings, version: Int
    ) {
        self.runID = runID
        self.logID = logID
        self.exerciseName = exerciseName
        phase = position.phase
        setIndex = position.setIndex
        self.setCount = setCount
        anchor = position.anchor
        countdownSeconds = timings.countdownSeconds
        restSeconds = timings.restSeconds
        self.version = version
    }

    /// The ordering key.
    package var order: LiveOrder { LiveOrder(version: version, anchor: anchor) }

    /// The phase, set and anchor the frame carries.
    package var position: LivePosition { LivePosition(phase: phase, setIndex: setIndex, anchor: anchor) }

    package var timings: LiveTimings { LiveTimings(countdownSeconds: countdownSeconds, restSeconds: restSeconds) }

    /// The flow this frame describes, as of its anchor.
    package var flow: RunFlow { RunFlow(setCount: setCount, timings: timings, position: position) }

    /// Whether `a` outranks `b`: version first, then the later anchor; equal is not newer.
    package static func isNewer(_ a: LiveProgress, than b: LiveProgress) -> Bool {
        a.order.isNewer(than: b.order)
    }

    /// Why the frame cannot describe a flow, or nil when it can.
    package var problem: (field: String, reason: String)? {
        if version < 1 { return ("version", "must be at least 1, got \(version)") }
        if setCount < 1 { return ("setCount", "must be at least 1, got \(setCount)") }
        if !(0..<setCount).contains(setIndex) { return ("setIndex", "outside 0..<\(setCount)") }
        if phase == .rest, setIndex == setCount - 1 { return ("phase", "no rest after the last set") }
        if !(0...600).contains(countdownSeconds) { return ("countdownSeconds", "must be 0...600") }
        if !(0...3_600).contains(restSeconds) { return ("restSeconds", "must be 0...3600") }
        return nil
    }
}

/// The terminal marker: the driving device closed the run's flow; the peer drops its follower cover.
package struct LiveEnded: Codable, Hashable, Sendable {
    package var runID: DocumentID
    /// The shared monotonic version (at least 1).
    package var version: Int
    /// When the person closed the flow.
    package var anchor: Timestamp

    package init(runID: DocumentID, version: Int, anchor: Timestamp) {
        self.runID = runID
        self.version = version
        self.anchor = anchor
    }

    /// The ordering key.
    package var order: LiveOrder { LiveOrder(version: version, anchor: anchor) }
}
