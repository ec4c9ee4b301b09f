/// Why a person's edit to a run was refused. The document is left unchanged.
package enum MutationError: Error, Equatable, Sendable, CustomStringConvertible {
    case splitHasNoExercises(split: DocumentID)
    case unknownLog(DocumentID)
    case setOutOfRange(log: DocumentID, index: Int, count: Int)
    case logAlreadyResolved(DocumentID)
    case logNotResolved(DocumentID)
    case setNotDone(log: DocumentID, index: Int)
    case invalidValue(field: String, reason: String)
    case runCompleted(DocumentID)
    case alreadyPaused
    case notPaused
    /// The run has paused as often as its split's size bound allows for (`SplitDocument.runSizePauseAllowance`).
    case tooManyPauses(limit: Int)

    package var description: String {
        switch self {
        case .splitHasNoExercises(let split): return "split \(split) has no exercises to run"
        case .unknownLog(let log): return "no log \(log) in this run"
        case .setOutOfRange(let log, let index, let count): return "log \(log) has \(count) sets; no set \(index + 1)"
        case .logAlreadyResolved(let log): return "log \(log) is already completed or skipped; reopen it first"
        case .logNotResolved(let log): return "log \(log) is not completed or skipped, so there is nothing to reopen"
        case .setNotDone(let log, let index): return "set \(index + 1) of log \(log) is not done"
        case .invalidValue(let field, let reason): return "\(field): \(reason)"
        case .runCompleted(let run): return "run \(run) is completed; reopen a log to change it"
        case .alreadyPaused: return "the run is already paused"
        case .notPaused: return "the run is not paused"
        case .tooManyPauses(let limit):
            return "the run has paused \(limit) times, as many as one watch update can carry; "
                + "end it or go on without a pause"
        }
    }
}

extension WorkoutDocument {
    /// Starts a run of `split`: a snapshot of its name and exercises, so later edits to the split never
    /// rewrite this run. Log IDs are derived from the run ID (its last four hex digits replaced by the
    /// log's index), which keeps them unique within the run without a random source.
    ///
    /// Every mutation takes the edit's `stamp` (its order among edits) and the wall-clock `time` of
    /// the person's action, which is what the run records and shows (start, completions, pauses,
    /// end): a hybrid clock's time stands still while a peer's clock is ahead, a person's never does.
    /// A time is never recorded before the one it follows (a completion before the start, an end
    /// before the last completion): a skewed clock can shorten what is shown, never make it negative.
    /// `time` nil takes the stamp's time (tools and tests that stamp by hand).
    package static func start(
        from split: SplitDocument, id: DocumentID, at stamp: Stamp, time: Timestamp? = nil
    ) throws(MutationError) -> WorkoutDocument {
        guard !split.exercises.isEmpty else { throw .splitHasNoExercises(split: split.id) }
        let logs = split.exercises.enumerated().map { index, exercise in
            ExerciseLog(
                id: logID(run: id, index: index), exerciseName: exercise.name, equipment: exercise.equipment,
                targetReps: exercise.targetReps, targetWeight: exercise.targetWeight, setCount: exercise.targetSets,
                stamp: stamp)
        }
        return WorkoutDocument(
            id: id, splitID: split.id, splitName: split.name, startedAt: Self.recorded(time, stamp), logs: logs,
            stamp: stamp)
    }

    /// Marks set `setIndex` of `logID` done with the reps and weight lifted (a redo overwrites them).
    package mutating func completeSet(
        logID: DocumentID, setIndex: Int, reps: Int, weight: Double, at stamp: Stamp, time: Timestamp? = nil
    ) throws(MutationError) {
        guard reps >= 0 else { throw .invalidValue(field: "reps", reason: "must not be negative") }
        guard SetRecord.isValid(weight: weight) else {
            throw .invalidValue(field: "weight", reason: SetRecord.weightRule)
        }
        let index = try logIndex(logID)
        guard logs[index].sets.indices.contains(setIndex) else {
            throw .setOutOfRange(log: logID, index: setIndex, count: logs[index].sets.count)
        }
        guard !logs[index].isResolved else { throw .logAlreadyResolved(logID) }
        let completedAt = max(Self.recorded(time, stamp), startedAt)
        logs[index].sets[setIndex] = SetRecord(reps: reps, weight: weight, completedAt: completedAt, stamp: stamp)
        finish(at: stamp, time: time)
    }

    /// Clears a done set; the log falls back to in progress, or not started when no set is left done
    /// (a skipped log stays skipped).
    package mutating func undoSet(
        logID: DocumentID, setIndex: Int, at stamp: Stamp, time: Timestamp? = nil
    ) throws(MutationError) {
        let index = try logIndex(logID)
        guard logs[index].sets.indices.contains(setIndex) else {
            throw .setOutOfRange(log: logID, index: setIndex, count: logs[index].sets.count)
        }
        guard logs[index].sets[setIndex].isDone else { throw .setNotDone(log: logID, index: setIndex) }
        logs[index].sets[setIndex] = SetRecord(stamp: stamp)
        finish(at: stamp, time: time)
    }

    /// Skips a log that is not resolved yet; its done sets are kept.
    package mutating func skipLog(logID: DocumentID, at stamp: Stamp, time: Timestamp? = nil) throws(MutationError) {
        let index = try logIndex(logID)
        guard !logs[index].isResolved else { throw .logAlreadyResolved(logID) }
        mark(index, .skipped, at: stamp)
        finish(at: stamp, time: time)
    }

    /// Reopens a completed or skipped log so it can be changed; a completed run goes back to in progress.
    package mutating func reopenLog(logID: DocumentID, at stamp: Stamp, time: Timestamp? = nil) throws(MutationError) {
        let index = try logIndex(logID)
        guard logs[index].isResolved else { throw .logNotResolved(logID) }
        mark(index, .reopened, at: stamp)
        finish(at: stamp, time: time)
    }

    /// "Save Workout" / end keeping progress: every unfinished log is skipped, so the run resolves to
    /// completed with its done sets kept. A no-op error on a run that is already completed.
    package mutating func endKeepingProgress(at stamp: Stamp, time: Timestamp? = nil) throws(MutationError) {
        guard status != .completed else { throw .runCompleted(id) }
        for index in logs.indices where !logs[index].isResolved {
            mark(index, .skipped, at: stamp)
        }
        finish(at: stamp, time: time)
    }

    /// Opens a pause; paused time is excluded from the active duration.
    package mutating func pause(at stamp: Stamp, time: Timestamp? = nil) throws(MutationError) {
        guard status != .completed else { throw .runCompleted(id) }
        guard !isPaused else { throw .alreadyPaused }
        // The pauses a run may hold are what its split's size bound allows for: past them, the run
        // could outgrow one message from the watch and never be delivered.
        guard pauses.count < SplitDocument.runSizePauseAllowance else {
            throw .tooManyPauses(limit: SplitDocument.runSizePauseAllowance)
        }
        let after = max(startedAt, pauses.last.flatMap(\.end) ?? startedAt)
        pauses.append(PauseInterval(start: max(Self.recorded(time, stamp), after)))
        pausesStamp = stamp
        finish(at: stamp, time: time)
    }

    /// Closes the open pause.
    package mutating func resume(at stamp: Stamp, time: Timestamp? = nil) throws(MutationError) {
        guard isPaused else { throw .notPaused }
        pauses[pauses.count - 1].end = max(Self.recorded(time, stamp), pauses[pauses.count - 1].start)
        pausesStamp = stamp
        finish(at: stamp, time: time)
    }

    /// Records what the watch session measured when it finished and saved.
    package mutating func recordMetrics(_ metrics: SessionMetrics, at stamp: Stamp, time: Timestamp? = nil) {
        self.metrics = metrics
        metricsStamp = stamp
        finish(at: stamp, time: time)
    }

    /// The one shared status rule (seed 001), a pure function of the registers, so two replicas with
    /// the same registers derive the same run. A log's resolution: its mark when the mark is not older
    /// than every set edit of the log (skipped, or reopened = in progress); otherwise completed when
    /// every set is done, skipped when it carries a skip mark (a set completed after a skip — the
    /// watch's concurrent completion of a set of a run the phone ended — lands in the skipped log),
    /// in progress when some set is done, not started else. The run: all logs resolved → completed,
    /// with `endedAt` from the `ending` register (or, when only a merge completed it, the time of its
    /// latest log edit); any log not at not-started → in progress; else not started.
    /// `currentStateIndex` moves to the first unfinished set, `updatedAt` to the newest stamp.
    package mutating func recomputeDerived() {
        for index in logs.indices {
            logs[index].resolution = Self.resolution(of: logs[index])
        }
        if !logs.isEmpty, logs.allSatisfy(\.isResolved) {
            status = .completed
            // Never before the last completion or the start, whatever the clocks that recorded them.
            let completed = logs.lazy.flatMap(\.sets).compactMap(\.completedAt).max()
            let recorded = ending.at ?? completed ?? logs.map(\.version).max().map(\.time) ?? startedAt
            endedAt = max(recorded, completed ?? startedAt, startedAt)
        } else {
            status = logs.contains(where: { $0.resolution != .notStarted }) ? .inProgress : .notStarted
            endedAt = nil
        }
        currentStateIndex = firstUnfinishedSetIndex
        updatedAt = version.time
    }

    /// Time from `startedAt` to `end` (or to `endedAt` when nil), with paused time taken out.
    package func activeDuration(until end: Timestamp? = nil) -> Duration {
        let until = end ?? endedAt ?? startedAt
        var paused = Duration.zero
        for pause in pauses {
            let from = max(pause.start, startedAt)
            let to = min(pause.end ?? until, until)
            if to > from { paused += from.duration(to: to) }
        }
        return max(.zero, startedAt.duration(to: max(until, startedAt)) - paused)
    }

    /// The metrics a finished session records for this run at `now`. The volume is capped at the
    /// largest finite number: a run read with weights past `SetRecord.maximumWeight` could sum to
    /// infinity, which JSON cannot carry (watchd died encoding one).
    package func sessionMetrics(recordedAt now: Timestamp) -> SessionMetrics {
        let done = logs.flatMap(\.sets).filter(\.isDone)
        let volume = done.reduce(0.0) { $0 + Double($1.reps ?? 0) * ($1.weight ?? 0) }
        return SessionMetrics(
            activeSeconds: activeDuration(until: endedAt ?? now).seconds, setsCompleted: done.count,
            totalVolume: min(volume, .greatestFiniteMagnitude), recordedAt: now)
    }

    /// The flow index of the first set that is neither done nor in a resolved log.
    package var firstUnfinishedSetIndex: Int {
        var index = 0
        for log in logs {
            if log.isResolved {
                index += log.sets.count
                continue
            }
            guard let open = log.sets.firstIndex(where: { !$0.isDone }) else {
                index += log.sets.count
                continue
            }
            return index + open
        }
        return index
    }

    /// The log and set at flow index `stateIndex`, or nil past the end.
    package func position(ofStateIndex stateIndex: Int) -> (logIndex: Int, setIndex: Int)? {
        var remaining = stateIndex
        for (logIndex, log) in logs.enumerated() {
            if remaining < log.sets.count { return (logIndex, remaining) }
            remaining -= log.sets.count
        }
        return nil
    }

    /// After an edit: derive, then write the `ending` register when the edit ended or reopened the
    /// run (an open pause closes at the end, as part of the same edit). The edit that completes the
    /// run stamps the end with its own time, whatever an earlier ending left there (a merge can leave
    /// an in-progress run with a concurrent edit's old end).
    private mutating func finish(at stamp: Stamp, time: Timestamp?) {
        #if SIMULATION_MUTATION_STALE_END
            // (`scripts/simulate --mutations`: an end a merge left behind is kept by the completing edit.)
            let wasCompleted = true
        #else
            let wasCompleted = status == .completed
        #endif
        recomputeDerived()
        if status == .completed, !wasCompleted || ending.at == nil {
            let completed = logs.lazy.flatMap(\.sets).compactMap(\.completedAt).max() ?? startedAt
            let at = max(Self.recorded(time, stamp), completed, startedAt)
            ending = Ending(at: at, stamp: stamp)
            if let last = pauses.last, last.end == nil {
                pauses[pauses.count - 1].end = max(at, last.start)
                pausesStamp = stamp
            }
        } else if status != .completed, ending.at != nil {
            ending = Ending(at: nil, stamp: stamp)
        }
        recomputeDerived()
    }

    /// The time an edit records: the person's wall-clock `time`, or the stamp's when none is given.
    private static func recorded(_ time: Timestamp?, _ stamp: Stamp) -> Timestamp {
        #if SIMULATION_MUTATION_STAMP_TIME
            // (`scripts/simulate --mutations`: the merge clock's time, which stands still while a peer's runs ahead.)
            stamp.time
        #else
            time ?? stamp.time
        #endif
    }

    private mutating func mark(_ index: Int, _ mark: LogMark, at stamp: Stamp) {
        logs[index].mark = mark
        logs[index].markStamp = stamp
    }

    private func logIndex(_ logID: DocumentID) throws(MutationError) -> Int {
        guard let index = logs.firstIndex(where: { $0.id == logID }) else { throw .unknownLog(logID) }
        return index
    }

    private static func resolution(of log: ExerciseLog) -> LogResolution {
        let newestSetEdit = log.sets.map(\.stamp).max()
        if let mark = log.mark, newestSetEdit.map({ log.markStamp >= $0 }) ?? true {
            return mark == .skipped ? .skipped : .inProgress
        }
        if log.sets.allSatisfy(\.isDone) { return .completed }
        if log.mark == .skipped { return .skipped }
        return log.sets.contains(where: \.isDone) ? .inProgress : .notStarted
    }

    private static func logID(run: DocumentID, index: Int) -> DocumentID {
        // Sound: a split has at most a few hundred exercises, far below 0xFFFF, so four hex digits always
        // suffice and the result keeps the 8-4-4-4-12 shape of the (valid) run ID.
        precondition(index <= 0xFFFF, "a run cannot have more than 65,536 logs")
        let hex = String(index, radix: 16, uppercase: true)
        let suffix = String(repeating: "0", count: 4 - hex.count) + hex
        guard let id = DocumentID(String(run.rawValue.dropLast(4)) + suffix) else {
            preconditionFailure("a valid run ID with a hex suffix is a valid ID")
        }
        return id
    }
}
