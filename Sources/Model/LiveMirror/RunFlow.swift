import WorkoutModel

/// The pure phase math of one exercise flow: its set count and timings, and where it is now.
///
/// Time only moves a flow through `advance(to:)`, which crosses every timed boundary that has passed:
/// each next phase is anchored at the previous phase's computed end (`anchor + duration`), never at the
/// moment of the call. A flow advanced once after several boundaries is therefore identical to one
/// advanced every 100 ms. The longest chain of timed boundaries is two (`rest(k)` → `ready(k+1)` →
/// `work(k+1)`); `work` waits for the person.
///
/// The human actions (`completeSet`, `skipCountdown`, `skipRest`) advance to `now` first, then anchor
/// the new phase at `now`. They return false, changing nothing, when the phase does not allow them.
package struct RunFlow: Hashable, Sendable {
    /// Sets in the exercise, at least 1.
    package var setCount: Int
    package var timings: LiveTimings
    package var position: LivePosition

    package init(setCount: Int, timings: LiveTimings, position: LivePosition) {
        precondition(setCount >= 1, "a flow has at least one set (validated frames and documents guarantee it)")
        self.setCount = setCount
        self.timings = timings
        self.position = position
    }

    /// A flow starting at `ready` for set `setIndex`, or at `finish` when `setIndex` is past the last set.
    package static func opening(setCount: Int, timings: LiveTimings, at setIndex: Int, now: Timestamp) -> RunFlow {
        let position =
            setIndex < setCount
            ? LivePosition(phase: .ready, setIndex: setIndex, anchor: now)
            : LivePosition(phase: .finish, setIndex: setCount - 1, anchor: now)
        return RunFlow(setCount: setCount, timings: timings, position: position)
    }

    /// When the current phase ends by itself; nil for `work` and `finish`.
    package var phaseEnd: Timestamp? {
        switch position.phase {
        case .ready: position.anchor.advanced(by: timings.countdown)
        case .rest: position.anchor.advanced(by: timings.rest)
        case .work, .finish: nil
        }
    }

    /// Crosses every timed boundary at or before `now`; returns how many were crossed.
    @discardableResult
    package mutating func advance(to now: Timestamp) -> Int {
        var crossed = 0
        while let end = phaseEnd, end <= now {
            switch position.phase {
            case .ready:
                position = LivePosition(phase: .work, setIndex: position.setIndex, anchor: end)
            case .rest where position.setIndex + 1 < setCount:
                position = LivePosition(phase: .ready, setIndex: position.setIndex + 1, anchor: end)
            default:
                // A rest after the last set cannot be built (frames with one are refused); end it cleanly.
                position = LivePosition(phase: .finish, setIndex: setCount - 1, anchor: end)
            }
            crossed += 1
        }
        return crossed
    }

    /// This flow as it stands at `now`.
    package func advanced(to now: Timestamp) -> RunFlow {
        var flow = self
        flow.advance(to: now)
        return flow
    }

    /// Time left in the phase at `now` (after crossing elapsed boundaries); nil when the phase is untimed.
    package func remaining(at now: Timestamp) -> Duration? {
        advanced(to: now).phaseEnd.map { now.duration(to: $0) }
    }

    /// How many sets the flow counts as done: `k` in `ready(k)`/`work(k)`, `k + 1` in `rest(k)`, all of
    /// them in `finish`. Durable repair compares this with the document.
    package var setsDone: Int {
        switch position.phase {
        case .ready, .work: position.setIndex
        case .rest: position.setIndex + 1
        case .finish: setCount
        }
    }

    /// The person completed the current set (from `ready` or `work`): rest, or finish after the last set.
    package mutating func completeSet(at now: Timestamp) -> Bool {
        advance(to: now)
        guard position.phase == .ready || position.phase == .work else { return false }
        position =
            position.setIndex + 1 < setCount
            ? LivePosition(phase: .rest, setIndex: position.setIndex, anchor: now)
            : LivePosition(phase: .finish, setIndex: setCount - 1, anchor: now)
        return true
    }

    /// The person cut the countdown short: `ready(k)` → `work(k)` at `now`.
    package mutating func skipCountdown(at now: Timestamp) -> Bool {
        advance(to: now)
        guard position.phase == .ready else { return false }
        position = LivePosition(phase: .work, setIndex: position.setIndex, anchor: now)
        return true
    }

    /// The person cut the rest short: `rest(k)` → `ready(k+1)` at `now`.
    package mutating func skipRest(at now: Timestamp) -> Bool {
        advance(to: now)
        guard position.phase == .rest else { return false }
        position = LivePosition(phase: .ready, setIndex: position.setIndex + 1, anchor: now)
        return true
    }

    /// Durable repair: when the document shows more sets done than the flow (`setsDone`), jump to the
    /// first unfinished set's `work` page, or to `finish` when `firstUnfinishedSet` is nil or past the
    /// last set; never backward. Advances to `now` first; returns whether it jumped.
    package mutating func jumpForward(toFirstUnfinishedSet firstUnfinishedSet: Int?, at now: Timestamp) -> Bool {
        advance(to: now)
        let target = min(firstUnfinishedSet ?? setCount, setCount)
        guard target > setsDone else { return false }
        position =
            target < setCount
            ? LivePosition(phase: .work, setIndex: target, anchor: now)
            : LivePosition(phase: .finish, setIndex: setCount - 1, anchor: now)
        return true
    }
}
