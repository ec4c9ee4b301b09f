import WorkoutModel

/// A change a person makes to a run on the watch; each maps to one `WorkoutDocument` mutation.
package enum WatchEdit: Equatable, Sendable {
    /// Mark set `setIndex` (0-based) of the log done with the reps and weight lifted.
    case completeSet(logID: DocumentID, setIndex: Int, reps: Int, weight: Double)
    /// Clear a done set.
    case undoSet(logID: DocumentID, setIndex: Int)
    case skipLog(logID: DocumentID)
    case reopenLog(logID: DocumentID)
    /// End the run keeping progress ("Save Workout"): unfinished logs are skipped, the run completes.
    case finishRun
    case pause
    case resume
}

/// Why an edit on the watch was refused. A refused edit leaves the cache unchanged.
package enum EditRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The watch has no such run (never pushed, or pruned since).
    case unknownRun(DocumentID)
    /// The phone has the run, or the split it came from, open in an editor (S8).
    case editingOnPhone(DocumentID)
    /// The model refused the mutation (a completed run, a set out of range, …).
    case refusedByModel(run: DocumentID, MutationError)

    package var description: String {
        switch self {
        case .unknownRun(let run): return "no run \(run) on this watch"
        case .editingOnPhone(let run):
            return "run \(run) is being edited on the phone; try again when it is closed there"
        case .refusedByModel(let run, let error): return "run \(run): \(error)"
        }
    }
}

/// Applies a person's edits to the watch's cache optimistically and stamps them.
///
/// It owns the watch's hybrid logical clock: before stamping it observes the run's stamps, so the
/// local edit outranks everything it was made on top of, whatever the wall clocks say. The stored
/// document is marked as an undelivered local edit; forwarding it to the phone is the caller's job
/// (`WatchEngine`).
package struct WatchEditor: Equatable, Sendable {
    package internal(set) var clock: HybridLogicalClock

    package init(clock: HybridLogicalClock = HybridLogicalClock(origin: .watch)) {
        self.clock = clock
    }

    /// Applies `edit` to the run and returns the stored document.
    ///
    /// Refuses — leaving the cache and the clock untouched — when the run is unknown, parked by an
    /// edit lock, or the model throws.
    package mutating func apply(
        _ edit: WatchEdit, toRun runID: DocumentID, in cache: inout WatchCache, at now: Timestamp
    ) throws(EditRefusal) -> WorkoutDocument {
        guard var run = cache.workouts[runID] else { throw .unknownRun(runID) }
        guard !cache.isParked(run) else { throw .editingOnPhone(runID) }
        var clock = self.clock
        clock.observe(run)
        let stamp = clock.stamp(at: now)
        do throws(MutationError) {
            switch edit {
            case .completeSet(let logID, let setIndex, let reps, let weight):
                try run.completeSet(logID: logID, setIndex: setIndex, reps: reps, weight: weight, at: stamp, time: now)
            case .undoSet(let logID, let setIndex):
                try run.undoSet(logID: logID, setIndex: setIndex, at: stamp, time: now)
            case .skipLog(let logID):
                try run.skipLog(logID: logID, at: stamp, time: now)
            case .reopenLog(let logID):
                try run.reopenLog(logID: logID, at: stamp, time: now)
            case .finishRun:
                try run.endKeepingProgress(at: stamp, time: now)
            case .pause:
                try run.pause(at: stamp, time: now)
            case .resume:
                try run.resume(at: stamp, time: now)
            }
        } catch {
            throw .refusedByModel(run: runID, error)
        }
        self.clock = clock
        cache.storeLocalEdit(run)
        return run
    }

    /// Records what the workout session measured on the run (not a person's edit, so an edit lock does
    /// not stop it: the session must end whatever the phone has open) and returns the stored document,
    /// or nil when the run is not in the cache.
    package mutating func recordMetrics(
        _ metrics: SessionMetrics, onRun runID: DocumentID, in cache: inout WatchCache, at now: Timestamp
    ) -> WorkoutDocument? {
        guard var run = cache.workouts[runID] else { return nil }
        clock.observe(run)
        run.recordMetrics(metrics, at: clock.stamp(at: now), time: now)
        cache.storeLocalEdit(run)
        return run
    }
}
