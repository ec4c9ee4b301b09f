import WorkoutModel

/// What a live screen shows at one instant: the data behind `live show`.
package struct LiveScreen: Hashable, Sendable, CustomStringConvertible {
    /// Whether this device drives the run or follows the peer's broadcast.
    package enum Role: String, Hashable, Sendable {
        case driving
        case following
    }

    package var runID: DocumentID
    package var logID: DocumentID
    package var exerciseName: String
    package var role: Role
    package var phase: LivePhase
    /// 0-based set within the exercise (for `rest`, the set just completed).
    package var setIndex: Int
    package var setCount: Int
    /// When the phase began.
    package var phaseAnchor: Timestamp
    /// When the phase ends by itself; nil for `work` and `finish`.
    package var phaseEnd: Timestamp?
    /// Time left in the phase at the moment of the query; nil for `work` and `finish`.
    package var remaining: Duration?
    /// The version of the last human action behind this screen.
    package var version: Int

    /// The 1-based set number ("set k of n").
    package var setNumber: Int { setIndex + 1 }

    /// Whole seconds left, rounded up as a countdown shows them (0.2 s left shows 1).
    package var remainingSeconds: Int? {
        remaining.map { Int((($0.wholeMicroseconds + 999_999) / 1_000_000)) }
    }

    /// One line, e.g. `run … Squat: rest, set 1 of 3, 42 s left (following, v8)`.
    package var description: String {
        let left = remainingSeconds.map { ", \($0) s left" } ?? ""
        return "run \(runID) \(exerciseName): \(phase), set \(setNumber) of \(setCount)\(left) "
            + "(\(role.rawValue), v\(version))"
    }

    init(_ view: LiveRunView, role: Role, now: Timestamp) {
        let flow = view.flow.advanced(to: now)
        runID = view.basis.runID
        logID = view.basis.logID
        exerciseName = view.basis.exerciseName
        self.role = role
        phase = flow.position.phase
        setIndex = flow.position.setIndex
        setCount = flow.setCount
        phaseAnchor = flow.position.anchor
        phaseEnd = flow.phaseEnd
        remaining = flow.phaseEnd.map { now.duration(to: $0) }
        version = view.basis.version
    }
}

extension LiveMirror {
    /// Every run on screen at `now`, by run ID: the flows driven here and the covers shown.
    /// Pure: computes the timers at `now` without changing the engine.
    package func screen(now: Timestamp) -> [LiveScreen] {
        Set(flows.keys).union(covers.keys).sorted().compactMap { screen(for: $0, now: now) }
    }

    /// What the run's screen shows at `now`: its flow when driven here, else the peer's cover unless
    /// dismissed, else nil.
    package func screen(for runID: DocumentID, now: Timestamp) -> LiveScreen? {
        if let view = flows[runID] { return LiveScreen(view, role: .driving, now: now) }
        if isCoverShown(runID), let view = covers[runID] { return LiveScreen(view, role: .following, now: now) }
        return nil
    }
}
