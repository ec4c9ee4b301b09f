import AdminCommands
import LinkProtocol
import LiveMirror
import WatchEngine
import WorkoutModel

extension WatchNode {
    /// Serves one watchctl command: its actions, then the reply (later, for `queue cancel`, whose
    /// result comes back from the link); a refusal is logged.
    mutating func admin(
        _ request: AdminRequestID, _ command: WatchCommand, facts: ShellFacts, now: Timestamp, reads: Reads,
        into out: inout Output
    ) throws(NeedsReads) {
        if command.writes, let refusal = facts.readOnlyRefusal {
            reply(request, "\(command)", .refused(refusal), into: &out)
            return
        }
        if !isAppRunning, command.needsRunningApp {
            reply(request, "\(command)", .refused(app.notRunning), into: &out)
            return
        }
        switch command {
        case .trace(let query):
            out.node(.replyTrace(request, query))
            return
        case .cancelTransfer(let sequence):
            // Answered when the link says how it went (`cancelEnded`).
            cancelling.wait(request, for: sequence)
            out.node(.link(.cancelTransfer(sequence: sequence)))
            return
        case .data(let data):
            out.node(dataMessages.serve(data, request: request, now: now))
            return
        case .waitSynced(let milliseconds):
            let undelivered = engine.cache.undeliveredEdits.count
            out.node(syncWaits.serve(request, milliseconds: milliseconds, undelivered: undelivered, now: now))
            return
        case .file(let file):
            out.node(try fileTransfers.serve(file, request: request, reads: reads))
            return
        case .export(let runID):
            guard engine.cache.workouts[runID] != nil else {
                reply(request, "export \(runID)", .refused("no run \(runID) on this watch"), into: &out)
                return
            }
            // The session's samples, as the watch would record them (WorkoutSamples), sent as a file.
            let metadata = WorkoutSamplesMetadata(runID: runID, samples: WorkoutSamples.count)
            let json = String(decoding: DocumentCoder.encodeCompact(metadata), as: UTF8.self)
            out.node(.link(.transferFile(.bytes(WorkoutSamples.series(for: runID)), metadata: json, request)))
            return
        default:
            break
        }
        let outcome = try AdminOutcome.serve(command) { command in
            try execute(command, facts: facts, now: now, reads: reads, into: &out)
        }
        reply(request, "\(command)", outcome, into: &out)
    }

    /// The reply to request N; a refusal is logged, naming the command (described only then: a
    /// command's reflected description cost more than serving most commands).
    mutating func reply(
        _ request: AdminRequestID, _ command: @autoclosure () -> String, _ outcome: AdminOutcome,
        into out: inout Output
    ) {
        if case .refused(let message) = outcome {
            out.log(.notice, "admin", "refused admin request", [("command", command()), ("reason", message)])
        }
        out.node(.reply(request, outcome.response))
    }

    private mutating func execute(
        _ command: WatchCommand, facts: ShellFacts, now: Timestamp, reads: Reads, into out: inout Output
    ) throws -> AdminOutcome {
        switch command {
        case .status:
            let status = status(facts)
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
            return .output(
                text: AdminOutcome.lines(splits.map { "\($0.id)  \($0.name)" }, empty: "no splits"),
                json: AdminOutcome.json(splits))
        case .show(let id):
            if let split = engine.cache.splits[id] {
                return .output(
                    text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self),
                    json: AdminOutcome.json(split))
            }
            guard let run = engine.cache.workouts[id] else { return .refused("no split or run \(id) on this watch") }
            return .output(
                text: String(decoding: DocumentCoder.encodeForDisk(run), as: UTF8.self), json: AdminOutcome.json(run))
        case .settings:
            let settings = engine.cache.settings
            return .output(
                text:
                    "rest \(settings.restSeconds) s, countdown \(settings.doneCountdownSeconds) s, unit \(settings.weightUnit.rawValue)",
                json: AdminOutcome.json(settings))
        case .set(.complete(let runID, let exercise, let set, let reps, let weight)):
            let run = try cachedRun(runID)
            let (logIndex, setIndex) = try run.refusingSetPosition(exercise: exercise, set: set)
            let log = run.logs[logIndex]
            return edit(
                .completeSet(
                    logID: log.id, setIndex: setIndex, reps: reps ?? log.targetReps, weight: weight ?? log.targetWeight),
                run: run.id, now: now, into: &out)
        case .set(.undo(let runID, let exercise, let set)):
            let run = try cachedRun(runID)
            let (logIndex, setIndex) = try run.refusingSetPosition(exercise: exercise, set: set)
            return edit(.undoSet(logID: run.logs[logIndex].id, setIndex: setIndex), run: run.id, now: now, into: &out)
        case .set(.skip(let runID, let exercise)):
            let run = try cachedRun(runID)
            return edit(
                .skipLog(logID: run.logs[try run.refusingLogIndex(exercise: exercise)].id), run: run.id, now: now,
                into: &out)
        case .set(.reopen(let runID, let exercise)):
            let run = try cachedRun(runID)
            return edit(
                .reopenLog(logID: run.logs[try run.refusingLogIndex(exercise: exercise)].id), run: run.id, now: now,
                into: &out)
        case .finish(let runID):
            return edit(.finishRun, run: runID, now: now, into: &out)
        case .pause(let runID):
            return edit(.pause, run: runID, now: now, into: &out)
        case .resume(let runID):
            return edit(.resume, run: runID, now: now, into: &out)
        case .showSession:
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .startSession(let runID):
            if let refusal = engine.coordinator.startRefusal(runID: runID, origin: .watch, cache: engine.cache) {
                return .refused("session not started for run \(runID): \(refusal)")
            }
            translate(engine.handle(.sessionStartRequested(runID: runID, now: editClock(now))), now: now, into: &out)
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .endSession(let failure):
            translate(engine.handle(.sessionEndedBySystem(failure: failure, now: editClock(now))), now: now, into: &out)
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .clearSession:
            translate(engine.handle(.sessionCleared), now: now, into: &out)
            return .output(text: describe(engine.session), json: AdminOutcome.json(SessionRecord(engine.session)))
        case .listQueue:
            guard let transfers = reads.outstandingTransfers else { throw NeedsReads(outstandingTransfers: true) }
            let text = transfers.map { transfer in
                "\(transfer.sequence)  \(transfer.bytes) bytes  \(oneDecimal(transfer.ageSeconds)) s old"
                    + (transfer.sent ? "  (sent, awaiting ack)" : "")
            }
            return .output(
                text: AdminOutcome.lines(text, empty: "no outstanding transfers"), json: AdminOutcome.json(transfers))
        case .cancelTransfer, .trace, .data, .file, .export, .waitSynced:
            // Served with the link's or the journal's answer (see `admin`).
            return .refused("\(command) is answered by the shell")
        case .sync:
            guard facts.link.reachable else { return .refused("notReachable: the phone is not reachable") }
            out.node(
                .link(.sendMessage(WatchToPhoneMessage.requestSync.encoded(), wantsReply: true, run: nil, .requestSync))
            )
            return .output(text: "requested", json: AdminOutcome.json(AdminReply.Requested()))
        case .metrics:
            return status(facts).metrics(facts, roundTrip: roundTrip)
        case .live(let command):
            // The run a flow opens or advances: one in the cache, and not one the phone is editing.
            var driven: Result<WorkoutDocument?, any Error>?
            if let id = command.drivenRunID {
                driven = Result {
                    guard let run = engine.cache.workouts[id] else { return nil }
                    if engine.cache.isParked(run) { throw AdminRefusal(EditRefusal.editingOnPhone(id).description) }
                    return run
                }
            }
            let step = try live.execute(
                command, run: { _ in try driven?.get() }, settings: engine.cache.settings, now: now)
            switch step {
            case .finished(let outcome, let actions):
                out.node(actions)
                return outcome
            case .completeSet(let run, let logIndex, let setIndex, let reps, let weight, let refusals, let actions):
                out.node(actions)
                let written = edit(
                    .completeSet(logID: run.logs[logIndex].id, setIndex: setIndex, reps: reps, weight: weight),
                    run: run.id, now: now, into: &out)
                if case .refused = written { return written }
                return live.outcome(refusals: refusals, now: now)
            }
        case .pair(let paired):
            var state = facts.link.watchState
            state.isPaired = paired
            return setWatchState(state, into: &out)
        case .installApp(let installed):
            var state = facts.link.watchState
            state.isWatchAppInstalled = installed
            return setWatchState(state, into: &out)
        case .enableComplication(let enabled):
            var state = facts.link.watchState
            state.isComplicationEnabled = enabled
            return setWatchState(state, into: &out)
        case .app(let change):
            let (actions, outcome) = app.serve(change)
            out.node(actions)
            return outcome
        case .wrist(let up):
            out.node(app.serve(up ? .foreground : .background).actions)
            let json = AdminOutcome.json(AdminReply.Wrist(foreground: up))
            return .output(text: "watch app \(up ? "foreground" : "background")", json: json)
        }
    }

    /// Hands the watch's new pairing, app or complication state to the link (kept durably, reported
    /// to the phone) and answers with it.
    private func setWatchState(_ state: WatchState, into out: inout Output) -> AdminOutcome {
        out.log(.notice, "watchd", "watch state", [("state", state.description)])
        out.node(.link(.setWatchState(state)))
        return .output(text: state.description, json: AdminOutcome.json(state))
    }

    private func cachedRun(_ id: DocumentID) throws -> WorkoutDocument {
        guard let run = engine.cache.workouts[id] else { throw AdminRefusal("no run \(id) on this watch") }
        return run
    }

    /// Feeds an edit to the engine; a refusal (unknown run, editing on phone, model refusal) leaves the
    /// cache unchanged and becomes exit code 1.
    private mutating func edit(_ edit: WatchEdit, run: DocumentID, now: Timestamp, into out: inout Output)
        -> AdminOutcome
    {
        forwardedRun = nil
        let refusal = translate(
            engine.handle(.editRequested(edit, runID: run, now: editClock(now))), now: now, into: &out)
        if let refusal { return .refused(refusal.description) }
        guard let updated = engine.cache.workouts[run] else { return .done }
        // The same JSON as `AdminOutcome.json(updated)`: the forwarded copy's encoding when it is this run.
        let json = String(decoding: takeForwardedEncoding(of: updated), as: UTF8.self)
        return .output(text: "ok (\(updated.status.rawValue))", json: json)
    }

    /// `status`, from the node's state and the shell's facts.
    func status(_ facts: ShellFacts) -> WatchStatus {
        let link = facts.link
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
        var status = WatchStatus(
            daemon: "watchd", instance: link.instance, uptimeSeconds: facts.uptimeSeconds,
            activation: link.activated && isAppRunning ? "activated" : "notActivated", reachable: link.reachable,
            linked: link.linked, phoneInstance: link.peer,
            appState: app.state,
            contextGenerationApplied: link.contextGenerationReceived ?? 0, contextSender: link.contextSender,
            workouts: engine.cache.workouts.count, activeRuns: engine.cache.activeRuns.count,
            splits: engine.cache.splits.count, undeliveredEdits: engine.cache.undeliveredEdits.count,
            editingWorkoutID: engine.cache.editLocks.editingWorkoutID?.rawValue,
            editingSplitID: engine.cache.editLocks.editingSplitID?.rawValue, outboxDepth: link.outboxDepth,
            session: session, sessionRun: sessionRun, sessionOutcome: sessionOutcome,
            appliedContexts: appliedContexts, skippedContexts: skippedContexts,
            lastSkippedContext: engine.lastSkipped?.description, launchesReceived: launchesReceived,
            skippedCacheFiles: skippedCacheFiles, liveFramesSent: live.framesSent,
            liveFramesReceived: live.framesReceived,
            watchState: link.watchState, hasContentPending: link.hasContentPending, complication: complication,
            complicationsReceived: complicationsReceived, heartbeatRoundTrip: link.heartbeatRoundTripP99Milliseconds)
        status.readOnlyDirectories = facts.readOnlyDirectories
        return status
    }
}

/// `x.y`, rounded to one decimal (what `String(format: "%.1f")` prints, without Foundation).
func oneDecimal(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}

/// One line for a session state.
package func describe(_ state: SessionState) -> String {
    switch state {
    case .idle:
        return "idle"
    case .running(let session):
        return "running run=\(session.runID) since=\(session.startedAt) origin=\(session.origin.rawValue)"
    case .ended(let session):
        let outcome: String
        switch session.outcome {
        case .finishedAndSaved(let metrics):
            outcome =
                "finishedAndSaved activeSeconds=\(format(metrics.activeSeconds.rounded(.down))) sets=\(metrics.setsCompleted) volume=\(metrics.totalVolume)"
        case .discarded:
            outcome = "discarded"
        case .systemFailure(let reason):
            outcome = "systemFailure reason=\(reason)"
        }
        return "ended run=\(session.runID) at=\(session.endedAt) \(outcome)"
    }
}
