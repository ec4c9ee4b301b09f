import Nodes
import WorkoutModel

/// The recorded-time invariants (docs/SIMULATION.md, invariant 10), checked right after the
/// operation that recorded a time, against the clock of the device that acted: a person's times
/// are that clock's, never the merge clock's (which stands still while a peer's clock is ahead),
/// and the edit that ends a run records an end no earlier than that clock.
extension Simulator {
    /// The device's copy of a run, as its node holds it now.
    private func copy(of run: DocumentID, on side: Side) -> WorkoutDocument? {
        switch side {
        case .phone: phone.node?.inner.engine.run(run)
        case .watch: watch.node?.inner.engine.cache.workouts[run]
        }
    }

    /// The clock the acting device's engine records on: the phone's wall clock, or the watch's set to
    /// the phone's as the phone's answers taught it (`WatchNode.editClock`).
    func wall(_ side: Side) -> Timestamp {
        side == .phone
            ? phone.wallNow : watch.node?.inner.editClock(watch.wallNow, linkNow: watch.linkNow) ?? watch.wallNow
    }

    private func origin(_ side: Side) -> StampOrigin { side == .phone ? .phone : .watch }

    /// A run `phonectl start` just minted starts at the phone's wall clock.
    func recordedStart(of run: DocumentID) {
        guard let started = copy(of: run, on: .phone) else { return }
        if started.startedAt != phone.wallNow {
            timeViolations.append(
                "run \(run) started at \(started.startedAt), the phone's clock read \(phone.wallNow)")
        }
    }

    /// After an acknowledged set edit: a completion is recorded at the acting device's clock (never
    /// before the run's start), and an edit that completed the run records an end no earlier. The
    /// watch's clock may have been set to the phone's by an answer in the same turn: its reading from
    /// before the operation (`clockBefore`) or after is taken.
    func recordedTimesAfter(_ edit: SetEdit, wasCompleted: Bool, clockBefore: Timestamp) {
        guard let run = copy(of: edit.run, on: edit.side),
            let log = run.logs.first(where: { $0.id == edit.log }), edit.set < log.sets.count
        else { return }
        let record = log.sets[edit.set]
        let clock = wall(edit.side)
        if edit.done, record.stamp.origin == origin(edit.side), let completedAt = record.completedAt,
            completedAt != max(clock, run.startedAt), completedAt != max(clockBefore, run.startedAt)
        {
            timeViolations.append(
                "run \(edit.run): the \(edit.side) completed a set at \(completedAt), its clock read \(clock) "
                    + "(the run started \(run.startedAt))")
        }
        recordedEnd(of: edit.run, by: edit.side, wasCompleted: wasCompleted, clockBefore: clockBefore)
    }

    /// An operation that completed the run records an end no earlier than the acting device's clock
    /// (as it read before the operation, or after: see `recordedTimesAfter`).
    func recordedEnd(of runID: DocumentID, by side: Side, wasCompleted: Bool, clockBefore: Timestamp) {
        // Completed before the request was taken, or after it by what the node took next (a merge),
        // the run's end is not this request's.
        guard !wasCompleted, completedByAdmin.contains(runID), let run = copy(of: runID, on: side),
            run.status == .completed,
            run.ending.stamp.origin == origin(side), let ended = run.endedAt
        else { return }
        let clock = min(wall(side), clockBefore)
        if ended < clock {
            timeViolations.append("run \(runID): the \(side) ended it at \(clock), the run records \(ended)")
        }
    }
}
