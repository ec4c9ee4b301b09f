import WorkoutModel

extension WatchEngine {
    /// Cold launch (S9): re-apply the persisted context eagerly, reconcile the session against it (it
    /// may have ended while watchd was down), re-forward every local edit the phone has not confirmed
    /// (a message in flight when the process died is lost; the phone's merge makes a duplicate
    /// harmless), and ask for a sync if the phone is already reachable.
    mutating func started(lastContext: [UInt8]?, sender: String?, now: Timestamp) -> [Action] {
        var actions: [Action] = []
        var report = ContextApplyReport()
        if let lastContext {
            do throws(DocumentError) {
                report = try applyContext(lastContext, sender: sender, into: &actions)
                actions.append(.log(.contextApplied(report, restored: true)))
            } catch {
                actions.append(.log(.persistedContextSkipped(error)))
            }
        }
        let (saved, sessionSteps) = reconcileSession(source: .restoredContext, now: now)
        actions += fileActions(for: report, alsoWriting: saved.map(\.id))
        actions = epochRecordLast(actions)
        actions += forwardUndelivered()
        actions += sessionSteps
        if isReachable {
            actions.append(.log(.requestingSync))
            actions += send(.requestSync)
        }
        return actions
    }

    /// Re-forwards every undelivered edit the outbox does not already hold (a message in flight when
    /// the process died is lost, and a transfer refused before activation never reached the outbox;
    /// the phone's `updatedAt` gate makes a duplicate harmless). A queued copy holds the edit when its
    /// stamp is not older than the edit's: by stamp, not by `updatedAt`, since edits made while the
    /// watch's clock was behind share one time and differ only in the counter.
    mutating func forwardUndelivered() -> [Action] {
        var actions: [Action] = []
        for (id, mark) in cache.undeliveredEdits.sorted(by: { $0.key < $1.key }) {
            guard let run = cache.workouts[id], queuedTransfers[id].map({ $0 < mark }) ?? true else { continue }
            actions += forward(run)
        }
        return actions
    }

    /// Whether a newer phone replaced `sender`: its state restored from a backup never wins again.
    private func isRetired(_ sender: String) -> Bool {
        #if SIMULATION_MUTATION_RESTORED
            // (`scripts/simulate --mutations` builds without the rule: a restored backup wins again.)
            return false
        #else
            return retiredSenders.contains(sender)
        #endif
    }

    /// Decodes and applies context bytes and keeps the context as the phone's copy of its runs. The
    /// cache is untouched when they do not decode or belong to an older phone epoch than the newest
    /// applied (a phone state restored from an older backup never beats a newer one). A newer epoch
    /// (a reset phone) wins wholesale: the local edits, made against the old one, give way to it.
    ///
    /// A phone instance this watch has never seen (a wiped phone) wins even with an older epoch: its
    /// clock may be behind the old phone's. The instance it replaces is retired, and a retired
    /// instance (the old phone restored from a backup) never wins again.
    private mutating func applyContext(
        _ bytes: [UInt8], sender: String?, into actions: inout [Action]
    ) throws(DocumentError) -> ContextApplyReport {
        let context = try contextDecoder.decode(bytes)
        if let sender, isRetired(sender) {
            throw .malformed(
                type: "ApplicationContext", field: "epoch",
                reason:
                    "phone \(sender) was replaced by a newer phone; its epoch \(context.epoch.map(\.description) ?? "(none)") "
                    + "is older than \(phoneEpoch.map(\.description) ?? "(none)") in this watch's history "
                    + "(a phone state restored from an older backup?)")
        }
        var replacedSender = false
        if let known = phoneEpoch, context.epoch != known {
            let newer = context.epoch.map { $0 > known } ?? false
            let neverSeen =
                sender.map { $0 != phoneSender && phoneSender != nil && !isRetired($0) } ?? false
            guard let epoch = context.epoch, newer || neverSeen else {
                throw .malformed(
                    type: "ApplicationContext", field: "epoch",
                    reason: "phone epoch \(context.epoch.map(\.description) ?? "(none)") is older than \(known), "
                        + "the newest this watch has applied (a phone state restored from an older backup?)")
            }
            actions.append(
                .log(.epochReplaced(new: epoch, old: known, newer: newer, droppedEdits: cache.undeliveredEdits.count)))
            cache.dropUndeliveredEdits()
            queuedTransfers = [:]
            replacedSender = true
        }
        // Only a phone known to be another retires the one it replaces: a wiped document directory
        // is a new epoch of the same phone (simulator seed 779). The context re-applied at start-up
        // names the sender persisted with it: the watch may have gone down after a reset phone's
        // push replaced its cache but before this record landed (seed 8191); a context without
        // one (written before senders were kept) retires nothing.
        if replacedSender, let old = phoneSender, let sender, old != sender { retiredSenders.insert(old) }
        let senderChanged = sender != nil && sender != phoneSender
        if let epoch = context.epoch, epoch != phoneEpoch || senderChanged {
            phoneEpoch = epoch
            if let sender { phoneSender = sender }
            actions.append(
                .persistPhoneEpoch(
                    PhoneEpochRecord(
                        epoch, sender: phoneSender,
                        retiredSenders: retiredSenders.isEmpty ? nil : retiredSenders.sorted())))
        }
        let report = WatchCacheApplier.apply(context, to: &cache, delivered: deliveredVersions)
        deliveredVersions = deliveredVersions.filter { cache.hasUndeliveredEdit($0.key) }
        lastContext = context
        lastApplied = report
        queuedTransfers = queuedTransfers.filter { cache.undeliveredEdits[$0.key] != nil }
        return report
    }

    /// Applies a pushed context, writes what changed, then reconciles the session against it.
    mutating func contextReceived(_ bytes: [UInt8], sender: String? = nil, now: Timestamp) -> [Action] {
        let report: ContextApplyReport
        var epochSteps: [Action] = []
        do throws(DocumentError) {
            report = try applyContext(bytes, sender: sender, into: &epochSteps)
        } catch {
            lastSkipped = error
            return [.log(.contextSkipped(error))]
        }
        lastSkipped = nil
        receivedContextSinceStart = true
        let (saved, sessionSteps) = reconcileSession(source: .receivedContext, now: now)
        var actions: [Action] = epochSteps + [.log(.contextApplied(report, restored: false))]
        actions += fileActions(for: report, alsoWriting: saved.map(\.id))
        actions = epochRecordLast(actions)
        for run in saved { actions += forward(run) }
        actions += resendUncovered(report.keptLocal, except: Set(saved.map(\.id)))
        return actions + sessionSteps
    }

    /// The actions with the phone-epoch record moved after the cache's file writes: the record says
    /// which phone the cache files belong to, so it lands once they do. Written first, a crash before
    /// the old epoch's runs were pruned left them on disk under the new record, and the restarted
    /// watch forwarded them to the reset phone as edits of its own state (simulator seed 779).
    private func epochRecordLast(_ actions: [Action]) -> [Action] {
        let records = actions.filter { if case .persistPhoneEpoch = $0 { true } else { false } }
        return actions.filter { if case .persistPhoneEpoch = $0 { false } else { true } } + records
    }

    /// Runs a context left with an edit it does not cover and no message of it in flight: sent again,
    /// once per local version and pushed copy (a transfer of it may be queued still, or long
    /// delivered: the phone merges a copy it already has to the same). The phone took the edit
    /// earlier but holds other values under its stamps now (a file edited by hand while phoned was
    /// down, read back at its start as its own): without this the watch would wait for a context
    /// that covers its edit and none would come (simulator seeds 9604842, 9608820, 9625528). Another
    /// hand edit under the same stamps is another pushed copy, and the edit goes again (seed 164123);
    /// so does the same pushed copy once the phone has answered the re-send (`editDelivered`).
    private mutating func resendUncovered(_ ids: [DocumentID], except forwarded: Set<DocumentID>) -> [Action] {
        var actions: [Action] = []
        for id in ids where !forwarded.contains(id) && cache.undeliveredEdits[id] != nil {
            let pushed = lastContext?.workouts.first { $0.id == id }
            guard let run = cache.workouts[id],
                resentUncovered[id] != UncoveredResend(version: run.version, pushed: pushed)
            else { continue }
            let inFlight = messagesInFlight.values.contains {
                if case .workoutUpdate(let sent, _) = $0 { sent.id == id } else { false }
            }
            guard !inFlight else { continue }
            resentUncovered[id] = UncoveredResend(version: run.version, pushed: pushed)
            actions += forward(run)
        }
        return actions
    }

    /// An optimistic edit: applied to the cache first, forwarded whole and written; then the session
    /// is reconciled (S5: completing the run on the watch ends the session the same way). When the
    /// edit finishes the session, the metrics are recorded on the run before it is written and
    /// forwarded, so the phone gets one update carrying both.
    ///
    /// A message goes before the write: it acknowledges nothing (the edit's own reply still waits for
    /// the write), so the phone's write runs beside the watch's instead of after it. A watch that
    /// dies before its write lands has made an edit it never acknowledged, which the phone may hold:
    /// its next context brings it back. A queued transfer stays behind the write.
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
            let sends = forward(run)
            if case .sendMessage = sends.first {
                actions += sends + [.persistWorkout(run)]
            } else {
                actions += [.persistWorkout(run)] + sends
            }
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
            return [.log(.unknownMessageFailureIgnored(token))]
        }
        guard case .workoutUpdate(let run, let madeAgainst) = message else {
            return [.log(.requestSyncFailed(token, reason: reason))]
        }
        // Under the epoch the edit was made against: after a reset phone's push replaced it, the
        // edit belongs to the old phone, and the new one must veto it rather than write it.
        #if SIMULATION_MUTATION_RESET_EPOCH
            // (`scripts/simulate --mutations`: the fallback is labelled with today's epoch.)
            let epoch = phoneEpoch
        #else
            let epoch = madeAgainst
        #endif
        return [
            .log(.updateFellBackToTransfer(token, run: run.id, reason: reason)),
            transfer(run, madeAgainst: epoch),
        ]
    }

    /// The phone has this copy of the run. A run the last push left out is kept only while its edit
    /// may not have reached the phone (`WatchCacheApplier`): once the phone has the newest local edit,
    /// it is pruned as that push said (its session ends as a pruned run's does). A run the last push
    /// still carries remembers the delivery, for a later push that leaves it out.
    mutating func editDelivered(_ run: WorkoutDocument, madeAgainst epoch: Timestamp?, now: Timestamp) -> [Action] {
        guard epoch == phoneEpoch, let held = cache.undeliveredEdits[run.id] else { return [] }
        deliveredVersions[run.id] = max(deliveredVersions[run.id] ?? run.version, run.version)
        // The phone has the copy sent again: a later push that still leaves the edit out is a new
        // loss, not the same one (a version does not name content: an edit older than the phone's
        // newest stamp leaves the version as it was, and another device's older copy, read back
        // after a power loss, brings back the very copy answered before; simulator seed 85946).
        if let resent = resentUncovered[run.id], resent.version <= run.version { resentUncovered[run.id] = nil }
        guard held <= run.version, let lastContext, !lastContext.workouts.contains(where: { $0.id == run.id })
        else { return [] }
        deliveredVersions[run.id] = nil
        cache.clearUndeliveredEdit(run.id)
        cache.removeWorkout(run.id)
        queuedTransfers[run.id] = nil
        var actions: [Action] = [.log(.absentRunPruned(run: run.id)), .deleteWorkout(run.id)]
        let (saved, sessionSteps) = reconcileSession(source: .receivedContext, now: now)
        for changed in saved { actions += [.persistWorkout(changed)] + forward(changed) }
        return actions + sessionSteps
    }

    /// A cancelled transfer never reaches the phone from here: when it carried the run's newest local
    /// edit, the edit gives way to the phone's copy (the last context's; when none is known, the mark
    /// is dropped so the next push replaces it). A newer local edit of the run is left as it is.
    mutating func transferCancelled(_ message: WatchToPhoneMessage) -> [Action] {
        guard case .workoutUpdate(let cancelled, _) = message else { return [] }
        if queuedTransfers[cancelled.id] == cancelled.version { queuedTransfers[cancelled.id] = nil }
        guard cache.undeliveredEdits[cancelled.id] == cancelled.version else {
            return [.log(.cancelledTransferNotNewest(run: cancelled.id))]
        }
        cache.clearUndeliveredEdit(cancelled.id)
        guard let phoneCopy = lastContext?.workouts.first(where: { $0.id == cancelled.id }) else {
            return [.log(.cancelledEditDropped(run: cancelled.id))]
        }
        cache.storePushed(phoneCopy)
        return [
            .persistWorkout(phoneCopy),
            .log(.cancelledEditReverted(run: cancelled.id, to: phoneCopy.updatedAt)),
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
                    actions.append(.log(.sessionMetricsNotRecorded(run: runID)))
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
        send(.workoutUpdate(run, epoch: phoneEpoch))
    }

    /// Sends a message when reachable; a workout update falls back to `transferUserInfo` when not
    /// (requestSync is message-only: dropped when unreachable).
    mutating func send(_ message: WatchToPhoneMessage) -> [Action] {
        guard isReachable else {
            if case .workoutUpdate(let run, _) = message { return [transfer(run)] }
            return []
        }
        let token = nextToken
        nextToken = token.next
        messagesInFlight[token] = message
        return [.sendMessage(token, message)]
    }
}

extension WatchEngine {
    /// Hands the run to the durable outbox and remembers that it is there.
    mutating func transfer(_ run: WorkoutDocument) -> Action {
        transfer(run, madeAgainst: phoneEpoch)
    }

    /// Hands the run to the durable outbox labelled with the phone epoch it was edited against; it is
    /// remembered as queued only when that is the current one (an old epoch's edit is the phone's to veto).
    mutating func transfer(_ run: WorkoutDocument, madeAgainst epoch: Timestamp?) -> Action {
        if epoch == phoneEpoch { noteQueued(run) }
        return .transferUserInfo(.workoutUpdate(run, epoch: epoch))
    }

    mutating func noteQueued(_ run: WorkoutDocument) {
        queuedTransfers[run.id] = max(queuedTransfers[run.id] ?? run.version, run.version)
    }
}
