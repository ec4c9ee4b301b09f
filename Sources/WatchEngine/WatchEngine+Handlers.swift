import WorkoutModel

extension WatchEngine {
    /// Cold launch (S9): re-apply the persisted context eagerly, reconcile the session against it (it
    /// may have ended while watchd was down), re-forward every local edit the phone has not confirmed
    /// (a message in flight when the process died is lost; the phone's merge makes a duplicate
    /// harmless), and ask for a sync if the phone is already reachable.
    mutating func started(lastContext: [UInt8]?, now: Timestamp) -> [Action] {
        var actions: [Action] = []
        var report = ContextApplyReport()
        if let lastContext {
            switch WatchCacheApplier.apply(contextBytes: lastContext, to: &cache) {
            case .applied(let applied):
                report = applied
                lastApplied = applied
                actions.append(.log("persisted \(applied.summary)"))
            case .skipped(let error):
                actions.append(.log("persisted context skipped: \(error)"))
            }
        }
        let (saved, sessionSteps) = reconcileSession(source: .restoredContext, now: now)
        actions += fileActions(for: report, alsoWriting: saved.map(\.id))
        for id in cache.undeliveredEdits.keys.sorted() {
            guard let run = cache.workouts[id] else { continue }
            actions += forward(run)
        }
        actions += sessionSteps
        if isReachable {
            actions.append(.log("requesting a sync: no context received since start"))
            actions += send(.requestSync)
        }
        return actions
    }

    /// Applies a pushed context, writes what changed, then reconciles the session against it.
    mutating func contextReceived(_ bytes: [UInt8], now: Timestamp) -> [Action] {
        let report: ContextApplyReport
        switch WatchCacheApplier.apply(contextBytes: bytes, to: &cache) {
        case .applied(let applied):
            report = applied
        case .skipped(let error):
            lastSkipped = error
            return [.log("context skipped (no upsert, no prune): \(error)")]
        }
        lastApplied = report
        lastSkipped = nil
        receivedContextSinceStart = true
        let (saved, sessionSteps) = reconcileSession(source: .receivedContext, now: now)
        var actions: [Action] = [.log(report.summary)]
        actions += fileActions(for: report, alsoWriting: saved.map(\.id))
        for run in saved { actions += forward(run) }
        return actions + sessionSteps
    }

    /// An optimistic edit: applied to the cache first, written, forwarded whole; then the session is
    /// reconciled (S5: completing the run on the watch ends the session the same way). When the edit
    /// finishes the session, the metrics are recorded on the run before it is written and forwarded,
    /// so the phone gets one update carrying both.
    mutating func editRequested(_ edit: WatchEdit, runID: DocumentID, now: Timestamp) -> [Action] {
        do throws(EditRefusal) {
            _ = try editor.apply(edit, toRun: runID, in: &cache, at: now)
        } catch {
            return [.editRefused(runID: runID, error)]
        }
        let (saved, sessionSteps) = reconcileSession(source: .localEdit, now: now)
        var actions: [Action] = []
        for id in Set([runID] + saved.map(\.id)).sorted() {
            guard let run = cache.workouts[id] else { continue }
            actions.append(.persistWorkout(run))
            actions += forward(run)
        }
        return actions + sessionSteps
    }

    mutating func startSession(runID: DocumentID, origin: SessionOrigin, now: Timestamp) -> [Action] {
        sessionActions(coordinator.handle(.startRequested(runID: runID, origin: origin, cache: cache, now: now)))
    }

    /// A failed workout update falls back to the durable transfer of the same document; a failed
    /// requestSync is best effort and is not retried (reachability regained asks again).
    mutating func messageSendFailed(_ token: MessageToken, reason: String) -> [Action] {
        guard let message = messagesInFlight.removeValue(forKey: token) else {
            return [.log("message \(token) failure ignored: no such message in flight")]
        }
        guard case .workoutUpdate(let run) = message else {
            return [.log("requestSync \(token) failed (\(reason)); not retried")]
        }
        return [
            .log("workout update \(token) for run \(run.id) failed (\(reason)); falling back to transferUserInfo"),
            .transferUserInfo(message),
        ]
    }

    /// Maps the coordinator's actions to the shell's; `saveMetrics` records the metrics on the run
    /// (stamped by the editor's clock) and returns the run, which the caller writes and forwards.
    mutating func performSessionActions(
        _ coordinatorActions: [WorkoutSessionCoordinator.Action]
    ) -> (saved: [WorkoutDocument], actions: [Action]) {
        var saved: [WorkoutDocument] = []
        var actions: [Action] = []
        for action in coordinatorActions {
            switch action {
            case .saveMetrics(let runID, let metrics):
                if let run = editor.recordMetrics(metrics, onRun: runID, in: &cache, at: metrics.recordedAt) {
                    saved.append(run)
                } else {
                    actions.append(.log("session metrics for run \(runID) not recorded: the run is gone"))
                }
            case .persistSession(let record):
                actions.append(.persistSession(record))
            case .log(let line):
                actions.append(.log(line))
            }
        }
        return (saved, actions)
    }

    /// The coordinator's actions as the shell's, with any run that got metrics written and forwarded.
    mutating func sessionActions(_ coordinatorActions: [WorkoutSessionCoordinator.Action]) -> [Action] {
        let (saved, actions) = performSessionActions(coordinatorActions)
        return saved.flatMap { [.persistWorkout($0)] + forward($0) } + actions
    }

    /// Reconciles the session against the cache as it is now.
    mutating func reconcileSession(
        source: WorkoutSessionCoordinator.CacheChangeSource, now: Timestamp
    ) -> (saved: [WorkoutDocument], actions: [Action]) {
        performSessionActions(coordinator.handle(.cacheChanged(cache, source: source, now: now)))
    }

    /// File writes and deletions for an applied context, plus runs changed since (metrics recorded).
    func fileActions(for report: ContextApplyReport, alsoWriting extra: [DocumentID]) -> [Action] {
        var actions: [Action] = []
        for id in Set(report.upsertedWorkouts + extra).sorted() {
            if let run = cache.workouts[id] { actions.append(.persistWorkout(run)) }
        }
        actions += report.prunedWorkouts.map { .deleteWorkout($0) }
        for id in report.upsertedSplits {
            if let split = cache.splits[id] { actions.append(.persistSplit(split)) }
        }
        actions += report.prunedSplits.map { .deleteSplit($0) }
        return actions
    }

    /// Sends the whole run to the phone: `sendMessage` when reachable, else `transferUserInfo`.
    mutating func forward(_ run: WorkoutDocument) -> [Action] {
        send(.workoutUpdate(run))
    }

    /// Sends a message when reachable; a workout update falls back to `transferUserInfo` when not
    /// (requestSync is message-only: dropped when unreachable).
    mutating func send(_ message: WatchToPhoneMessage) -> [Action] {
        guard isReachable else {
            if case .workoutUpdate = message { return [.transferUserInfo(message)] }
            return []
        }
        let token = nextToken
        nextToken = token.next
        messagesInFlight[token] = message
        return [.sendMessage(token, message)]
    }
}
