import AdminCommands
import LinkProtocol
import WorkoutModel

/// `phonectl status --json`; field names documented in docs/CLI.md.
package struct PhoneStatus: Codable, Sendable {
    package var daemon: String
    package var instance: String
    package var uptimeSeconds: Int
    package var listenPort: Int
    package var activation: String
    package var reachable: Bool
    package var linked: Bool
    @ExplicitNull package var watchInstance: String?
    package var watchAppForeground: Bool
    package var contextGenerationSent: UInt64
    package var contextGenerationAcknowledged: UInt64
    package var splits: Int
    package var activeRuns: Int
    package var recentRuns: Int
    package var runsInHistory: Int
    package var tombstones: Int
    package var pendingDeletes: Int
    package var skippedFiles: [String]
    @ExplicitNull package var lastPushAt: String?
    /// Why the last push could not go (it is retried until one goes); nil when the last one went.
    @ExplicitNull package var pushError: String?
    /// Runs the last push left out to fit the context limit (see docs/PROTOCOL.md).
    package var heldBackRuns: Int
    /// Splits the last push left out to fit (all splits together get half the context).
    package var heldBackSplits: Int
    @ExplicitNull package var editingWorkoutID: String?
    @ExplicitNull package var editingSplitID: String?
    package var ingest: [String: Int]
    package var outboxDepth: Int
    package var launchesSent: Int
    package var launchesDropped: Int
    /// Live frames this side put on the wire, by kind (`progress`, `ended`); auto-advances send none.
    package var liveFramesSent: [String: Int]
    package var liveFramesReceived: Int
    /// The link's heartbeat round trip, 99th percentile of the newest 128, in ms (nil before the first).
    @ExplicitNull package var heartbeatRoundTripP99Milliseconds: Double?
    /// `isPaired`, `isWatchAppInstalled`, `isComplicationEnabled` as the watch last reported them.
    package var paired: Bool
    package var watchAppInstalled: Bool
    package var complicationEnabled: Bool
    /// Received items handed to the app and not yet processed.
    package var hasContentPending: Bool
    /// The directories found on a read-only file system: commands that write are refused.
    package var readOnlyDirectories: [String] = []
    /// The phone app's own state (`phonectl app …`): `foreground`, `background`, `notRunning`.
    package var phoneAppState = "foreground"

    /// Every field, as the daemon fills them.
    package init(
        daemon: String, instance: String, uptimeSeconds: Int, listenPort: Int, activation: String, reachable: Bool,
        linked: Bool, watchInstance: String?, watchAppForeground: Bool, contextGenerationSent: UInt64,
        contextGenerationAcknowledged: UInt64, splits: Int, activeRuns: Int, recentRuns: Int, runsInHistory: Int,
        tombstones: Int, pendingDeletes: Int, skippedFiles: [String], lastPushAt: String?, pushError: String?,
        heldBackRuns: Int, heldBackSplits: Int, editingWorkoutID: String?,
        editingSplitID: String?, ingest: [String: Int], outboxDepth: Int, launchesSent: Int, launchesDropped: Int,
        liveFramesSent: [String: Int], liveFramesReceived: Int, watchState: WatchState, hasContentPending: Bool,
        heartbeatRoundTrip: Double?
    ) {
        paired = watchState.isPaired
        watchAppInstalled = watchState.isWatchAppInstalled
        heartbeatRoundTripP99Milliseconds = heartbeatRoundTrip
        complicationEnabled = watchState.isComplicationEnabled
        self.hasContentPending = hasContentPending
        self.daemon = daemon
        self.instance = instance
        self.uptimeSeconds = uptimeSeconds
        self.listenPort = listenPort
        self.activation = activation
        self.reachable = reachable
        self.linked = linked
        self.watchInstance = watchInstance
        self.watchAppForeground = watchAppForeground
        self.contextGenerationSent = contextGenerationSent
        self.contextGenerationAcknowledged = contextGenerationAcknowledged
        self.splits = splits
        self.activeRuns = activeRuns
        self.recentRuns = recentRuns
        self.runsInHistory = runsInHistory
        self.tombstones = tombstones
        self.pendingDeletes = pendingDeletes
        self.skippedFiles = skippedFiles
        self.lastPushAt = lastPushAt
        self.pushError = pushError
        self.heldBackRuns = heldBackRuns
        self.heldBackSplits = heldBackSplits
        self.editingWorkoutID = editingWorkoutID
        self.editingSplitID = editingSplitID
        self.ingest = ingest
        self.outboxDepth = outboxDepth
        self.launchesSent = launchesSent
        self.launchesDropped = launchesDropped
        self.liveFramesSent = liveFramesSent
        self.liveFramesReceived = liveFramesReceived
    }

    /// The human form `status` prints.
    package var text: String {
        var push = "last push \(lastPushAt ?? "never")"
        if heldBackRuns > 0 { push += ", \(heldBackRuns) runs held back to fit" }
        if heldBackSplits > 0 { push += ", \(heldBackSplits) splits held back to fit (the watch does not show them)" }
        if let pushError { push += "; push NOT SENT: \(pushError) (retrying)" }
        var lines = [
            "phoned \(instance) up \(uptimeSeconds) s, link port \(listenPort); phone app \(phoneAppState)",
            "activation: \(activation); watch: \(linked ? "linked" : "not linked")\(watchInstance.map { " (\($0))" } ?? ""), reachable: \(reachable ? "yes" : "no"), app \(watchAppForeground ? "foreground" : "background")",
            "watch: \(paired ? "paired" : "NOT PAIRED"), app \(watchAppInstalled ? "installed" : "NOT INSTALLED"), complication \(complicationEnabled ? "enabled" : "disabled")\(hasContentPending ? "; content pending" : "")",
            "context generation sent \(contextGenerationSent), acknowledged \(contextGenerationAcknowledged); \(push)",
            "documents: \(splits) splits, \(activeRuns) active, \(recentRuns) recent, \(runsInHistory) runs in history, \(tombstones) tombstones",
            "locks: workout \(editingWorkoutID ?? "-"), split \(editingSplitID ?? "-")",
            "ingest: "
                + (ingest.isEmpty
                    ? "none"
                    : ingest.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")),
            "launches: \(launchesSent) sent, \(launchesDropped) dropped; outbox \(outboxDepth)",
        ]
        lines.append(liveFramesLine(sent: liveFramesSent, received: liveFramesReceived))
        lines.append("skipped files: \(skippedFiles.count)")
        lines += skippedFiles.map { "  \($0)" }
        lines += readOnlyDirectories.map { "READ-ONLY: \($0) (changes are refused until it is writable)" }
        return lines.joined(separator: "\n")
    }
}

/// `watchctl status --json`; field names documented in docs/CLI.md.
package struct WatchStatus: Codable, Sendable {
    package var daemon: String
    package var instance: String
    package var uptimeSeconds: Int
    package var activation: String
    package var reachable: Bool
    package var linked: Bool
    @ExplicitNull package var phoneInstance: String?
    package var appState: String
    package var contextGenerationApplied: UInt64
    @ExplicitNull package var contextSender: String?
    package var workouts: Int
    package var activeRuns: Int
    package var splits: Int
    package var undeliveredEdits: Int
    @ExplicitNull package var editingWorkoutID: String?
    @ExplicitNull package var editingSplitID: String?
    package var outboxDepth: Int
    package var session: String
    @ExplicitNull package var sessionRun: String?
    @ExplicitNull package var sessionOutcome: String?
    package var appliedContexts: Int
    package var skippedContexts: Int
    @ExplicitNull package var lastSkippedContext: String?
    package var launchesReceived: Int
    package var skippedCacheFiles: [String]
    /// The directories found on a read-only file system: commands that write are refused.
    package var readOnlyDirectories: [String] = []
    /// Live frames this side put on the wire, by kind (`progress`, `ended`); auto-advances send none.
    package var liveFramesSent: [String: Int]
    package var liveFramesReceived: Int
    /// The link's heartbeat round trip, 99th percentile of the newest 128, in ms (nil before the first).
    @ExplicitNull package var heartbeatRoundTripP99Milliseconds: Double?
    /// This watch's pairing, app and complication state (what it reports to the phone).
    package var paired: Bool
    package var appInstalled: Bool
    package var complicationEnabled: Bool
    /// Received items handed to the app and not yet processed.
    package var hasContentPending: Bool
    /// What the complication shows: the newest-sent complication that arrived, and when it was sent.
    @ExplicitNull package var complication: String?
    @ExplicitNull package var complicationSentAt: String?
    /// Complications that arrived since watchd started (newest-sent wins; older ones only count).
    package var complicationsReceived: Int

    /// Every field, as the daemon fills them.
    package init(
        daemon: String, instance: String, uptimeSeconds: Int, activation: String, reachable: Bool, linked: Bool,
        phoneInstance: String?, appState: String, contextGenerationApplied: UInt64, contextSender: String?,
        workouts: Int, activeRuns: Int, splits: Int, undeliveredEdits: Int, editingWorkoutID: String?,
        editingSplitID: String?, outboxDepth: Int, session: String, sessionRun: String?, sessionOutcome: String?,
        appliedContexts: Int, skippedContexts: Int, lastSkippedContext: String?, launchesReceived: Int,
        skippedCacheFiles: [String], liveFramesSent: [String: Int], liveFramesReceived: Int, watchState: WatchState,
        hasContentPending: Bool, complication: ComplicationPayload?, complicationsReceived: Int,
        heartbeatRoundTrip: Double?
    ) {
        self.complication = complication?.text
        complicationSentAt = complication?.sentAt.iso8601
        self.complicationsReceived = complicationsReceived
        paired = watchState.isPaired
        appInstalled = watchState.isWatchAppInstalled
        heartbeatRoundTripP99Milliseconds = heartbeatRoundTrip
        complicationEnabled = watchState.isComplicationEnabled
        self.hasContentPending = hasContentPending
        self.daemon = daemon
        self.instance = instance
        self.uptimeSeconds = uptimeSeconds
        self.activation = activation
        self.reachable = reachable
        self.linked = linked
        self.phoneInstance = phoneInstance
        self.appState = appState
        self.contextGenerationApplied = contextGenerationApplied
        self.contextSender = contextSender
        self.workouts = workouts
        self.activeRuns = activeRuns
        self.splits = splits
        self.undeliveredEdits = undeliveredEdits
        self.editingWorkoutID = editingWorkoutID
        self.editingSplitID = editingSplitID
        self.outboxDepth = outboxDepth
        self.session = session
        self.sessionRun = sessionRun
        self.sessionOutcome = sessionOutcome
        self.appliedContexts = appliedContexts
        self.skippedContexts = skippedContexts
        self.lastSkippedContext = lastSkippedContext
        self.launchesReceived = launchesReceived
        self.skippedCacheFiles = skippedCacheFiles
        self.liveFramesSent = liveFramesSent
        self.liveFramesReceived = liveFramesReceived
    }

    /// The human form `status` prints.
    package var text: String {
        [
            "watchd \(instance) up \(uptimeSeconds) s",
            "activation: \(activation); phone: \(linked ? "linked" : "not linked")\(phoneInstance.map { " (\($0))" } ?? ""), reachable: \(reachable ? "yes" : "no"); app \(appState)",
            "context generation applied \(contextGenerationApplied)\(contextSender.map { " from \($0)" } ?? ""); applied \(appliedContexts), skipped \(skippedContexts)",
            "cache: \(workouts) runs (\(activeRuns) active), \(splits) splits, \(undeliveredEdits) undelivered edits",
            "locks: workout \(editingWorkoutID ?? "-"), split \(editingSplitID ?? "-")",
            "outbox: \(outboxDepth) transfers",
            "session: \(session)\(sessionRun.map { " run \($0)" } ?? "")\(sessionOutcome.map { " (\($0))" } ?? "")",
            "watch: \(paired ? "paired" : "NOT PAIRED"), app \(appInstalled ? "installed" : "NOT INSTALLED"), complication \(complicationEnabled ? "enabled" : "disabled")\(hasContentPending ? "; content pending" : "")",
            "complication: "
                + (complication.map { "\($0.debugDescription) (sent \(complicationSentAt ?? "?"))" } ?? "none"),
            liveFramesLine(sent: liveFramesSent, received: liveFramesReceived),
            "skipped cache files: \(skippedCacheFiles.count)",
        ]
        .joined(separator: "\n") + skippedCacheFiles.map { "\n  \($0)" }.joined()
            + readOnlyDirectories.map { "\nREAD-ONLY: \($0) (changes are refused until it is writable)" }.joined()
    }
}

/// `live frames: 3 sent (progress 2, ended 1), 5 received`, as both statuses print it.
private func liveFramesLine(sent: [String: Int], received: Int) -> String {
    let kinds = sent.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    return "live frames: \(sent.values.reduce(0, +)) sent\(kinds.isEmpty ? "" : " (\(kinds))"), \(received) received"
}
