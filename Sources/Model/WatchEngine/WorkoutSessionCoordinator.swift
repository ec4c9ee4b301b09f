import WorkoutModel

/// Owns the workout session's lifecycle and ends it from authoritative data — the fix for S4/S6/S7.
///
/// In the seed, the only app-driven exit from `running` was a view observing the active list go from
/// non-empty to empty; a backgrounded or rebuilt watch app never saw that edge, so the session leaked
/// and watchOS kept re-foregrounding the app. Here the session is ended by reconciling its state
/// against the cache after EVERY change to it — each applied push, each local edit, and the eager
/// re-apply at start-up — whatever the app state and however many changes were missed:
///
/// - running, run in the cache and active → keep running (and note the run has been seen);
/// - running, run in the cache and completed → finish and save: the metrics
///   (`WorkoutDocument.sessionMetrics(recordedAt:)`) go out in `saveMetrics`;
/// - running, run absent but held back (left out of the push to fit its size) → keep running;
/// - running, run absent → discard, nothing saved — once the run has been seen, or when a context
///   received from the phone after the start lacks it (the launch and its context race, S1; the
///   persisted context re-applied at start-up, or a local edit of another run, cannot prove a run
///   that was never seen is gone);
/// - and after either, the session ends only when the active list is empty (seed 001's session
///   machine): while another run is active it goes on for the oldest of them (a second active
///   run, started while the session ran, is covered by it; a run that completes while the session
///   is for another records no metrics);
/// - idle or ended → nothing: the session ends once, so metrics are saved once per run.
///
/// The owner MUST: feed `cacheChanged` after every change to the cache (including the start-up
/// re-apply); perform `persistSession` durably and pass the last record back to `init` at start-up;
/// on `saveMetrics`, record the metrics on the run and forward it to the phone before persisting the
/// record that follows it (so a crash in between repeats the save rather than losing it).
package struct WorkoutSessionCoordinator: Equatable, Sendable {
    /// Facts fed into the coordinator.
    package enum Event: Equatable, Sendable {
        /// Someone asked for a session for the run (the phone's launch request, or a person on the watch);
        /// `cache` is the watch's cache at that moment.
        case startRequested(runID: DocumentID, origin: SessionOrigin, cache: WatchCache, now: Timestamp)
        /// The cache changed (or was re-applied at start-up); reconcile the session against it.
        case cacheChanged(WatchCache, source: CacheChangeSource, now: Timestamp)
        /// The system ended the session (error, or stopped under the app).
        case endedBySystem(failure: String, now: Timestamp)
        /// The ended session was acknowledged and may be forgotten.
        case cleared
    }

    /// What the owner must do, in order.
    package enum Action: Equatable, Sendable {
        /// Record these metrics on the run (stamped like an edit) and forward the run to the phone.
        case saveMetrics(runID: DocumentID, SessionMetrics)
        /// Write the record durably; it is fed back to `init` at start-up.
        case persistSession(SessionRecord)
        case log(WatchDiagnostic)
    }

    /// Why the cache changed.
    package enum CacheChangeSource: Equatable, Sendable {
        /// A context that just arrived from the phone was applied.
        case receivedContext
        /// The persisted last context was re-applied at start-up.
        case restoredContext
        /// A person's edit on the watch.
        case localEdit
    }

    package private(set) var state: SessionState

    /// Restores the state from the last persisted record (idle when there is none).
    package init(restoring record: SessionRecord? = nil) {
        state = record?.state ?? .idle
    }

    /// Handles one event and returns what to do, in order.
    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .startRequested(let runID, let origin, let cache, let now):
            return start(runID: runID, origin: origin, cache: cache, now: now)
        case .cacheChanged(let cache, let source, let now):
            #if SIMULATION_MUTATION_SESSION
                // The seeds' own bug, for `scripts/simulate --mutations` only: the session followed the
                // watch's own edits (the mounted view), not the contexts that end the run elsewhere.
                guard source == .localEdit else { return [] }
            #endif
            return reconcile(with: cache, source: source, now: now)
        case .endedBySystem(let failure, let now):
            guard case .running(let session) = state else {
                return [.log(.systemEndIgnored(failure: failure))]
            }
            return end(session, outcome: .systemFailure(reason: failure), at: now, before: [])
        case .cleared:
            guard case .ended = state else { return [] }
            state = .idle
            return [.persistSession(SessionRecord(state)), .log(.sessionCleared)]
        }
    }

    /// Starts a session for the run, given what the cache knows about it. Idempotent while running.
    ///
    /// A launch for a run the cache does not hold yet starts anyway (its context may still be on the
    /// way); a start for a run the cache holds as completed, or a watch-side start for an unknown run,
    /// is refused: there is nothing left to run.
    private mutating func start(
        runID: DocumentID, origin: SessionOrigin, cache: WatchCache, now: Timestamp
    ) -> [Action] {
        if case .running(let session) = state {
            // One session covers every active run: it goes on for this one when its run is done.
            let covered = "the session running for run \(session.runID) covers it"
            return [.log(.sessionStartIgnored(run: runID, refusal: covered))]
        }
        if let refusal = startRefusal(runID: runID, origin: origin, cache: cache) {
            return [.log(.sessionStartIgnored(run: runID, refusal: refusal))]
        }
        let run = cache.workouts[runID]
        let session = RunningSession(runID: runID, startedAt: now, origin: origin, runSeen: run != nil)
        state = .running(session)
        return [.persistSession(SessionRecord(state)), .log(.sessionRunning(run: runID, runInCache: run != nil))]
    }

    /// Why a start for the run would be refused now, or nil when it would start (or already runs) one;
    /// the shell tells the person who asked (`watchctl session start` exits 1 with it).
    package func startRefusal(runID: DocumentID, origin: SessionOrigin, cache: WatchCache) -> String? {
        let run = cache.workouts[runID]
        if let run, !run.isActive { return "the run is completed" }
        if run == nil, origin == .watch { return "no such run on this watch" }
        return nil
    }

    /// Reconciles a running session against the cache; see the type's documentation for the rules.
    private mutating func reconcile(with cache: WatchCache, source: CacheChangeSource, now: Timestamp) -> [Action] {
        guard case .running(var session) = state else { return [] }
        guard let run = cache.workouts[session.runID] else {
            // Left out of the push only to fit the context limit: the run is still live on the phone.
            guard !cache.heldBackRunIDs.contains(session.runID) else { return [] }
            guard session.runSeen || source == .receivedContext else { return [] }
            return moveOn(from: session, outcome: .discarded, cache: cache, at: now, before: [])
        }
        if run.isActive {
            guard !session.runSeen else { return [] }
            session.runSeen = true
            state = .running(session)
            return [.persistSession(SessionRecord(state))]
        }
        let metrics = run.sessionMetrics(recordedAt: now)
        return moveOn(
            from: session, outcome: .finishedAndSaved(metrics: metrics), cache: cache, at: now,
            before: [.saveMetrics(runID: run.id, metrics)])
    }

    /// The session's run is done (`outcome`): the session goes on for the oldest other active run,
    /// or ends when there is none.
    private mutating func moveOn(
        from session: RunningSession, outcome: SessionOutcome, cache: WatchCache, at now: Timestamp,
        before: [Action]
    ) -> [Action] {
        guard let next = cache.activeRuns.first(where: { $0.id != session.runID }) else {
            return end(session, outcome: outcome, at: now, before: before)
        }
        var moved = session
        moved.runID = next.id
        moved.runSeen = true
        state = .running(moved)
        return before + [
            .persistSession(SessionRecord(state)),
            .log(.sessionMovedOn(from: session.runID, outcome, to: next.id)),
        ]
    }

    private mutating func end(
        _ session: RunningSession, outcome: SessionOutcome, at now: Timestamp, before: [Action]
    ) -> [Action] {
        state = .ended(EndedSession(runID: session.runID, startedAt: session.startedAt, endedAt: now, outcome: outcome))
        return before + [.persistSession(SessionRecord(state)), .log(.sessionEnded(run: session.runID, outcome))]
    }
}
