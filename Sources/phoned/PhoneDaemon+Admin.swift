import ArgumentParsing
import DaemonRuntime
import Foundation
import LinkRuntime
import LiveMirror
import SyncEngine
import WorkoutModel

extension PhoneDaemon {
    /// Serves one phonectl request (already parsed by phonectl; values are re-validated here).
    func handleAdmin(_ request: AdminRequest) -> AdminResponse {
        AdminOutcome.serve(request, logger: logger) { command in
            defer { reconcileLive() }
            return try execute(command)
        }
    }

    private func execute(_ command: ParsedCommand) throws -> AdminOutcome {
        switch command.path {
        case ["status"]:
            let status = self.status()
            return .output(text: status.text, json: AdminOutcome.json(status))
        case ["splits"]:
            let splits = engine.splits.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            let text = splits.map { split in
                "\(split.id)  \(split.name)  "
                    + split.exercises.map { "\($0.name) \($0.targetSets)x\($0.targetReps)@\(format($0.targetWeight))" }
                    .joined(separator: ", ")
            }
            return .output(text: AdminOutcome.lines(text, empty: "no splits"), json: AdminOutcome.json(splits))
        case ["workouts"]:
            let limit = try command.optionalInteger("limit")
            if let limit, limit < 1 { throw UsageError("--limit must be at least 1, got \(limit)") }
            let after = command.optionalString("after") == nil ? nil : try command.documentID("after")
            return try workouts(all: command.flag("all"), limit: limit, after: after, json: command.flag("json"))
        case ["show"]:
            let id = try command.documentID("id")
            if let split = engine.splits[id] {
                return .output(text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self), json: AdminOutcome.json(split))
            }
            let run = try readRun(id)
            return .output(text: describe(run), json: AdminOutcome.json(run))
        case ["split", "create"]:
            let id = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            let exercises = try command.strings("exercise").map(parseExercise)
            try operate(.createSplit(id: id, name: try command.string("name"), exercises: exercises))
            return .output(text: "\(id)", json: "{\"id\":\"\(id)\"}")
        case ["split", "edit"]:
            let exercises = try command.strings("exercise").map(parseExercise)
            try operate(
                .editSplit(
                    id: try command.documentID("id"), name: command.optionalString("name"),
                    exercises: exercises.isEmpty ? nil : exercises))
            return .done
        case ["split", "delete"]:
            try operate(.deleteSplit(id: try command.documentID("id")))
            return .done
        case ["start"]:
            let runID = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            try operate(
                .startRun(splitID: try command.documentID("split"), runID: runID, endingOthers: command.flag("end-others")))
            return .output(text: "\(runID)", json: "{\"id\":\"\(runID)\"}")
        case ["complete"]:
            let runID = try command.documentID("run")
            let run = try loadRun(runID)
            let (logIndex, setIndex) = try command.setPosition(in: run)
            let log = run.logs[logIndex]
            try operate(
                .completeSet(
                    runID: runID, logIndex: logIndex, setIndex: setIndex,
                    reps: try command.optionalInteger("reps") ?? log.targetReps,
                    weight: try command.optionalDouble("weight") ?? log.targetWeight))
            return .done
        case ["undo"]:
            let runID = try command.documentID("run")
            let (logIndex, setIndex) = try command.setPosition(in: try loadRun(runID))
            try operate(.undoSet(runID: runID, logIndex: logIndex, setIndex: setIndex))
            return .done
        case ["skip"]:
            let runID = try command.documentID("run")
            try operate(.skipLog(runID: runID, logIndex: try command.exerciseIndex(in: try loadRun(runID))))
            return .done
        case ["reopen"]:
            let runID = try command.documentID("run")
            try operate(.reopenLog(runID: runID, logIndex: try command.exerciseIndex(in: try loadRun(runID))))
            return .done
        case ["pause"]:
            try operate(.pause(runID: try command.documentID("run")))
            return .done
        case ["resume"]:
            try operate(.resume(runID: try command.documentID("run")))
            return .done
        case ["end"]:
            try operate(.endKeepingProgress(runID: try command.documentID("run")))
            return .done
        case ["discard"]:
            try operate(.discard(runID: try command.documentID("run")))
            return .done
        case ["clear-history"]:
            let count = engine.index.completedCount
            try operate(.clearHistory)
            return .output(text: "tombstoned \(count) completed runs", json: "{\"tombstoned\":\(count)}")
        case ["settings", "show"]:
            return .output(text: describe(engine.settings), json: AdminOutcome.json(engine.settings))
        case ["settings", "set"]:
            var settings = engine.settings
            if let rest = try command.optionalInteger("rest") { settings.restSeconds = rest }
            if let countdown = try command.optionalInteger("countdown") { settings.doneCountdownSeconds = countdown }
            if let unit = command.optionalString("unit") {
                guard let parsed = WeightUnit(rawValue: unit) else { throw UsageError("--unit must be kg or lb, got \(unit)") }
                settings.weightUnit = parsed
            }
            try operate(.setSettings(settings))
            return .output(text: describe(settings), json: AdminOutcome.json(settings))
        case ["lock", "workout"]:
            try operate(.setWorkoutLock(try command.documentID("id")))
            return .done
        case ["lock", "split"]:
            try operate(.setSplitLock(try command.documentID("id")))
            return .done
        case ["unlock", "workout"]:
            try operate(.setWorkoutLock(nil))
            return .done
        case ["unlock", "split"]:
            try operate(.setSplitLock(nil))
            return .done
        case ["push"]:
            try operate(.forcePush)
            return .done
        case let path where path.first == "live":
            return try live.execute(
                command, run: { try self.loadRun($0) }, settings: engine.settings
            ) { run, logIndex, setIndex, reps, weight in
                try self.operate(
                    .completeSet(runID: run.id, logIndex: logIndex, setIndex: setIndex, reps: reps, weight: weight))
                return nil
            }
        case ["launch"]:
            try operate(.launch(runID: try command.documentID("run")))
            return .done
        default:
            return .refused("phoned does not know the command '\(command.path.joined(separator: " "))'")
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






    /// `NAME:SETSxREPS@WEIGHT[:EQUIPMENT]`, e.g. `Squat:3x5@100:barbell`.
    private func parseExercise(_ text: String) throws -> ExerciseTemplate {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3 else {
            throw UsageError("--exercise must look like NAME:SETSxREPS@WEIGHT[:EQUIPMENT], got \(text.debugDescription)")
        }
        let shape = parts[1].split(separator: "@").map(String.init)
        let counts = shape.first?.split(separator: "x").map(String.init) ?? []
        guard shape.count == 2, counts.count == 2, let sets = Int(counts[0]), let reps = Int(counts[1]),
            let weight = Double(shape[1])
        else {
            throw UsageError("--exercise must look like NAME:SETSxREPS@WEIGHT[:EQUIPMENT], got \(text.debugDescription)")
        }
        return ExerciseTemplate(
            name: parts[0], equipment: parts.count == 3 ? parts[2] : "", targetSets: sets, targetReps: reps,
            targetWeight: weight)
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
