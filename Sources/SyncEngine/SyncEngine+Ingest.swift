import WorkoutModel

extension SyncEngine {
    /// `ingestFromWatch`: the intake gates for a workout update from the watch (message or userInfo),
    /// in order: the epoch veto (made against another phone epoch than this one: a reset phone must
    /// not take edits of its old state, an older restored one not those of a newer; an update naming
    /// no epoch predates epochs and passes), tombstone veto, pending-delete veto, then the
    /// `updatedAt` gate — strictly newer is accepted (status recomputed, written, cached, pushed as the
    /// authoritative echo), strictly older re-pushes to correct the watch, equal is a duplicate or echo
    /// and is ignored. The gate arbitrates timestamps, not content (seed 000's known limit; a per-log
    /// merge would be the fix).
    package mutating func ingestFromWatch(
        _ incoming: WorkoutDocument, epoch madeAgainst: Timestamp? = nil, now: Timestamp
    ) -> (outcome: IngestOutcome, actions: [Action]) {
        var actions: [Action] = []
        let outcome: IngestOutcome
        if let madeAgainst, madeAgainst != epoch {
            outcome = .vetoedEpoch
            actions.append(
                .log("ingest \(incoming.id): vetoed, made against phone epoch \(madeAgainst), this phone's is "
                    + "\(epoch.map(\.description) ?? "(none)"); re-pushing"))
            push(now: now, force: true, reason: "epoch veto", into: &actions)
        } else if tombstones[incoming.id] != nil {
            outcome = .vetoedTombstoned
            actions.append(.log("ingest \(incoming.id): vetoed, the run is deleted (tombstone); re-pushing"))
            push(now: now, force: true, reason: "tombstone veto", into: &actions)
        } else if pendingDeletes[incoming.id] != nil {
            outcome = .vetoedPendingDelete
            actions.append(.log("ingest \(incoming.id): vetoed, the run's delete is in flight; re-pushing"))
            push(now: now, force: true, reason: "pending-delete veto", into: &actions)
        } else if let known = index.summaries[incoming.id], incoming.updatedAt < known.updatedAt {
            outcome = .stale
            actions.append(
                .log("ingest \(incoming.id): stale (\(incoming.updatedAt) < \(known.updatedAt)); re-pushing to correct the watch"))
            push(now: now, force: true, reason: "stale update", into: &actions)
        } else if let known = index.summaries[incoming.id], incoming.updatedAt == known.updatedAt {
            outcome = .duplicate
            actions.append(.log("ingest \(incoming.id): duplicate or echo (updatedAt \(incoming.updatedAt)), ignored"))
        } else {
            outcome = .accepted
            var run = incoming
            run.recomputeStatus(at: run.updatedAt)
            stamper.observe(run.updatedAt)
            write(run, now: now, into: &actions)
            actions.append(.log("ingest \(run.id): accepted (\(run.status.rawValue), updatedAt \(run.updatedAt))"))
            push(now: now, force: false, reason: "watch update", into: &actions)
        }
        ingestCounts[outcome, default: 0] += 1
        return (outcome, actions)
    }

    /// Writes a run and caches it; removes its old file when its start moved to another month — after
    /// the new file is written, so the run always has a file (a crash in between leaves a duplicate
    /// the scan reports, never a run without a file).
    mutating func write(_ run: WorkoutDocument, now: Timestamp, into actions: inout [Action]) {
        actions.append(.writeWorkout(run))
        if let old = index.summaries[run.id], old.startedAt.yearAndMonth != run.startedAt.yearAndMonth {
            actions.append(.removeWorkoutFile(run.id, startedAt: old.startedAt))
        }
        cache(run, now: now)
    }
}
