import ArgumentParsing
import LiveMirror
import WorkoutModel

extension LiveRelay {
    /// Executes a `live …` verb (identical on both CLIs). The daemon supplies how to find a run it
    /// can drive (`run`: nil when unknown; throw to refuse, e.g. editing on phone), its settings, and
    /// the durable set write (`completeSet(run, logIndex, setIndex, reps, weight)`: nil on success, a
    /// refusal otherwise). The live action comes first: LiveMirror needs `setCompleted` before the
    /// written document is absorbed, and the follower should see the frame before the document.
    package func execute(
        _ command: ParsedCommand, run: (DocumentID) throws -> WorkoutDocument?, settings: Settings,
        completeSet: (WorkoutDocument, Int, Int, Int, Double) throws -> AdminOutcome?
    ) throws -> AdminOutcome {
        let now = Timestamp.current
        switch command.path {
        case ["live", "open"]:
            let id = try command.documentID("run")
            guard let found = try run(id) else { return .refused("no run \(id) here") }
            let logID = try command.optionalInteger("exercise").map { _ in
                found.logs[try command.exerciseIndex(in: found)].id
            }
            return outcome(handle(.flowOpened(run: found, logID: logID, settings: settings, now: now)))
        case ["live", "advance"]:
            let id = try command.documentID("run")
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
                let reps = try command.optionalInteger("reps") ?? log.targetReps
                let weight = try command.optionalDouble("weight") ?? log.targetWeight
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
        case ["live", "close"]:
            return outcome(handle(.flowClosed(runID: try command.documentID("run"), now: now)))
        case ["live", "dismiss"]:
            return outcome(handle(.coverDismissed(runID: try command.documentID("run"))))
        case ["live", "show"]:
            let shown = show(now: now)
            return .output(text: shown.text, json: shown.json)
        default:
            return .refused("unknown live command '\(command.path.joined(separator: " "))'")
        }
    }

    private func outcome(_ refusals: [LiveRefusal]) -> AdminOutcome {
        if let refusal = refusals.first { return .refused(refusal.description) }
        let shown = show(now: .current)
        return .output(text: shown.text, json: shown.json)
    }
}
