import WorkoutModel

/// The phone's persistence orchestrator (seed 000's `SyncEngine`), as a pure engine.
///
/// It holds the phone's cache of the document directory — every split, a `RunIndex` summary of every
/// run, the documents of the runs a push can carry, every tombstone — and decides: what to write
/// when a person operates, whether a workout update from the watch is accepted (the intake gates),
/// how external changes flow in, and when the state push goes out.
///
/// The shell MUST: feed every document of the initial scan with `documentScanned`, then
/// `gatherFinished` (nothing is pushed before); perform actions in order, each write atomically
/// before the next; feed `tombstoneWritten` once a `writeTombstone` has landed (until then the ID
/// is a pending delete); send `pushContext` over the context channel (forced pushes bump the
/// generation even when the payload is unchanged); feed `linkActivated`, `reachabilityRestored`
/// and `requestSyncReceived` from the link; before an operation on a run for which
/// `needsDocument(_:)` is true, load its file and feed it with `runsLoaded`; carry out `loadRuns` by
/// feeding `runsLoaded` (the push waits for it); feed `pushQueued` with the link's generation once a
/// push is handed to the link, `pushFailed` when the link refused it, `contextAcknowledged` from the
/// link, and `tick` at `nextDeadline` (a retry, a run leaving the recent window, or a vanished run's
/// `removalGrace` ending); and wrap a burst of input (the queued transfers one read delivers) in
/// `batchBegan` … `batchEnded`, so the burst costs one push.
package struct SyncEngine: Sendable {
    /// What the shell must do, in order.
    package enum Action: Equatable, Sendable {
        case writeSplit(SplitDocument)
        case removeSplitFile(DocumentID)
        case writeWorkout(WorkoutDocument)
        /// Remove the live file of a run (it lives under the year/month of `startedAt`).
        case removeWorkoutFile(DocumentID, startedAt: Timestamp)
        case writeTombstone(Tombstone)
        /// Load these runs' files (under the year/month of each start) and feed them with `runsLoaded`:
        /// the push needs them and they were evicted from the working set.
        case loadRuns([DocumentID: Timestamp])
        /// Send the state push; `force` re-sends an unchanged state under a new generation.
        case pushContext(ApplicationContext, force: Bool)
        /// Best-effort HealthKit-style launch of the watch app for this run.
        case launchWatchApp(runID: DocumentID)
        /// Persist the phone's settings (its UserDefaults) in the state directory.
        case persistSettings(Settings)
        /// Persist the phone epoch: the document directory's epoch file (the authority, fed back to
        /// `init` as `epoch`), then the state directory's `epoch.json` (fed back as `stateEpoch`).
        case persistEpoch(Timestamp)
        /// A split file breaks the phone's rules (`SplitDocument.ruleProblem`) and the phone holds no
        /// good copy to put back: it is left as it is, not pushed, and reported as skipped.
        case refuseSplitFile(DocumentID, reason: String)
        case log(SyncDiagnostic)
    }

    /// A document found by the scan, an external change or an on-demand load.
    package enum ScannedDocument: Equatable, Sendable {
        case split(SplitDocument)
        case workout(WorkoutDocument)
        case tombstone(Tombstone)
    }

    /// A change to the directory made by someone else (another device's sync, a person).
    package enum ExternalChange: Equatable, Sendable {
        case documentChanged(ScannedDocument)
        /// A live workout file vanished without a stub: dropped from the cache after `removalGrace`
        /// (never a delete) unless a file of the run appears by then — and ignored when the file was
        /// in another month's folder than the run's start now names (the old file of a run whose
        /// start moved: the run lives on in its new folder).
        case workoutRemoved(DocumentID, year: Int, month: Int)
        case splitRemoved(DocumentID)
        /// A split's file was rewritten with something that cannot be read (not JSON, a target out of
        /// range): the phone's copy, when it has one, goes back over it.
        case splitUnreadable(DocumentID, reason: String)
    }

    /// How long a run whose file vanished without a stub stays (in the cache and the push) before it
    /// is dropped. Another device's sync may move a run to its new start month by removing the old
    /// file first and writing the new one once it has fetched it, seconds later on a slow network;
    /// dropping the run at once would push it as absent, and the watch would prune it and discard
    /// its running session. A file of the run appearing within the grace makes the removal a move.
    /// A minute covers such a sync with room to spare; a file truly lost costs only that minute on
    /// the watch (a removal is never a delete, so nothing else waits on it).
    package static let removalGrace: Duration = .seconds(60)

    /// Facts fed into the engine.
    package enum Event: Equatable, Sendable {
        case documentScanned(ScannedDocument, now: Timestamp)
        /// The run index file's table, its changed folders retired: the runs of the month folders
        /// unchanged since it was recorded, known by their summary only. Comes before any document.
        case runTableScanned(RunTable, now: Timestamp)
        /// The run index file phoned just wrote, read back: the recorded runs from now on, so what
        /// the first start decoded leaves memory (`RunIndex.rebase`).
        case runTableWritten(RunTable)
        case gatherFinished(now: Timestamp)
        case externalChange(ExternalChange, now: Timestamp)
        case tombstoneWritten(DocumentID, now: Timestamp)
        case linkActivated(now: Timestamp)
        case reachabilityRestored(now: Timestamp)
        case requestSyncReceived(now: Timestamp)
        /// Runs loaded from disk on demand (`loadRuns`, or before an operation); `unreadable` ones
        /// (file gone or unusable) are dropped from the index like a vanished file.
        case runsLoaded([WorkoutDocument], unreadable: [DocumentID], now: Timestamp)
        /// The link took the last push as context generation `generation`.
        case pushQueued(generation: UInt64)
        /// The link refused the last push (too large, say): it was not sent and is retried.
        case pushFailed(reason: String, now: Timestamp)
        /// The watch acknowledged context generation `generation`.
        case contextAcknowledged(generation: UInt64, now: Timestamp)
        /// Time passed: `nextDeadline` was reached.
        case tick(now: Timestamp)
        /// A burst of input begins (queued transfers a drain delivers together): pushes wait for
        /// `batchEnded`, so the burst costs one push, not one per transfer (the context is
        /// latest-wins: the pushes left out are ones the watch would only have replaced), and the
        /// writes of userInfo ingests wait too, so a run updated many times is written once.
        case batchBegan
        /// The burst is over: the writes it held back go first, then the one push (forced if any
        /// one was). The shell acknowledges the batch's transfers only after these writes.
        case batchEnded(now: Timestamp)
    }

    /// How a watch update arrived: a message is answered at once, a userInfo transfer acknowledged.
    package enum IngestChannel: String, Sendable, CustomStringConvertible {
        case message
        case userInfo

        /// The case's name, as the logs and the journal spell it (interpolating a plain enum goes
        /// through reflection: more than half of the ingest line's cost on every edit).
        package var description: String { rawValue }
    }

    /// How `ingestFromWatch` decided; a message-delivered update is answered with it.
    package enum IngestOutcome: String, Equatable, Sendable, Codable, CaseIterable {
        /// The watch's copy changed the phone's (merged register by register): written, cached, echoed.
        case merged
        /// Merging changed nothing (an echo, a duplicate, or an older copy — then re-pushed).
        case unchanged
        /// The run has a tombstone: no write; re-pushed so the watch drops it.
        case vetoedTombstoned
        /// The run's delete is in flight (stub not yet on disk): same as a tombstone.
        case vetoedPendingDelete
        /// Made against another phone epoch (before a reset, or against a newer state than this one,
        /// restored from a backup): no write; re-pushed so the watch follows this state.
        case vetoedEpoch
        /// Not a copy of the phone's run (its skeleton differs): no write; re-pushed.
        case refused
    }

    package var splits: [DocumentID: SplitDocument] = [:]
    package var index = RunIndex()
    /// Documents of the runs a push can carry (active, and completed within the recent window when
    /// seen); older runs are only summarised in `index` so memory does not grow with history.
    package var documents: [DocumentID: WorkoutDocument] = [:]
    package var tombstones: [DocumentID: Tombstone] = [:]
    /// Deletes decided whose stub has not landed on disk yet (the pending-delete veto).
    package var pendingDeletes: [DocumentID: Tombstone] = [:]
    package var settings: Settings
    /// Whether settings were ever set by a person (a default-only state is never pushed).
    package var settingsCustomized: Bool
    package var locks = EditLocks()
    package var isGathered = false
    package var isLinkActivated = false
    package var lastPushed: ApplicationContext?
    /// The splits the last push left out to fit the context (`ApplicationContext.build`).
    package var splitsHeldBack = 0
    package var lastPushAt: Timestamp?
    /// Why the last push could not go, until one goes; it is retried at `retryAt`.
    package var pushFailure: String?
    var retryAt: Timestamp?
    /// Whether the push that failed was forced: its retry is too, or an identical push that was never
    /// sent would be skipped as already sent.
    var retryForced = false
    /// Whether the last push emitted was forced (`retryForced` if it fails).
    var lastPushForced = false
    /// What was recorded as sent before the push that then failed (restored on failure).
    var beforeLastPush: (context: ApplicationContext?, at: Timestamp?)
    /// A push waiting for `loadRuns`.
    var pendingPush: (force: Bool, reason: String)?
    /// Whether a batch is open (`batchBegan`): pushes wait for `batchEnded`.
    package private(set) var isBatching = false
    /// The push a batch held back, and how many pushes it stands for.
    var batchedPush: (force: Bool, reason: String, count: Int)?
    /// Runs a batch's userInfo ingests wrote, newest copy each, in the order first written: emitted
    /// as `writeWorkout` at `batchEnded`, or before anything else the engine emits meanwhile.
    var deferredWrites: [DocumentID: WorkoutDocument] = [:]
    var deferredOrder: [DocumentID] = []
    /// The `merged` lines of those ingests: logged after the writes, so a merged line always means
    /// the document is on disk (a kill before the batch's end leaves neither).
    var deferredLogs: [SyncDiagnostic] = []
    /// Runs the watch may hold as active (active in the last push it acknowledged or in a push since):
    /// once completed they ride every push until the watch has seen them completed, so its session
    /// ends with finish-and-save, never as a discard. The shell seeds it at start-up from the last
    /// context the link holds.
    package var watchMayHoldActive: Set<DocumentID> = []
    /// The active runs of recent pushes by link generation (the newest last; nil: not yet queued).
    var pushesAwaitingAck: [(generation: UInt64?, active: Set<DocumentID>)] = []
    /// The phone epoch (docs/PROTOCOL.md, "Phone epochs"): when this state began. Every push names it;
    /// a watch update made against another one is never written.
    package private(set) var epoch: Timestamp?
    /// The last epoch this phone started, as its state directory kept it (`init`).
    let stateEpoch: Timestamp?
    package var ingestCounts: [IngestOutcome: Int] = [:]
    package let policy: PushPolicy
    /// Stamps split and tombstone times (`updatedAt`, `deletedAt`).
    var stamper = EditStamper()
    /// Stamps every edit of a run. The shell restores its persisted high-water mark before the scan
    /// and persists `clock.last` whenever it moves, so a restart never stamps below an earlier edit.
    package var clock = HybridLogicalClock(origin: .phone)
    /// Each pushable run's compact encoding, with the copy it was made from, and the last frames
    /// (`push`, `encoded(_:)`).
    var contextEncoder = ContextEncoder()
    /// Runs an on-demand load found older than the index, with the version read (`runsLoaded`).
    var staleLoads: [DocumentID: Stamp] = [:]
    /// Another writer's newer copies of runs the phone only summarises, waiting for their file's
    /// load to be merged with it (`adoptedCopy`, `runsLoaded`).
    var pendingExternalCopies: [DocumentID: WorkoutDocument] = [:]
    /// The phone's copies of the runs it dropped from the working set last, at most
    /// `evictedCopiesKept`, oldest first. Another writer may have put an older copy in a run's file
    /// just before the drop, and the watcher reports it only after: a load that finds the file older
    /// than the index merges it with this copy rather than take it as all there is of the run
    /// (simulator seed 462142). A process that dies forgets them, as it forgets its memory.
    package var evictedCopies: [WorkoutDocument] = []
    static let evictedCopiesKept = 32
    /// Runs whose file vanished, by when they are dropped (`removalGrace`) unless a file of theirs
    /// appears first. They stay in the cache, and in pushes, until then.
    var heldRemovals: [DocumentID: Timestamp] = [:]
    /// Live files found next to their own tombstone during the scan; removed once the scan is done.
    var orphanedLiveFiles: [(DocumentID, Timestamp)] = []
    /// The same for split files (stubs are scanned first, so this is how a tombstoned split is met).
    var orphanedSplitFiles: [DocumentID] = []

    /// `settings` come from the state directory (nil: never set, defaults apply), `epoch` from the
    /// document directory's epoch file (nil: none there; a new epoch is started at the end of the
    /// gather), `stateEpoch` from the state directory's `epoch.json`: the last epoch this phone
    /// started, which a new one always outranks (a wiped directory's new epoch must win on the watch
    /// even after the clock stepped back), and the epoch of documents without an epoch file (written
    /// by a version that kept it only there): taken, and written with them.
    package init(
        settings: Settings?, policy: PushPolicy = .standard, epoch: Timestamp? = nil, stateEpoch: Timestamp? = nil
    ) {
        self.epoch = epoch
        self.stateEpoch = stateEpoch
        self.settings = settings ?? Settings()
        settingsCustomized = settings != nil
        self.policy = policy
    }

    /// Nothing a person made or deleted: a new epoch at the gather. Only the data stores count, as in
    /// seed 002's guard: settings that survived a wiped document directory do not make its emptiness
    /// data, and the edits the watch made against the old data must not be written into it.
    package var isPristine: Bool {
        #if SIMULATION_MUTATION_PRISTINE
            // (`scripts/simulate --mutations`: settings count as data, so a wiped directory keeps its epoch.)
            splits.isEmpty && index.count == 0 && tombstones.isEmpty && pendingDeletes.isEmpty && !settingsCustomized
        #else
            splits.isEmpty && index.count == 0 && tombstones.isEmpty && pendingDeletes.isEmpty
        #endif
    }

    /// Pristine with default settings too: never pushed (seed 002: a pristine state pushed from a fresh
    /// phone would empty the watch for nothing). Settings a person set do go, under the state's epoch:
    /// a watch of an older epoch then follows this phone wholesale, as it does any reset phone.
    package var isUntouched: Bool { isPristine && !settingsCustomized }

    /// Whether an operation on `runID` needs its document loaded from disk first.
    package func needsDocument(_ runID: DocumentID) -> Bool {
        index[runID] != nil && documents[runID] == nil && deferredWrites[runID] == nil
    }

    /// The phone's copy of a run, if it is in the working set (or written in the open batch).
    package func run(_ id: DocumentID) -> WorkoutDocument? { documents[id] ?? deferredWrites[id] }

    /// Handles one event; returns the complete, ordered action list.
    package mutating func handle(_ event: Event) -> [Action] {
        // Writes a batch deferred go before anything else, so file actions keep their order.
        var actions = event == .batchBegan ? [] : takeDeferredWrites()
        switch event {
        case .documentScanned(let document, let now):
            scanned(document, now: now, into: &actions)
        case .runTableScanned(let table, _):
            recorded(table)
        case .runTableWritten(let table):
            index.rebase(onto: table)
        case .gatherFinished(let now):
            isGathered = true
            // In (start, ID) order, however the scan came upon them (a recorded run's tombstone finds
            // it before its folder would have been read).
            for (id, startedAt) in orphanedLiveFiles.sorted(by: { ($0.1, $0.0) < ($1.1, $1.0) }) {
                actions.append(.removeWorkoutFile(id, startedAt: startedAt))
                actions.append(.log(.orphanedLiveFileRemoved(run: id)))
            }
            orphanedLiveFiles = []
            for id in orphanedSplitFiles {
                actions.append(.removeSplitFile(id))
                actions.append(.log(.orphanedSplitFileRemoved(split: id)))
            }
            orphanedSplitFiles = []
            // The epoch lives with the data it guards. Documents without an epoch file were written by
            // a version that kept it in the state directory: theirs, moved. A directory with nothing
            // in it (wiped, or new) starts a new epoch, whatever the state directory kept: edits the
            // watch made against the old one must not be written here. Later than the old one even if
            // the clock stepped back.
            if epoch == nil, !isPristine, let stateEpoch {
                epoch = stateEpoch
                actions.append(.persistEpoch(stateEpoch))
                actions.append(.log(.epochMovedToDocuments(stateEpoch)))
            } else if epoch == nil || isPristine {
                let old = [epoch, stateEpoch].compactMap { $0 }.max()
                let started = old.map { max(now, $0.advanced(by: .microseconds(1))) } ?? now
                epoch = started
                actions.append(.persistEpoch(started))
                actions.append(.log(.epochStarted(started)))
            } else if let epoch, stateEpoch.map({ $0 < epoch }) ?? true {
                // The state directory lost its copy (a reinstall): written again, so a later wipe of
                // the documents still starts an epoch past this one (simulator seed 19303).
                actions.append(.persistEpoch(epoch))
            }
            actions.append(
                .log(.gatherFinished(splits: splits.count, runs: index.count, tombstones: tombstones.count)))
            // Active runs are always in the working set (operations that end them all rely on it);
            // those known only by summary are loaded now, by the push when it goes.
            if !isLinkActivated {
                var unloaded: [DocumentID: Timestamp] = [:]
                for id in index.activeIDs where documents[id] == nil { unloaded[id] = index[id]?.startedAt }
                if !unloaded.isEmpty { actions.append(.loadRuns(unloaded)) }
            }
            push(now: now, force: false, reason: "initial gather", into: &actions)
        case .externalChange(let change, let now):
            externalChange(change, now: now, into: &actions)
        case .tombstoneWritten(let id, _):
            if let stub = pendingDeletes.removeValue(forKey: id) { tombstones[id] = stub }
        case .linkActivated(let now):
            isLinkActivated = true
            push(now: now, force: false, reason: "activation", into: &actions)
        case .reachabilityRestored(let now):
            push(now: now, force: false, reason: "reachability restored", into: &actions)
        case .requestSyncReceived(let now):
            push(now: now, force: true, reason: "watch requestSync", into: &actions)
        case .runsLoaded(let runs, let unreadable, let now):
            runsLoaded(runs, unreadable: unreadable, now: now, into: &actions)
        case .pushQueued(let generation):
            if let last = pushesAwaitingAck.indices.last, pushesAwaitingAck[last].generation == nil {
                pushesAwaitingAck[last].generation = generation
            }
        case .pushFailed(let reason, let now):
            lastPushed = beforeLastPush.context
            lastPushAt = beforeLastPush.at
            pushFailure = reason
            retryAt = now.advanced(by: Self.pushRetryInterval)
            retryForced = lastPushForced
            if let last = pushesAwaitingAck.last, last.generation == nil { pushesAwaitingAck.removeLast() }
            actions.append(.log(.pushNotSent(reason: reason, retryIn: Self.pushRetryInterval)))
        case .contextAcknowledged(let generation, let now):
            contextAcknowledged(generation, now: now, into: &actions)
        case .tick(let now):
            let retrying = retryAt.map { $0 <= now } ?? false
            // The retry is this push (or the batch's or the load's it waits for; a failure sets a new
            // deadline): a deadline left at or before now would fire again at once, forever.
            if retrying { retryAt = nil }
            let dropped = dropExpiredRemovals(now: now, into: &actions)
            let reason = retrying ? "retry" : dropped ? "external removal" : "recent window moved"
            push(now: now, force: retrying && retryForced, reason: reason, into: &actions)
        case .batchBegan:
            isBatching = true
        case .batchEnded(let now):
            isBatching = false
            if let held = batchedPush {
                batchedPush = nil
                let reason = held.count > 1 ? "\(held.reason), batch of \(held.count)" : held.reason
                push(now: now, force: held.force, reason: reason, into: &actions)
            }
        }
        return actions
    }

    /// The batch's deferred writes as actions, in order; none are left deferred. An old run among
    /// them stays in the working set until the next push evicts it, so an operation the shell did
    /// not load it for (it was in the batch) still finds it.
    mutating func takeDeferredWrites() -> [Action] {
        guard !deferredOrder.isEmpty else { return [] }
        defer {
            deferredWrites = [:]
            deferredOrder = []
            deferredLogs = []
        }
        let writes = deferredOrder.compactMap { id -> Action? in
            guard let run = deferredWrites[id] else { return nil }
            documents[id] = run
            return .writeWorkout(run)
        }
        return writes + deferredLogs.map(Action.log)
    }

    // MARK: Cache

    /// Puts a run in the index, and in the working set when a push can carry it.
    mutating func cache(_ run: WorkoutDocument, now: Timestamp) {
        heldRemovals[run.id] = nil
        index.upsert(RunIndex.RunSummary(run))
        documents[run.id] = run
        if !isPushable(run, now: now) { evict(run.id) }
    }

    /// Drops a run from the working set (its summary stays), keeping its copy among `evictedCopies`.
    mutating func evict(_ id: DocumentID) {
        guard let run = documents.removeValue(forKey: id) else { return }
        evictedCopies.removeAll { $0.id == id }
        evictedCopies.append(run)
        if evictedCopies.count > Self.evictedCopiesKept { evictedCopies.removeFirst() }
    }

    mutating func forget(run id: DocumentID) {
        evictedCopies.removeAll { $0.id == id }
        pendingExternalCopies[id] = nil
        staleLoads[id] = nil
        index.remove(id)
        documents[id] = nil
        heldRemovals[id] = nil
    }

    /// Drops the runs whose file vanished and stayed away for `removalGrace`; whether any was dropped.
    private mutating func dropExpiredRemovals(now: Timestamp, into actions: inout [Action]) -> Bool {
        let expired = heldRemovals.filter { $0.value <= now }.keys.sorted()
        for id in expired {
            forget(run: id)
            actions.append(.log(.vanishedRunDropped(id)))
        }
        return !expired.isEmpty
    }

    private func isPushable(_ run: WorkoutDocument, now: Timestamp) -> Bool {
        guard let endedAt = run.endedAt, !run.isActive else { return true }
        return endedAt >= now.advanced(by: .zero - policy.recentWindow) || watchMayHoldActive.contains(run.id)
    }

    /// Takes another writer's copy (`merged` with the phone's), writes it and pushes.
    private mutating func adoptExternal(
        _ copy: WorkoutDocument, merged: WorkoutDocument, now: Timestamp, into actions: inout [Action]
    ) {
        clock.observe(merged)
        actions.append(.writeWorkout(merged))
        cache(merged, now: now)
        actions.append(.log(merged == copy ? .externalRun(copy.id) : .externalRunMerged(copy.id)))
        if pendingPush == nil { push(now: now, force: false, reason: "external change", into: &actions) }
    }

    private mutating func runsLoaded(
        _ runs: [WorkoutDocument], unreadable: [DocumentID], now: Timestamp, into actions: inout [Action]
    ) {
        var tookOlderCopy = false
        for run in runs {
            guard let known = index[run.id], documents[run.id] == nil, deferredWrites[run.id] == nil else { continue }
            // Only a copy at least as new as the index's: a late load (read before a write that came
            // first here) never rolls a run back; the push asks again. A file that reads the same older
            // copy twice is truly older (another writer's): it is all there is of the run, and is taken,
            // or the push would ask for it again forever.
            let evicted = evictedCopies.firstIndex { $0.id == run.id }.map { evictedCopies.remove(at: $0) }
            if run.version < known.version, let evicted, evicted.version == known.version {
                // The phone's own copy from before the drop: the file's older one merges into it, and
                // the merge goes back over the file (another writer's copy, not all there is of it).
                let merged = (try? evicted.merged(with: run)) ?? evicted
                staleLoads[run.id] = nil
                clock.observe(merged)
                index.upsert(RunIndex.RunSummary(merged))
                documents[run.id] = merged
                actions.append(.writeWorkout(merged))
                actions.append(.log(.evictedCopyRestored(run.id, version: run.version, had: known.version)))
                tookOlderCopy = true
                continue
            }
            if run.version < known.version {
                guard staleLoads[run.id] == run.version else {
                    staleLoads[run.id] = run.version
                    continue
                }
                actions.append(.log(.staleRunAdopted(run.id, version: run.version, had: known.version)))
                tookOlderCopy = true
            }
            staleLoads[run.id] = nil
            clock.observe(run)
            stamper.observe(run.updatedAt)
            index.upsert(RunIndex.RunSummary(run))
            documents[run.id] = run
        }
        for id in unreadable where index[id] != nil {
            // A run whose file is gone but whose newer copy waited for it: the copy is what there is.
            if let copy = pendingExternalCopies.removeValue(forKey: id) {
                adoptExternal(copy, merged: copy, now: now, into: &actions)
                continue
            }
            forget(run: id)
            actions.append(.log(.unloadableRunDropped(id)))
        }
        for run in runs {
            guard let copy = pendingExternalCopies.removeValue(forKey: run.id) else { continue }
            let base = self.run(run.id) ?? run
            adoptExternal(copy, merged: (try? base.merged(with: copy)) ?? copy, now: now, into: &actions)
        }
        // A load for an operation pushes nothing (the operation that follows does); an older copy
        // taken changes the state, and pushes as any external change does (simulator seed 135715).
        guard let pending = pendingPush else {
            if tookOlderCopy { push(now: now, force: false, reason: "external change", into: &actions) }
            return
        }
        pendingPush = nil
        push(now: now, force: pending.force, reason: pending.reason, into: &actions)
    }
}
