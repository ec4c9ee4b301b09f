import AdminCommands
import LiveMirror
import WorkoutModel

extension LiveDriver {
    /// Where a `live …` verb got to: finished, or waiting for the node to write a completed set (the
    /// live action comes first: LiveMirror needs `setCompleted` before the written document is
    /// absorbed, and the follower should see the frame before the document).
    package enum Step: Sendable {
        case finished(AdminOutcome, [NodeAction])
        /// Write this set as completed, then answer with `outcome(refusals:now:)` unless the write
        /// was refused.
        case completeSet(
            WorkoutDocument, logIndex: Int, setIndex: Int, reps: Int, weight: Double, refusals: [LiveRefusal],
            [NodeAction])
    }

    /// Executes a `live …` verb (identical on both CLIs). The node supplies the run it can drive
    /// (`run`: nil when unknown; throw to refuse, e.g. editing on phone) and its settings.
    package mutating func execute(
        _ command: LiveCommand, run: (DocumentID) throws -> WorkoutDocument?, settings: Settings, now: Timestamp
    ) throws -> Step {
        switch command {
        case .open(let id, let exercise):
            guard let found = try run(id) else { return .finished(.refused("no run \(id) here"), []) }
            let logID = try exercise.map { found.logs[try found.refusingLogIndex(exercise: $0)].id }
            return answering(.flowOpened(run: found, logID: logID, settings: settings, now: now), now: now)
        case .advance(let id, let reps, let weight):
            guard let screen = mirror.screen(for: id, now: now), screen.role == .driving else {
                return .finished(.refused("the run's flow is not open here (live open RUN first)"), [])
            }
            switch screen.phase {
            case .ready:
                return answering(.countdownSkipped(runID: id, now: now), now: now)
            case .work:
                guard let found = try run(id), let logIndex = found.logs.firstIndex(where: { $0.id == screen.logID })
                else { return .finished(.refused("the run no longer has the exercise on screen"), []) }
                let log = found.logs[logIndex]
                // The frame goes out before the durable write: both ride the one link in order, so the
                // follower is on this set's rest when the written document arrives, and its durable
                // repair has nothing to jump over (the other order made it flick forward and back).
                let (actions, refusals) = handle(.setCompleted(runID: id, now: now))
                return .completeSet(
                    found, logIndex: logIndex, setIndex: screen.setIndex, reps: reps ?? log.targetReps,
                    weight: weight ?? log.targetWeight, refusals: refusals, actions)
            case .rest:
                return answering(.restSkipped(runID: id, now: now), now: now)
            case .finish:
                return .finished(
                    .refused("the exercise is finished; live close RUN, or live open RUN for the next exercise"), [])
            }
        case .close(let id):
            return answering(.flowClosed(runID: id, now: now), now: now)
        case .dismiss(let id):
            return answering(.coverDismissed(runID: id), now: now)
        case .show:
            return .finished(show(now: now), [])
        }
    }

    /// The reply to a live verb: its first refusal, else the screens now.
    package func outcome(refusals: [LiveRefusal], now: Timestamp) -> AdminOutcome {
        if let refusal = refusals.first { return .refused(refusal.description) }
        return show(now: now)
    }

    /// Feeds `event`, then answers with the screens as it left them. (Handing `handle(event)` to a
    /// method of `self` as an argument read `self` before the event changed it: the reply showed the
    /// screens as they were before the verb.)
    private mutating func answering(_ event: LiveMirror.Event, now: Timestamp) -> Step {
        let handled = handle(event)
        return .finished(outcome(refusals: handled.refusals, now: now), handled.actions)
    }
}

extension LiveCommand {
    /// The run a flow is opened or advanced on (the verbs that need the run's document).
    package var drivenRunID: DocumentID? {
        switch self {
        case .open(let run, _), .advance(let run, _, _): return run
        case .close, .dismiss, .show: return nil
        }
    }
}
