import WorkoutModel

/// What a person does on the phone (phonectl's verbs). IDs for new documents come from the shell.
package enum PhoneOperation: Equatable, Sendable {
    case createSplit(id: DocumentID, name: String, exercises: [ExerciseTemplate])
    case editSplit(id: DocumentID, name: String?, exercises: [ExerciseTemplate]?)
    case deleteSplit(id: DocumentID)
    /// Start a run of a split (a snapshot); with `endingOthers`, every other active run is first ended
    /// keeping its progress (S1/S6). Also launches the watch app, best effort.
    case startRun(splitID: DocumentID, runID: DocumentID, endingOthers: Bool)
    case completeSet(runID: DocumentID, logIndex: Int, setIndex: Int, reps: Int, weight: Double)
    case undoSet(runID: DocumentID, logIndex: Int, setIndex: Int)
    case skipLog(runID: DocumentID, logIndex: Int)
    case reopenLog(runID: DocumentID, logIndex: Int)
    case pause(runID: DocumentID)
    case resume(runID: DocumentID)
    /// "Save Workout": unfinished logs skipped, the run resolves to completed.
    case endKeepingProgress(runID: DocumentID)
    /// Soft delete (S7): tombstone written, live file removed.
    case discard(runID: DocumentID)
    /// Tombstone every completed run the phone has now — never a date cutoff.
    case clearHistory
    case setSettings(Settings)
    case setWorkoutLock(DocumentID?)
    case setSplitLock(DocumentID?)
    /// Re-send the state even if unchanged.
    case forcePush
    /// Ask the watch app to launch for a run (best effort, never queued).
    case launch(runID: DocumentID)
}

extension PhoneOperation {
    /// The existing run the operation changes, whose document must be loaded first (`needsDocument`).
    package var runID: DocumentID? {
        switch self {
        case .completeSet(let id, _, _, _, _), .undoSet(let id, _, _), .skipLog(let id, _), .reopenLog(let id, _),
            .pause(let id), .resume(let id), .endKeepingProgress(let id):
            return id
        default:
            return nil
        }
    }
}

/// Why the phone refused an operation; nothing was changed.
package enum OperationError: Error, Equatable, Sendable, CustomStringConvertible {
    case stillGathering
    case unknownSplit(DocumentID)
    case unknownRun(DocumentID)
    case deleted(DocumentID)
    case alreadyExists(DocumentID)
    case logIndexOutOfRange(run: DocumentID, index: Int, count: Int)
    case runNotLoaded(DocumentID)
    case invalid(String)
    case refused(MutationError)

    package var description: String {
        switch self {
        case .stillGathering: return "the initial scan of the document directory has not finished yet"
        case .unknownSplit(let id): return "no split \(id)"
        case .unknownRun(let id): return "no run \(id)"
        case .deleted(let id): return "\(id) is deleted (tombstoned) and can never be written again"
        case .alreadyExists(let id): return "\(id) already exists"
        case .logIndexOutOfRange(let run, let index, let count):
            return "run \(run) has \(count) exercises; no exercise \(index + 1)"
        case .runNotLoaded(let id): return "run \(id) is not loaded (internal: load it before operating)"
        case .invalid(let reason): return reason
        case .refused(let error): return error.description
        }
    }
}

extension SyncEngine {
    /// Performs a person's operation; throws (changing nothing) when it is refused.
    package mutating func perform(_ operation: PhoneOperation, now: Timestamp) throws(OperationError) -> [Action] {
        guard isGathered else { throw .stillGathering }
        // Mutated in place, never through a copy of the engine: the first write to a copy's
        // dictionary duplicates it whole, which made every operation cost as much as the history.
        // `apply` refuses before it changes anything but the clocks, so a refusal restores only those
        // and the batch's deferred writes it took.
        let rollback = Rollback(self)
        var actions = takeDeferredWrites()
        do throws(OperationError) {
            try apply(operation, now: now, into: &actions)
        } catch {
            rollback.restore(into: &self)
            throw error
        }
        return actions
    }

    /// What a refused operation may have changed before it threw: the clocks it stamped with, and the
    /// deferred writes `takeDeferredWrites` moved into the working set (with what they replaced).
    private struct Rollback {
        let clock: HybridLogicalClock
        let stamper: EditStamper
        let deferredWrites: [DocumentID: WorkoutDocument]
        let deferredOrder: [DocumentID]
        let deferredLogs: [SyncDiagnostic]
        let replaced: [(DocumentID, WorkoutDocument?)]

        init(_ engine: SyncEngine) {
            clock = engine.clock
            stamper = engine.stamper
            deferredWrites = engine.deferredWrites
            deferredOrder = engine.deferredOrder
            deferredLogs = engine.deferredLogs
            replaced = engine.deferredOrder.map { ($0, engine.documents[$0]) }
        }

        func restore(into engine: inout SyncEngine) {
            engine.clock = clock
            engine.stamper = stamper
            engine.deferredWrites = deferredWrites
            engine.deferredOrder = deferredOrder
            engine.deferredLogs = deferredLogs
            for (id, document) in replaced { engine.documents[id] = document }
        }
    }

    private mutating func apply(
        _ operation: PhoneOperation, now: Timestamp, into actions: inout [Action]
    ) throws(OperationError) {
        switch operation {
        case .createSplit(let id, let name, let exercises):
            guard tombstones[id] == nil, pendingDeletes[id] == nil else { throw .deleted(id) }
            guard splits[id] == nil else { throw .alreadyExists(id) }
            try validateSplit(name: name, exercises: exercises)
            let split = SplitDocument(id: id, name: name, exercises: exercises, updatedAt: stamper.stamp(at: now))
            splits[id] = split
            actions.append(.writeSplit(split))
        case .editSplit(let id, let name, let exercises):
            guard var split = splits[id] else { throw tombstones[id] != nil ? .deleted(id) : .unknownSplit(id) }
            if let name { split.name = name }
            if let exercises { split.exercises = exercises }
            try validateSplit(name: split.name, exercises: split.exercises)
            stamper.observe(split.updatedAt)
            split.updatedAt = stamper.stamp(at: now)
            splits[id] = split
            actions.append(.writeSplit(split))
        case .deleteSplit(let id):
            guard splits.removeValue(forKey: id) != nil else {
                throw tombstones[id] != nil ? .deleted(id) : .unknownSplit(id)
            }
            if locks.editingSplitID == id { locks.editingSplitID = nil }
            let stub = Tombstone(id: id, kind: .split, deletedAt: stamper.stamp(at: now))
            pendingDeletes[id] = stub
            actions.append(.writeTombstone(stub))
            actions.append(.removeSplitFile(id))
        case .startRun(let splitID, let runID, let endingOthers):
            guard let split = splits[splitID] else {
                throw tombstones[splitID] != nil ? .deleted(splitID) : .unknownSplit(splitID)
            }
            guard index[runID] == nil else { throw .alreadyExists(runID) }
            guard tombstones[runID] == nil, pendingDeletes[runID] == nil else { throw .deleted(runID) }
            // Every change is worked out before any is written, so a refusal leaves nothing half done.
            var ended: [WorkoutDocument] = []
            if endingOthers {
                for other in index.activeIDs.sorted() {
                    ended.append(
                        try changed(other, now: now) { run, stamp throws(MutationError) in
                            try run.endKeepingProgress(at: stamp, time: now)
                        })
                }
            }
            let run: WorkoutDocument
            do {
                run = try WorkoutDocument.start(from: split, id: runID, at: clock.stamp(at: now), time: now)
            } catch {
                throw .refused(error)
            }
            for other in ended { write(other, now: now, into: &actions) }
            write(run, now: now, into: &actions)
            // The launch goes after the push (below): on the one link the watch then applies the
            // state that ends the other runs (and their session) before it is asked to start this one.
            push(now: now, force: false, reason: "cache changed", into: &actions)
            actions.append(.launchWatchApp(runID: runID))
            return
        case .completeSet(let runID, let logIndex, let setIndex, let reps, let weight):
            try mutate(runID, log: logIndex, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.completeSet(
                    logID: run.logs[logIndex].id, setIndex: setIndex, reps: reps, weight: weight, at: stamp, time: now)
            }
        case .undoSet(let runID, let logIndex, let setIndex):
            try mutate(runID, log: logIndex, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.undoSet(logID: run.logs[logIndex].id, setIndex: setIndex, at: stamp, time: now)
            }
        case .skipLog(let runID, let logIndex):
            try mutate(runID, log: logIndex, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.skipLog(logID: run.logs[logIndex].id, at: stamp, time: now)
            }
        case .reopenLog(let runID, let logIndex):
            try mutate(runID, log: logIndex, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.reopenLog(logID: run.logs[logIndex].id, at: stamp, time: now)
            }
        case .pause(let runID):
            try mutate(runID, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.pause(at: stamp, time: now)
            }
        case .resume(let runID):
            try mutate(runID, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.resume(at: stamp, time: now)
            }
        case .endKeepingProgress(let runID):
            try mutate(runID, now: now, into: &actions) { run, stamp throws(MutationError) in
                try run.endKeepingProgress(at: stamp, time: now)
            }
        case .discard(let runID):
            guard tombstones[runID] == nil, pendingDeletes[runID] == nil else { throw .deleted(runID) }
            guard index[runID] != nil else { throw .unknownRun(runID) }
            delete(runID, now: now, into: &actions)
        case .clearHistory:
            let completed = index.completedIDs
            for id in completed { delete(id, now: now, into: &actions) }
            actions.append(.log(.historyCleared(tombstoned: completed.count)))
        case .setSettings(let newSettings):
            do {
                try newSettings.validate()
            } catch {
                throw .invalid(error.description)
            }
            settings = newSettings
            settingsCustomized = true
            actions.append(.persistSettings(newSettings))
        case .setWorkoutLock(let id):
            if let id, index[id] == nil { throw .unknownRun(id) }
            locks.editingWorkoutID = id
        case .setSplitLock(let id):
            if let id, splits[id] == nil { throw .unknownSplit(id) }
            locks.editingSplitID = id
        case .forcePush:
            push(now: now, force: true, reason: "requested", into: &actions)
            return
        case .launch(let runID):
            guard index[runID] != nil else { throw .unknownRun(runID) }
            actions.append(.launchWatchApp(runID: runID))
            return
        }
        push(now: now, force: false, reason: "cache changed", into: &actions)
    }

    /// Tombstones a run: a pending delete until `tombstoneWritten`, the live file removed.
    private mutating func delete(_ id: DocumentID, now: Timestamp, into actions: inout [Action]) {
        guard let summary = index[id] else { return }
        let stub = Tombstone(id: id, kind: .workout, deletedAt: stamper.stamp(at: now))
        pendingDeletes[id] = stub
        forget(run: id)
        if locks.editingWorkoutID == id { locks.editingWorkoutID = nil }
        actions.append(.writeTombstone(stub))
        actions.append(.removeWorkoutFile(id, startedAt: summary.startedAt))
    }

    /// Applies a model mutation to a cached run with a fresh stamp, then writes it.
    private mutating func mutate(
        _ runID: DocumentID, log logIndex: Int? = nil, now: Timestamp, into actions: inout [Action],
        _ change: (inout WorkoutDocument, Stamp) throws(MutationError) -> Void
    ) throws(OperationError) {
        write(try changed(runID, log: logIndex, now: now, change), now: now, into: &actions)
    }

    /// A cached run with a model mutation applied under a fresh stamp, not yet written: only the
    /// clock moves.
    private mutating func changed(
        _ runID: DocumentID, log logIndex: Int? = nil, now: Timestamp,
        _ change: (inout WorkoutDocument, Stamp) throws(MutationError) -> Void
    ) throws(OperationError) -> WorkoutDocument {
        guard tombstones[runID] == nil, pendingDeletes[runID] == nil else { throw .deleted(runID) }
        guard index[runID] != nil else { throw .unknownRun(runID) }
        guard var run = documents[runID] else { throw .runNotLoaded(runID) }
        if let logIndex, !run.logs.indices.contains(logIndex) {
            throw .logIndexOutOfRange(run: runID, index: logIndex, count: run.logs.count)
        }
        clock.observe(run)
        do {
            try change(&run, clock.stamp(at: now))
        } catch {
            throw .refused(error)
        }
        return run
    }

    func validateSplit(name: String, exercises: [ExerciseTemplate]) throws(OperationError) {
        if let problem = SplitDocument.ruleProblem(name: name, exercises: exercises) { throw .invalid(problem) }
        let probe = SplitDocument(
            id: DocumentID(bytes: [UInt8](repeating: 0, count: 16)), name: name, exercises: exercises,
            updatedAt: Timestamp(microsecondsSinceEpoch: 0))
        do {
            try probe.validate()
        } catch {
            throw .invalid(error.description)
        }
    }
}
