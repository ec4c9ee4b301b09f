import AdminCommands
import DaemonRuntime
import Foundation
import LinkRuntime
import LiveMirror
import SyncEngine
import WorkoutModel

extension PhoneDaemon {
    /// Serves one phonectl command (typed by phonectl; what needs phoned's state is checked here).
    func handleAdmin(_ command: PhoneCommand) -> AdminResponse {
        AdminOutcome.serve(command, logger: logger) { command in
            defer { reconcileLive() }
            return try execute(command)
        }
    }

    private func execute(_ command: PhoneCommand) throws -> AdminOutcome {
        switch command {
        case .status:
            let status = self.status()
            return .output(text: status.text, json: AdminOutcome.json(status))
        case .splits:
            let splits = engine.splits.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            let text = splits.map { split in
                "\(split.id)  \(split.name)  "
                    + split.exercises.map { "\($0.name) \($0.targetSets)x\($0.targetReps)@\(format($0.targetWeight))" }
                    .joined(separator: ", ")
            }
            return .output(text: AdminOutcome.lines(text, empty: "no splits"), json: AdminOutcome.json(splits))
        case .workouts(let all, let limit, let after, let json):
            return try workouts(all: all, limit: limit, after: after, json: json)
        case .show(let id):
            if let split = engine.splits[id] {
                return .output(text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self), json: AdminOutcome.json(split))
            }
            let run = try readRun(id)
            return .output(text: describe(run), json: AdminOutcome.json(run))
        case .createSplit(let name, let exercises):
            let id = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            try operate(.createSplit(id: id, name: name, exercises: exercises))
            return .output(text: "\(id)", json: AdminOutcome.json(AdminReply.Created(id: id)))
        case .editSplit(let id, let name, let exercises):
            try operate(.editSplit(id: id, name: name, exercises: exercises))
            return .done
        case .deleteSplit(let id):
            try operate(.deleteSplit(id: id))
            return .done
        case .start(let splitID, let endingOthers):
            let runID = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            try operate(.startRun(splitID: splitID, runID: runID, endingOthers: endingOthers))
            return .output(text: "\(runID)", json: AdminOutcome.json(AdminReply.Created(id: runID)))
        case .set(.complete(let runID, let exercise, let set, let reps, let weight)):
            let run = try loadRun(runID)
            let (logIndex, setIndex) = try run.setPosition(exercise: exercise, set: set)
            let log = run.logs[logIndex]
            try operate(
                .completeSet(
                    runID: runID, logIndex: logIndex, setIndex: setIndex, reps: reps ?? log.targetReps,
                    weight: weight ?? log.targetWeight))
            return .done
        case .set(.undo(let runID, let exercise, let set)):
            let (logIndex, setIndex) = try loadRun(runID).setPosition(exercise: exercise, set: set)
            try operate(.undoSet(runID: runID, logIndex: logIndex, setIndex: setIndex))
            return .done
        case .set(.skip(let runID, let exercise)):
            try operate(.skipLog(runID: runID, logIndex: try loadRun(runID).logIndex(exercise: exercise)))
            return .done
        case .set(.reopen(let runID, let exercise)):
            try operate(.reopenLog(runID: runID, logIndex: try loadRun(runID).logIndex(exercise: exercise)))
            return .done
        case .pause(let runID):
            try operate(.pause(runID: runID))
            return .done
        case .resume(let runID):
            try operate(.resume(runID: runID))
            return .done
        case .end(let runID):
            try operate(.endKeepingProgress(runID: runID))
            return .done
        case .discard(let runID):
            try operate(.discard(runID: runID))
            return .done
        case .clearHistory:
            let count = engine.index.completedCount
            try operate(.clearHistory)
            let json = AdminOutcome.json(AdminReply.Tombstoned(tombstoned: count))
            return .output(text: "tombstoned \(count) completed runs", json: json)
        case .showSettings:
            return .output(text: describe(engine.settings), json: AdminOutcome.json(engine.settings))
        case .setSettings(let rest, let countdown, let unit):
            var settings = engine.settings
            if let rest { settings.restSeconds = rest }
            if let countdown { settings.doneCountdownSeconds = countdown }
            if let unit { settings.weightUnit = unit }
            try operate(.setSettings(settings))
            return .output(text: describe(settings), json: AdminOutcome.json(settings))
        case .lockWorkout(let id):
            try operate(.setWorkoutLock(id))
            return .done
        case .lockSplit(let id):
            try operate(.setSplitLock(id))
            return .done
        case .unlockWorkout:
            try operate(.setWorkoutLock(nil))
            return .done
        case .unlockSplit:
            try operate(.setSplitLock(nil))
            return .done
        case .push:
            try operate(.forcePush)
            return .done
        case .metrics:
            return status().metrics(events: link.journal?.counts ?? [:])
        case .trace(let query):
            return .trace(query, stateDirectory: configuration.stateDirectory)
        case .live(let command):
            return try live.execute(
                command, run: { try self.loadRun($0) }, settings: engine.settings
            ) { run, logIndex, setIndex, reps, weight in
                try self.operate(
                    .completeSet(runID: run.id, logIndex: logIndex, setIndex: setIndex, reps: reps, weight: weight))
                return nil
            }
        case .launch(let runID):
            try operate(.launch(runID: runID))
            return .done
        }
    }

    /// Performs an operation and its actions, loading the run it changes first if only its summary
    /// is in memory (a run outside the recent window), so the model itself answers.
    private func operate(_ operation: PhoneOperation) throws {
        if let runID = operation.runID, engine.needsDocument(runID) { _ = try loadRun(runID) }
        perform(try engine.perform(operation, now: .current))
    }

    /// The run from the working set, loading it from disk first when only its summary is in memory.
    private func loadRun(_ id: DocumentID) throws -> WorkoutDocument {
        if engine.needsDocument(id), let summary = engine.index.summaries[id] {
            let run = try documents.loadWorkout(id: id, startedAt: summary.startedAt)
            perform(engine.handle(.runsLoaded([run], unreadable: [], now: .current)))
            return engine.run(id) ?? run
        }
        guard let run = engine.run(id) else {
            throw engine.tombstones[id] != nil ? OperationError.deleted(id) : OperationError.unknownRun(id)
        }
        return run
    }

    /// The run for reading: the working set's copy, else its file (not kept in memory).
    private func readRun(_ id: DocumentID) throws -> WorkoutDocument {
        if engine.needsDocument(id), let summary = engine.index.summaries[id] {
            return try documents.loadWorkout(id: id, startedAt: summary.startedAt)
        }
        return try loadRun(id)
    }

    /// The runs `workouts` lists, ordered by (start, ID): what the push carries now (active and
    /// recent, fitted to the context limit — whether or not a push ever went), or with `all` the whole
    /// history; `after` and `limit` cut one page of it.
    private func workouts(all: Bool, limit: Int?, after: DocumentID?, json: Bool) throws -> AdminOutcome {
        let index = engine.index
        let carried: [WorkoutDocument] = all ? [] : engine.context(now: .current) { try? self.readRun($0) }.workouts
        let known = Dictionary(uniqueKeysWithValues: carried.map { ($0.id, $0) })
        let ids = all ? Array(index.summaries.keys) : carried.map(\.id)
        var summaries = ids.compactMap { index.summaries[$0] }.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        if let after {
            guard let anchor = index.summaries[after] else { throw OperationError.unknownRun(after) }
            summaries.removeAll { ($0.startedAt, $0.id) <= (anchor.startedAt, anchor.id) }
        }
        if let limit { summaries = Array(summaries.prefix(limit)) }
        let runs = try summaries.map { summary in try known[summary.id] ?? self.readRun(summary.id) }
        // Only the form the CLI prints: a long history is costly to encode twice.
        guard !json else { return .output(text: "", json: AdminOutcome.json(runs)) }
        let text = runs.map { run in
            "\(run.id)  \(run.status.rawValue)  \(run.splitName)  sets \(run.logs.flatMap(\.sets).filter(\.isDone).count)/\(run.totalSetCount)  started \(run.startedAt)"
        }
        return .output(text: AdminOutcome.lines(text, empty: all ? "no runs" : "no active or recent runs"), json: "")
    }

    private func status() -> PhoneStatus {
        let link = self.link.status()
        var counts: [String: Int] = [:]
        for (outcome, count) in engine.ingestCounts { counts[outcome.rawValue] = count }
        return PhoneStatus(
            daemon: "phoned", instance: link.instance, uptimeSeconds: Int(Date().timeIntervalSince(startedAt)),
            listenPort: Int(linkPort), activation: link.activated ? "activated" : "notActivated",
            reachable: link.reachable, linked: link.linked, watchInstance: link.peer,
            watchAppForeground: link.watchAppForeground, contextGenerationSent: link.contextGenerationSent ?? 0,
            contextGenerationAcknowledged: link.contextGenerationAcknowledged ?? 0,
            splits: engine.splits.count, activeRuns: engine.index.activeIDs.count,
            recentRuns: engine.index.pushSelection(now: .current, policy: engine.policy).count
                - engine.index.activeIDs.count,
            runsInHistory: engine.index.count,
            tombstones: engine.tombstones.count, pendingDeletes: engine.pendingDeletes.count,
            skippedFiles: skippedFiles.map(\.description), lastPushAt: engine.lastPushAt?.iso8601,
            pushError: engine.pushFailure, heldBackRuns: engine.lastPushed?.heldBackRunIDs?.count ?? 0,
            editingWorkoutID: engine.locks.editingWorkoutID?.rawValue, editingSplitID: engine.locks.editingSplitID?.rawValue,
            ingest: counts, outboxDepth: link.outboxDepth, launchesSent: launchesSent, launchesDropped: launchesDropped,
            liveFramesSent: live.framesSent, liveFramesReceived: live.framesReceived)
    }

    private func describe(_ run: WorkoutDocument) -> String {
        var text = "\(run.splitName) — \(run.status.rawValue)\nrun \(run.id)\nstarted \(run.startedAt)"
        if let end = run.endedAt { text += "\nended \(end)" }
        if run.isPaused { text += "\npaused" }
        for (index, log) in run.logs.enumerated() {
            let sets = log.sets.map { set in
                set.isDone ? "\(set.reps ?? 0)x\(format(set.weight ?? 0))" : "-"
            }
            text += "\n\(index + 1). \(log.exerciseName) [\(log.resolution.rawValue)] \(sets.joined(separator: " "))"
        }
        if let metrics = run.metrics {
            text += "\nsession: \(Int(metrics.activeSeconds)) s active, \(metrics.setsCompleted) sets, volume \(format(metrics.totalVolume))"
        }
        return text
    }

    private func describe(_ settings: Settings) -> String {
        "rest \(settings.restSeconds) s, countdown \(settings.doneCountdownSeconds) s, unit \(settings.weightUnit.rawValue)"
    }
}

func format(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
}
