import ArgumentParsing
import DaemonRuntime
import Foundation
import LinkRuntime
import LiveMirror
import SyncEngine
import WorkoutModel

/// What an admin verb produced: output for the person, or a refusal to report (exit code 1).
enum AdminOutcome {
    case output(text: String, json: String)
    case refused(String)
}

extension PhoneDaemon {
    /// Serves one phonectl request (already parsed by phonectl; values are re-validated here).
    func handleAdmin(_ request: AdminRequest) -> AdminResponse {
        let outcome: AdminOutcome
        do {
            outcome = try execute(request.parsedCommand)
        } catch let error as OperationError {
            outcome = .refused(error.description)
        } catch let error as UsageError {
            outcome = .refused(error.message)
        } catch {
            outcome = .refused("\(error)")
        }
        reconcileLive()
        switch outcome {
        case .output(let text, let json):
            return .ok(text: text, json: json)
        case .refused(let message):
            logger.notice(
                "refused admin request", ["command": request.command.joined(separator: " "), "reason": message],
                component: "admin")
            return .refused(message)
        }
    }

    private func execute(_ command: ParsedCommand) throws -> AdminOutcome {
        switch command.path {
        case ["status"]:
            let status = self.status()
            return .output(text: status.text, json: encode(status))
        case ["splits"]:
            let splits = engine.splits.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            let text = splits.map { split in
                "\(split.id)  \(split.name)  "
                    + split.exercises.map { "\($0.name) \($0.targetSets)x\($0.targetReps)@\(format($0.targetWeight))" }
                    .joined(separator: ", ")
            }
            return .output(text: lines(text, empty: "no splits"), json: encode(splits))
        case ["workouts"]:
            return try workouts(all: command.flag("all"))
        case ["show"]:
            let id = try documentID(command, "id")
            if let split = engine.splits[id] {
                return .output(text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self), json: encode(split))
            }
            let run = try loadRun(id)
            return .output(text: describe(run), json: encode(run))
        case ["split", "create"]:
            let id = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            let exercises = try command.strings("exercise").map(parseExercise)
            try operate(.createSplit(id: id, name: try command.string("name"), exercises: exercises))
            return .output(text: "\(id)", json: "{\"id\":\"\(id)\"}")
        case ["split", "edit"]:
            let exercises = try command.strings("exercise").map(parseExercise)
            try operate(
                .editSplit(
                    id: try documentID(command, "id"), name: command.optionalString("name"),
                    exercises: exercises.isEmpty ? nil : exercises))
            return done()
        case ["split", "delete"]:
            try operate(.deleteSplit(id: try documentID(command, "id")))
            return done()
        case ["start"]:
            let runID = DocumentID(bytes: try SecureRandom.bytes(count: 16))
            try operate(
                .startRun(splitID: try documentID(command, "split"), runID: runID, endingOthers: command.flag("end-others")))
            return .output(text: "\(runID)", json: "{\"id\":\"\(runID)\"}")
        case ["complete"]:
            let runID = try documentID(command, "run")
            let run = try loadRun(runID)
            let (logIndex, setIndex) = try position(command, in: run)
            let log = run.logs[logIndex]
            try operate(
                .completeSet(
                    runID: runID, logIndex: logIndex, setIndex: setIndex,
                    reps: try command.optionalInteger("reps") ?? log.targetReps,
                    weight: try command.optionalDouble("weight") ?? log.targetWeight))
            return done()
        case ["undo"]:
            let runID = try documentID(command, "run")
            let (logIndex, setIndex) = try position(command, in: try loadRun(runID))
            try operate(.undoSet(runID: runID, logIndex: logIndex, setIndex: setIndex))
            return done()
        case ["skip"]:
            let runID = try documentID(command, "run")
            try operate(.skipLog(runID: runID, logIndex: try exerciseIndex(command, in: try loadRun(runID))))
            return done()
        case ["reopen"]:
            let runID = try documentID(command, "run")
            try operate(.reopenLog(runID: runID, logIndex: try exerciseIndex(command, in: try loadRun(runID))))
            return done()
        case ["pause"]:
            try operate(.pause(runID: try documentID(command, "run")))
            return done()
        case ["resume"]:
            try operate(.resume(runID: try documentID(command, "run")))
            return done()
        case ["end"]:
            try operate(.endKeepingProgress(runID: try documentID(command, "run")))
            return done()
        case ["discard"]:
            try operate(.discard(runID: try documentID(command, "run")))
            return done()
        case ["clear-history"]:
            let count = engine.index.completedCount
            try operate(.clearHistory)
            return .output(text: "tombstoned \(count) completed runs", json: "{\"tombstoned\":\(count)}")
        case ["settings"]:
            return .output(text: describe(engine.settings), json: encode(engine.settings))
        case ["settings", "set"]:
            var settings = engine.settings
            if let rest = try command.optionalInteger("rest") { settings.restSeconds = rest }
            if let countdown = try command.optionalInteger("countdown") { settings.doneCountdownSeconds = countdown }
            if let unit = command.optionalString("unit") {
                guard let parsed = WeightUnit(rawValue: unit) else { throw UsageError("--unit must be kg or lb, got \(unit)") }
                settings.weightUnit = parsed
            }
            try operate(.setSettings(settings))
            return .output(text: describe(settings), json: encode(settings))
        case ["lock", "workout"]:
            try operate(.setWorkoutLock(try documentID(command, "id")))
            return done()
        case ["lock", "split"]:
            try operate(.setSplitLock(try documentID(command, "id")))
            return done()
        case ["unlock", "workout"]:
            try operate(.setWorkoutLock(nil))
            return done()
        case ["unlock", "split"]:
            try operate(.setSplitLock(nil))
            return done()
        case ["push"]:
            try operate(.forcePush)
            return done()
        case ["live", "open"]:
            let run = try loadRun(try documentID(command, "run"))
            var logID: DocumentID?
            if let exercise = try command.optionalInteger("exercise") {
                guard (1...run.logs.count).contains(exercise) else {
                    throw UsageError("run \(run.id) has \(run.logs.count) exercises; no exercise \(exercise)")
                }
                logID = run.logs[exercise - 1].id
            }
            return liveOutcome(live.handle(.flowOpened(run: run, logID: logID, settings: engine.settings, now: .current)))
        case ["live", "advance"]:
            let runID = try documentID(command, "run")
            guard let screen = live.mirror.screen(for: runID, now: .current), screen.role == .driving else {
                return .refused("the run's flow is not open here (live open RUN first)")
            }
            switch screen.phase {
            case .ready:
                return liveOutcome(live.handle(.countdownSkipped(runID: runID, now: .current)))
            case .work:
                let run = try loadRun(runID)
                guard let logIndex = run.logs.firstIndex(where: { $0.id == screen.logID }) else {
                    return .refused("the run no longer has the exercise on screen")
                }
                let log = run.logs[logIndex]
                // The durable write first, then the live action (LiveMirror needs setCompleted before
                // the written document is absorbed; the phone's own write is not absorbed).
                try operate(
                    .completeSet(
                        runID: runID, logIndex: logIndex, setIndex: screen.setIndex,
                        reps: try command.optionalInteger("reps") ?? log.targetReps,
                        weight: try command.optionalDouble("weight") ?? log.targetWeight))
                return liveOutcome(live.handle(.setCompleted(runID: runID, now: .current)))
            case .rest:
                return liveOutcome(live.handle(.restSkipped(runID: runID, now: .current)))
            case .finish:
                return .refused("the exercise is finished; live close RUN, or live open RUN for the next exercise")
            }
        case ["live", "close"]:
            return liveOutcome(live.handle(.flowClosed(runID: try documentID(command, "run"), now: .current)))
        case ["live", "dismiss"]:
            return liveOutcome(live.handle(.coverDismissed(runID: try documentID(command, "run"))))
        case ["live", "show"]:
            let shown = live.show(now: .current)
            return .output(text: shown.text, json: shown.json)
        case ["launch"]:
            try operate(.launch(runID: try documentID(command, "run")))
            return done()
        default:
            return .refused("phoned does not know the command '\(command.path.joined(separator: " "))'")
        }
    }

    /// Performs an operation and its actions.
    private func operate(_ operation: PhoneOperation) throws {
        perform(try engine.perform(operation, now: .current))
    }

    /// The run from the working set, loading it from disk first when only its summary is in memory.
    private func loadRun(_ id: DocumentID) throws -> WorkoutDocument {
        if engine.needsDocument(id), let summary = engine.index.summaries[id] {
            let run = try documents.loadWorkout(id: id, startedAt: summary.startedAt)
            perform(engine.handle(.documentScanned(.workout(run), now: .current)))
            if let loaded = engine.run(id) { return loaded }
            return run
        }
        guard let run = engine.run(id) else {
            throw engine.tombstones[id] != nil ? OperationError.deleted(id) : OperationError.unknownRun(id)
        }
        return run
    }

    private func workouts(all: Bool) throws -> AdminOutcome {
        let selection = engine.lastPushed?.workouts.map(\.id) ?? []
        var runs: [WorkoutDocument] = engine.index.activeIDs.compactMap { engine.run($0) }
        if all {
            runs = try engine.index.summaries.keys.map { try loadRun($0) }
        } else {
            runs += selection.compactMap { engine.run($0) }.filter { !$0.isActive }
        }
        runs.sort { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        let text = runs.map { run in
            "\(run.id)  \(run.status.rawValue)  \(run.splitName)  sets \(run.logs.flatMap(\.sets).filter(\.isDone).count)/\(run.totalSetCount)  started \(run.startedAt)"
        }
        return .output(text: lines(text, empty: all ? "no runs" : "no active or recent runs"), json: encode(runs))
    }

    private func status() -> PhoneStatus {
        let link = self.link.status()
        let selection = engine.lastPushed?.workouts ?? []
        var counts: [String: Int] = [:]
        for (outcome, count) in engine.ingestCounts { counts[outcome.rawValue] = count }
        return PhoneStatus(
            daemon: "phoned", instance: link.instance, uptimeSeconds: Int(Date().timeIntervalSince(startedAt)),
            listenPort: Int(linkPort), activation: link.activated ? "activated" : "notActivated",
            reachable: link.reachable, linked: link.linked, watchInstance: link.peer,
            watchAppForeground: link.watchAppForeground, contextGenerationSent: link.contextGenerationSent ?? 0,
            contextGenerationAcknowledged: link.contextGenerationAcknowledged ?? 0,
            splits: engine.splits.count, activeRuns: engine.index.activeIDs.count,
            recentRuns: selection.filter { !$0.isActive }.count, runsInHistory: engine.index.count,
            tombstones: engine.tombstones.count, pendingDeletes: engine.pendingDeletes.count,
            skippedFiles: skippedFiles.map(\.description), lastPushAt: engine.lastPushAt?.iso8601,
            editingWorkoutID: engine.locks.editingWorkoutID?.rawValue, editingSplitID: engine.locks.editingSplitID?.rawValue,
            ingest: counts, outboxDepth: link.outboxDepth, launchesSent: launchesSent, launchesDropped: launchesDropped,
            liveFramesSent: live.framesSent, liveFramesReceived: live.framesReceived)
    }

    private func done() -> AdminOutcome { .output(text: "ok", json: "{\"ok\":true}") }

    private func liveOutcome(_ refusals: [LiveRefusal]) -> AdminOutcome {
        if let refusal = refusals.first { return .refused(refusal.description) }
        let shown = live.show(now: .current)
        return .output(text: shown.text, json: shown.json)
    }

    private func documentID(_ command: ParsedCommand, _ name: String) throws -> DocumentID {
        let text = try command.string(name)
        guard let id = DocumentID(text) else { throw UsageError("\(name) must be a UUID, got \(text.debugDescription)") }
        return id
    }

    /// EXERCISE and SET positionals are 1-based in the CLI.
    private func position(_ command: ParsedCommand, in run: WorkoutDocument) throws -> (Int, Int) {
        let logIndex = try exerciseIndex(command, in: run)
        let set = try command.integer("set")
        guard (1...run.logs[logIndex].sets.count).contains(set) else {
            throw UsageError("exercise \(logIndex + 1) has \(run.logs[logIndex].sets.count) sets; no set \(set)")
        }
        return (logIndex, set - 1)
    }

    private func exerciseIndex(_ command: ParsedCommand, in run: WorkoutDocument) throws -> Int {
        let exercise = try command.integer("exercise")
        guard (1...run.logs.count).contains(exercise) else {
            throw UsageError("run \(run.id) has \(run.logs.count) exercises; no exercise \(exercise)")
        }
        return exercise - 1
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

func lines(_ lines: [String], empty: String) -> String {
    lines.isEmpty ? empty : lines.joined(separator: "\n")
}

func encode(_ value: some Encodable) -> String {
    String(decoding: DocumentCoder.encodeCompact(value), as: UTF8.self)
}

/// `phonectl status --json`; field names documented in docs/CLI.md.
struct PhoneStatus: Codable {
    var daemon: String
    var instance: String
    var uptimeSeconds: Int
    var listenPort: Int
    var activation: String
    var reachable: Bool
    var linked: Bool
    var watchInstance: String?
    var watchAppForeground: Bool
    var contextGenerationSent: UInt64
    var contextGenerationAcknowledged: UInt64
    var splits: Int
    var activeRuns: Int
    var recentRuns: Int
    var runsInHistory: Int
    var tombstones: Int
    var pendingDeletes: Int
    var skippedFiles: [String]
    var lastPushAt: String?
    var editingWorkoutID: String?
    var editingSplitID: String?
    var ingest: [String: Int]
    var outboxDepth: Int
    var launchesSent: Int
    var launchesDropped: Int
    /// Live frames this side put on the wire, by kind (`progress`, `ended`); auto-advances send none.
    var liveFramesSent: [String: Int]
    var liveFramesReceived: Int

    var text: String {
        var lines = [
            "phoned \(instance) up \(uptimeSeconds) s, link port \(listenPort)",
            "activation: \(activation); watch: \(linked ? "linked" : "not linked")\(watchInstance.map { " (\($0))" } ?? ""), reachable: \(reachable ? "yes" : "no"), app \(watchAppForeground ? "foreground" : "background")",
            "context generation sent \(contextGenerationSent), acknowledged \(contextGenerationAcknowledged); last push \(lastPushAt ?? "never")",
            "documents: \(splits) splits, \(activeRuns) active, \(recentRuns) recent, \(runsInHistory) runs in history, \(tombstones) tombstones",
            "locks: workout \(editingWorkoutID ?? "-"), split \(editingSplitID ?? "-")",
            "ingest: " + (ingest.isEmpty ? "none" : ingest.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")),
            "launches: \(launchesSent) sent, \(launchesDropped) dropped; outbox \(outboxDepth)",
        ]
        lines.append("skipped files: \(skippedFiles.count)")
        lines += skippedFiles.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }
}
