import AdminCommands
import ArgumentParsing
import DaemonRuntime
import Foundation
import LinkProtocol
import LinkRuntime
import LiveMirror
import WatchEngine
import WorkoutModel

extension WatchDaemon {
    /// Serves one watchctl command (typed by watchctl; what needs watchd's state is checked here).
    func handleAdmin(_ command: WatchCommand) -> AdminResponse {
        AdminOutcome.serve(command, logger: logger, execute)
    }

    private func execute(_ command: WatchCommand) throws -> AdminOutcome {
        switch command {
        case .status:
            let status = self.status()
            return .output(text: status.text, json: AdminOutcome.json(status))
        case .workouts:
            let runs = engine.cache.workouts.values.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
            let text = runs.map { run in
                "\(run.id)  \(run.status.rawValue)  \(run.splitName)  sets \(run.logs.flatMap(\.sets).filter(\.isDone).count)/\(run.totalSetCount)"
                    + (engine.cache.isParked(run) ? "  (editing on phone)" : "")
            }
            return .output(text: AdminOutcome.lines(text, empty: "no runs"), json: AdminOutcome.json(runs))
        case .splits:
            let splits = engine.cache.splits.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            return .output(text: AdminOutcome.lines(splits.map { "\($0.id)  \($0.name)" }, empty: "no splits"), json: AdminOutcome.json(splits))
        case .show(let id):
            if let split = engine.cache.splits[id] {
                return .output(text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self), json: AdminOutcome.json(split))
            }
            guard let run = engine.cache.workouts[id] else { return .refused("no split or run \(id) on this watch") }
            return .output(text: String(decoding: DocumentCoder.encodeForDisk(run), as: UTF8.self), json: AdminOutcome.json(run))
        case .settings:
            let settings = engine.cache.settings
            return .output(
                text: "rest \(settings.restSeconds) s, countdown \(settings.doneCountdownSeconds) s, unit \(settings.weightUnit.rawValue)",
                json: AdminOutcome.json(settings))
        case .set(.complete(let runID, let exercise, let set, let reps, let weight)):
            let run = try cachedRun(runID)
            let (logIndex, setIndex) = try run.setPosition(exercise: exercise, set: set)
            let log = run.logs[logIndex]
            return edit(
                .completeSet(
                    logID: log.id, setIndex: setIndex, reps: reps ?? log.targetReps,
                    weight: weight ?? log.targetWeight),
                run: run.id)
        case .set(.undo(let runID, let exercise, let set)):
            let run = try cachedRun(runID)
            let (logIndex, setIndex) = try run.setPosition(exercise: exercise, set: set)
            return edit(.undoSet(logID: run.logs[logIndex].id, setIndex: setIndex), run: run.id)
        case .set(.skip(let runID, let exercise)):
            let run = try cachedRun(runID)
            return edit(.skipLog(logID: run.logs[try run.logIndex(exercise: exercise)].id), run: run.id)
        case .set(.reopen(let runID, let exercise)):
            let run = try cachedRun(runID)
            return edit(.reopenLog(logID: run.logs[try run.logIndex(exercise: exercise)].id), run: run.id)
        case .finish(let runID):
            return edit(.finishRun, run: runID)
        case .pause(let runID):
            return edit(.pause, run: runID)
        case .resume(let runID):
            return edit(.resume, run: runID)
        case .showSession:
            let record = SessionRecord(engine.session)
            return .output(text: describe(engine.session), json: AdminOutcome.json(record))
        case .startSession(let runID):
            if let refusal = engine.coordinator.startRefusal(runID: runID, origin: .watch, cache: engine.cache) {
                return .refused("session not started for run \(runID): \(refusal)")
            }
            perform(engine.handle(.sessionStartRequested(runID: runID, now: now)))
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .endSession(let failure):
            perform(engine.handle(.sessionEndedBySystem(failure: failure, now: now)))
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .clearSession:
            perform(engine.handle(.sessionCleared))
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .listQueue:
            let transfers = link.outstandingTransfers()
            let text = transfers.map { transfer in
                "\(transfer.sequence)  \(transfer.bytes) bytes  \(String(format: "%.1f", transfer.ageSeconds)) s old"
                    + (transfer.sent ? "  (sent, awaiting ack)" : "")
            }
            return .output(text: AdminOutcome.lines(text, empty: "no outstanding transfers"), json: AdminOutcome.json(transfers))
        case .cancelTransfer(let sequence):
            let payload = link.state.outbox.pending().first { $0.sequence == sequence }?.payload
            let wasSent = try link.cancelTransfer(sequence: sequence)
            if let payload, let message = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) {
                perform(engine.handle(.transferCancelled(message)))
            }
            let result =
                wasSent
                ? "cancelled \(sequence); it had been sent: if the phone received it, the phone keeps it "
                    + "(its dedup makes the cancel a no-op there)"
                : "cancelled \(sequence) before it was sent"
            return .output(
                text: result, json: AdminOutcome.json(AdminReply.Cancelled(cancelled: sequence, wasSent: wasSent)))
        case .sync:
            guard link.status().reachable else { return .refused("notReachable: the phone is not reachable") }
            link.sendMessage(WatchToPhoneMessage.requestSync.encoded(), wantsReply: true) { [logger] outcome in
                logger.info("requestSync answered", ["outcome": "\(outcome)"], component: "link")
            }
            return .output(text: "requested", json: AdminOutcome.json(AdminReply.Requested()))
        case .metrics:
            return status().metrics(events: link.journal?.counts ?? [:])
        case .trace(let query):
            return .trace(query, stateDirectory: configuration.stateDirectory)
        case .live(let command):
            return try live.execute(
                command,
                run: { id in
                    guard let run = self.engine.cache.workouts[id] else { return nil }
                    if self.engine.cache.isParked(run) { throw UsageError(EditRefusal.editingOnPhone(id).description) }
                    return run
                }, settings: engine.cache.settings
            ) { run, logIndex, setIndex, reps, weight in
                let written = self.edit(
                    .completeSet(logID: run.logs[logIndex].id, setIndex: setIndex, reps: reps, weight: weight), run: run.id)
                if case .refused = written { return written }
                return nil
            }
        case .wrist(let up):
            link.setAppForeground(up)
            let json = AdminOutcome.json(AdminReply.Wrist(foreground: up))
            return .output(text: "watch app \(up ? "foreground" : "background")", json: json)
        }
    }

    private func cachedRun(_ id: DocumentID) throws -> WorkoutDocument {
        guard let run = engine.cache.workouts[id] else { throw UsageError("no run \(id) on this watch") }
        return run
    }

    /// Feeds an edit to the engine; a refusal (unknown run, editing on phone, model refusal) leaves the
    /// cache unchanged and becomes exit code 1.
    func edit(_ edit: WatchEdit, run: DocumentID) -> AdminOutcome {
        lastRefusal = nil
        perform(engine.handle(.editRequested(edit, runID: run, now: now)))
        if let refusal = lastRefusal { return .refused(refusal.description) }
        guard let updated = engine.cache.workouts[run] else { return .done }
        return .output(text: "ok (\(updated.status.rawValue))", json: AdminOutcome.json(updated))
    }

    private func status() -> WatchStatus {
        let link = self.link.status()
        var session = "idle"
        var sessionRun: String?
        var sessionOutcome: String?
        switch engine.session {
        case .idle: break
        case .running(let running):
            session = "running"
            sessionRun = running.runID.rawValue
        case .ended(let ended):
            session = "ended"
            sessionRun = ended.runID.rawValue
            switch ended.outcome {
            case .finishedAndSaved: sessionOutcome = "finishedAndSaved"
            case .discarded: sessionOutcome = "discarded"
            case .systemFailure(let reason): sessionOutcome = "systemFailure: \(reason)"
            }
        }
        return WatchStatus(
            daemon: "watchd", instance: link.instance, uptimeSeconds: Int(Date().timeIntervalSince(startedAt)),
            activation: link.activated ? "activated" : "notActivated", reachable: link.reachable, linked: link.linked,
            phoneInstance: link.peer, appState: link.watchAppForeground ? "foreground" : "background",
            contextGenerationApplied: link.contextGenerationReceived ?? 0, contextSender: link.contextSender,
            workouts: engine.cache.workouts.count, activeRuns: engine.cache.activeRuns.count,
            splits: engine.cache.splits.count, undeliveredEdits: engine.cache.undeliveredEdits.count,
            editingWorkoutID: engine.cache.editLocks.editingWorkoutID?.rawValue,
            editingSplitID: engine.cache.editLocks.editingSplitID?.rawValue, outboxDepth: link.outboxDepth,
            session: session, sessionRun: sessionRun, sessionOutcome: sessionOutcome,
            appliedContexts: appliedContexts, skippedContexts: skippedContexts,
            lastSkippedContext: engine.lastSkipped?.description, launchesReceived: launchesReceived,
            skippedCacheFiles: skippedCacheFiles, liveFramesSent: live.framesSent, liveFramesReceived: live.framesReceived)
    }
}
