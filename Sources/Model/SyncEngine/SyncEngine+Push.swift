import WorkoutModel

extension SyncEngine {
    /// How long a push the link refused waits before it is tried again.
    package static let pushRetryInterval: Duration = .seconds(5)
    /// How many pushes awaiting the watch's acknowledgement are told apart; older ones are merged.
    static let trackedPushes = 16
    /// How many completed runs at most ride only because the watch may still hold them active.
    static let maximumAwaited = 64

    /// Builds the state push and emits it unless it equals the last one sent (or `force`).
    ///
    /// Runs the push needs but the working set evicted are loaded first (`loadRuns`; the push goes
    /// when `runsLoaded` arrives), so the recent window never shrinks. A push is recorded as sent
    /// when emitted; `pushFailed` undoes that, so an identical push is never suppressed after one
    /// that did not go.
    mutating func push(now: Timestamp, force: Bool, reason: String, into actions: inout [Action]) {
        guard isGathered, isLinkActivated else { return }
        if isBatching {
            // The first reason names the batch's push; later ones only count.
            batchedPush = (
                force: force || batchedPush?.force == true, reason: batchedPush?.reason ?? reason,
                count: (batchedPush?.count ?? 0) + 1
            )
            return
        }
        guard !isUntouched else {
            actions.append(.log(.pushSkippedPristine(reason: reason)))
            return
        }
        let awaited = awaitedRuns()
        // Runs deleted, or past the bound, no longer ride for the watch's sake.
        watchMayHoldActive = watchMayHoldActive.filter { index.activeIDs.contains($0) || awaited.contains($0) }
        let wanted = index.pushSelection(now: now, policy: policy) + awaited
        var missing: [DocumentID: Timestamp] = [:]
        for id in wanted where documents[id] == nil {
            missing[id] = index[id]?.startedAt
        }
        guard missing.isEmpty else {
            pendingPush = (force: force || pendingPush?.force == true, reason: reason)
            actions.append(.loadRuns(missing))
            return
        }
        // Each run is encoded once per version to size the push, not once per push: with hundreds of
        // active runs held back, encoding them all for every push blocked the loop for seconds. The
        // same encodings make up the push's bytes (`encoded(_:)`).
        var encoder = contextEncoder
        contextEncoder = ContextEncoder()
        let working = documents
        encoder.keepRuns { working[$0] != nil }
        let context = ApplicationContext.build(
            splits: splits.values, index: index, run: { working[$0] }, settings: settings, editLocks: locks,
            now: now, policy: policy, awaited: awaitedRuns(), epoch: epoch,
            encodedSize: { encoder.bytes(of: $0).count }, encodedFrameSize: { encoder.bytes(ofFrame: $0).count })
        contextEncoder = encoder
        evictAgedRuns(keeping: Set(wanted))
        if !force, context == lastPushed { return }
        beforeLastPush = (lastPushed, lastPushAt)
        lastPushForced = force
        lastPushed = context
        lastPushAt = now
        splitsHeldBack = splits.count - context.splits.count
        pushFailure = nil
        retryAt = nil
        recordAwaitingAck(context)
        actions.append(.pushContext(context, force: force))
        actions.append(
            .log(
                .pushed(
                    reason: reason, forced: force, splits: context.splits.count, runs: context.workouts.count,
                    heldBack: context.heldBackRunIDs?.count, maximumBytes: policy.maximumBytes,
                    splitsHeldBack: splitsHeldBack)))
    }

    /// The bytes of a push `push` built: `DocumentCoder.encodeCompact(context)`, from the encodings it
    /// made of its runs and frame.
    package mutating func encoded(_ context: ApplicationContext) -> [UInt8] {
        contextEncoder.encode(context)
    }

    /// The push as it would go now (what the watch should hold); `load` supplies runs the working
    /// set does not hold.
    package func context(now: Timestamp, load: (DocumentID) -> WorkoutDocument?) -> ApplicationContext {
        let documents = self.documents
        let encoder = contextEncoder
        return ApplicationContext.build(
            splits: splits.values, index: index, run: { documents[$0] ?? load($0) }, settings: settings,
            editLocks: locks, now: now, policy: policy, awaited: awaitedRuns(), epoch: epoch,
            encodedSize: { encoder.size(of: $0) }, encodedFrameSize: { encoder.size(ofFrame: $0) })
    }

    /// The completed runs that ride because the watch may still hold them active, at most
    /// `maximumAwaited` (those that ended last).
    private func awaitedRuns() -> Set<DocumentID> {
        let awaited = watchMayHoldActive.filter { index[$0].map { !$0.status.isActive } ?? false }
        guard awaited.count > Self.maximumAwaited else { return awaited }
        let ended = { (id: DocumentID) in index[id]?.endedAt ?? Timestamp(microsecondsSinceEpoch: 0) }
        return Set(awaited.sorted { (ended($0), $0) > (ended($1), $1) }.prefix(Self.maximumAwaited))
    }

    /// When the shell must feed `tick`: a push to retry, a vanished run's grace ending, or the first
    /// carried run to leave the window. While a failed push waits for its retry, the retry is the
    /// window's deadline too: the last push sent is the one before the failure, whose window deadline
    /// may be past, and asking for it would tick, fail and ask again at the same instant forever.
    package var nextDeadline: Timestamp? {
        var deadline = [retryAt, heldRemovals.values.min()].compactMap { $0 }.min()
        if retryAt == nil, let lastPushed, let lastPushAt {
            for run in lastPushed.workouts where !run.isActive && !watchMayHoldActive.contains(run.id) {
                guard let endedAt = run.endedAt else { continue }
                // One microsecond past the window: the window is inclusive at its edge.
                let leaves = endedAt.advanced(by: policy.recentWindow).advanced(by: .microseconds(1))
                // Already outside the window when pushed: it rode for another reason, not a deadline.
                guard leaves > lastPushAt else { continue }
                if deadline.map({ leaves < $0 }) ?? true { deadline = leaves }
            }
        }
        return deadline
    }

    /// Drops documents of completed runs that no push wants any more (the index keeps their summary).
    private mutating func evictAgedRuns(keeping wanted: Set<DocumentID>) {
        guard documents.count > wanted.count + index.activeIDs.count else { return }
        for (id, run) in documents where !run.isActive && !wanted.contains(id) {
            evict(id)
        }
    }

    /// Notes the push's active runs (carried or held back): the watch may hold them once it applies it.
    private mutating func recordAwaitingAck(_ context: ApplicationContext) {
        let active = Set(context.workouts.filter(\.isActive).map(\.id))
            .union((context.heldBackRunIDs ?? []).filter { index.activeIDs.contains($0) })
        watchMayHoldActive.formUnion(active)
        pushesAwaitingAck.append((generation: nil, active: active))
        if pushesAwaitingAck.count > Self.trackedPushes {
            // Merged into the next: an acknowledgement of the older one is then not recognised, which
            // only keeps completed runs riding a little longer.
            let oldest = pushesAwaitingAck.removeFirst()
            pushesAwaitingAck[0].active.formUnion(oldest.active)
        }
    }

    /// The watch applied generation `generation`: it may now hold as active only what that push and
    /// later ones carried as active; completed runs it has seen as completed stop riding.
    mutating func contextAcknowledged(_ generation: UInt64, now: Timestamp, into actions: inout [Action]) {
        guard let position = pushesAwaitingAck.firstIndex(where: { $0.generation == generation }) else { return }
        // Earlier pushes are superseded: the watch holds this one, or later ones still on the way.
        pushesAwaitingAck.removeFirst(position)
        watchMayHoldActive = pushesAwaitingAck.reduce(into: Set<DocumentID>()) { $0.formUnion($1.active) }
        push(now: now, force: false, reason: "watch acknowledged", into: &actions)
    }
}
