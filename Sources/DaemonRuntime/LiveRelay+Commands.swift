import AdminCommands
import LiveMirror
import WorkoutModel

extension LiveRelay {
    /// Executes a `live …` verb (identical on both CLIs). The daemon supplies how to find a run it
    /// can drive (`run`: nil when unknown; throw to refuse, e.g. editing on phone), its settings, and
    /// the durable set write (`completeSet(run, logIndex, setIndex, reps, weight)`: nil on success, a
    /// refusal otherwise). The live action comes first: LiveMirror needs `setCompleted` before the
    /// written document is absorbed, and the follower should see the frame before the document.
    package func execute(
        _ command: LiveCommand, run: (DocumentID) throws -> WorkoutDocument?, settings: Settings,
        completeSet: (WorkoutDocument, Int, Int, Int, Double) throws -> AdminOutcome?
    ) throws -> AdminOutcome {
        let now = Timestamp.current
        switch command {
        case .open(let id, let exercise):
            guard let found = try run(id) else { return .refused("no run \(id) here") }
            let logID = try exercise.map { found.logs[try found.logIndex(exercise: $0)].id }
            return outcome(handle(.flowOpened(run: found, logID: logID, settings: settings, now: now)))
        case .advance(let id, let reps, let weight):
            guard let screen = mirror.screen(for: id, now: now), screen.role == .driving else {
                return .refused("the run's flow is not open here (live open RUN first)")
            }
            switch screen.phase {
            case .ready:
                return outcome(handle(.countdownSkipped(runID: id, now: now)))
            case .work:
                guard let found = try run(id), let logIndex = found.logs.firstIndex(where: { $0.id == screen.logID })
                else { return .refused("the run no longer has the exercise on screen") }
                let log = found.logs[logIndex]
                let reps = reps ?? log.targetReps
                let weight = weight ?? log.targetWeight
                // The frame goes out before the durable write: both ride the one link in order, so the
                // follower is on this set's rest when the written document arrives, and its durable
                // repair has nothing to jump over (the other order made it flick forward and back).
                let refusals = handle(.setCompleted(runID: id, now: .current))
                if let refusal = try completeSet(found, logIndex, screen.setIndex, reps, weight) { return refusal }
                return outcome(refusals)
            case .rest:
                return outcome(handle(.restSkipped(runID: id, now: now)))
            case .finish:
                return .refused("the exercise is finished; live close RUN, or live open RUN for the next exercise")
            }
        case .close(let id):
            return outcome(handle(.flowClosed(runID: id, now: now)))
        case .dismiss(let id):
            return outcome(handle(.coverDismissed(runID: id)))
        case .show:
            let shown = show(now: now)
            return .output(text: shown.text, json: shown.json)
        }
    }

    private func outcome(_ refusals: [LiveRefusal]) -> AdminOutcome {
        if let refusal = refusals.first { return .refused(refusal.description) }
        let shown = show(now: .current)
        return .output(text: shown.text, json: shown.json)
    }
}
