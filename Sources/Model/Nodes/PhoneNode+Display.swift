import AdminCommands
import SyncEngine
import WorkoutModel

/// What the phone's admin replies print: a run's line and description, the settings, `status`.
extension PhoneNode {
    /// A run as `workouts` lists it: ID, status, split, sets done, start.
    static func line(_ run: WorkoutDocument) -> String {
        "\(run.id)  \(run.status.rawValue)  \(run.splitName)  sets \(run.logs.flatMap(\.sets).filter(\.isDone).count)/\(run.totalSetCount)  started \(run.startedAt)"
    }

    /// `status`, from the node's state and the shell's facts.
    func status(_ facts: ShellFacts, now: Timestamp) -> PhoneStatus {
        let link = facts.link
        var counts: [String: Int] = [:]
        for (outcome, count) in engine.ingestCounts { counts[outcome.rawValue] = count }
        var status = PhoneStatus(
            daemon: "phoned", instance: link.instance, uptimeSeconds: facts.uptimeSeconds,
            listenPort: facts.listenPort, activation: link.activated ? "activated" : "notActivated",
            reachable: link.reachable, linked: link.linked, watchInstance: link.peer,
            watchAppForeground: link.watchAppForeground, contextGenerationSent: link.contextGenerationSent ?? 0,
            contextGenerationAcknowledged: link.contextGenerationAcknowledged ?? 0,
            splits: engine.splits.count, activeRuns: engine.index.activeIDs.count,
            recentRuns: engine.index.pushSelection(now: now, policy: engine.policy).count
                - engine.index.activeIDs.count,
            runsInHistory: engine.index.count,
            tombstones: engine.tombstones.count, pendingDeletes: engine.pendingDeletes.count,
            skippedFiles: skippedFiles.map(\.description), lastPushAt: engine.lastPushAt?.iso8601,
            pushError: engine.pushFailure, heldBackRuns: engine.lastPushed?.heldBackRunIDs?.count ?? 0,
            heldBackSplits: engine.splitsHeldBack,
            editingWorkoutID: engine.locks.editingWorkoutID?.rawValue,
            editingSplitID: engine.locks.editingSplitID?.rawValue,
            ingest: counts, outboxDepth: link.outboxDepth, launchesSent: launchesSent, launchesDropped: launchesDropped,
            liveFramesSent: live.framesSent, liveFramesReceived: live.framesReceived, watchState: link.watchState,
            hasContentPending: link.hasContentPending, heartbeatRoundTrip: link.heartbeatRoundTripP99Milliseconds)
        status.readOnlyDirectories = facts.readOnlyDirectories
        status.phoneAppState = app.state
        if !app.isRunning { status.activation = "notActivated" }
        return status
    }

    func describe(_ run: WorkoutDocument) -> String {
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
            text +=
                "\nsession: \(format(metrics.activeSeconds.rounded(.down))) s active, \(metrics.setsCompleted) sets, volume \(format(metrics.totalVolume))"
        }
        return text
    }

    func describe(_ settings: Settings) -> String {
        "rest \(settings.restSeconds) s, countdown \(settings.doneCountdownSeconds) s, unit \(settings.weightUnit.rawValue)"
    }
}

/// A weight as people write it: whole numbers without a decimal point. Total: a value no `Int`
/// holds (a document's `1e300`) prints as Swift writes it, where `Int(value)` trapped phoned.
package func format(_ value: Double) -> String {
    if value == value.rounded(), let whole = Int(exactly: value) { return String(whole) }
    return String(value)
}
