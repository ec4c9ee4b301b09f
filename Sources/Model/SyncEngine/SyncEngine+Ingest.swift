import WorkoutModel

extension SyncEngine {
    /// `ingestFromWatch`: the intake gates for a workout update from the watch (message or userInfo),
    /// in order: the epoch veto (made against another phone epoch than this one: a reset phone must
    /// not take edits of its old state, an older restored one not those of a newer; an update naming
    /// no epoch predates epochs and passes), tombstone veto, pending-delete veto, then the merge — the
    /// watch's copy is merged into the phone's register by register (`WorkoutDocument.merged(with:)`).
    /// A merge that changes the phone's copy is written, cached and pushed as the authoritative echo
    /// (`merged`); one that changes nothing is an echo or duplicate (`unchanged`), pushed (unforced: skipped when equal to the last push) when the
    /// watch's copy lacks something the phone has. When `needsDocument(_:)` says so the shell MUST load
    /// the phone's copy from disk and pass it as `loaded` (an old run is only summarised in memory).
    ///
    /// In a batch (`batchBegan`) a `userInfo` ingest's write waits for `batchEnded` (the shell
    /// acknowledges the transfer after it); a `message` ingest is written at once, because its reply
    /// tells the watch the edit is safe.
    package mutating func ingestFromWatch(
        _ incoming: WorkoutDocument, epoch madeAgainst: Timestamp? = nil, loaded: WorkoutDocument? = nil,
        via channel: IngestChannel = .message, now: Timestamp
    ) -> (outcome: IngestOutcome, actions: [Action]) {
        let deferring = isBatching && channel == .userInfo
        var actions = deferring ? [] : takeDeferredWrites()
        let outcome: IngestOutcome
        if let madeAgainst, madeAgainst != epoch {
            outcome = .vetoedEpoch
            actions.append(.log(.ingestVetoedEpoch(run: incoming.id, madeAgainst: madeAgainst, current: epoch)))
            push(now: now, force: true, reason: "epoch veto", into: &actions)
        } else if tombstones[incoming.id] != nil {
            outcome = .vetoedTombstoned
            actions.append(.log(.ingestVetoedTombstone(run: incoming.id)))
            push(now: now, force: true, reason: "tombstone veto", into: &actions)
        } else if pendingDeletes[incoming.id] != nil {
            outcome = .vetoedPendingDelete
            actions.append(.log(.ingestVetoedPendingDelete(run: incoming.id)))
            push(now: now, force: true, reason: "pending-delete veto", into: &actions)
        } else {
            clock.observe(incoming)
            let known = run(incoming.id) ?? loaded
            let merged: WorkoutDocument
            do throws(MergeError) {
                // Merging with nothing would overwrite a run the shell failed to load: refuse instead.
                guard known != nil || !needsDocument(incoming.id) else {
                    throw MergeError(run: incoming.id, reason: "the phone's copy is not loaded")
                }
                merged = try known.map { known throws(MergeError) in try known.merged(with: incoming) } ?? incoming
            } catch {
                ingestCounts[.refused, default: 0] += 1
                actions.append(.log(.ingestRefused(run: incoming.id, error)))
                push(now: now, force: true, reason: "refused update", into: &actions)
                return (.refused, actions)
            }
            if merged == known {
                outcome = .unchanged
                if incoming == merged {
                    actions.append(.log(.ingestDuplicate(run: incoming.id, version: merged.version)))
                } else {
                    actions.append(.log(.ingestWatchBehind(run: incoming.id)))
                    push(now: now, force: false, reason: "watch behind", into: &actions)
                }
            } else {
                outcome = .merged
                write(merged, now: now, deferring: deferring, into: &actions)
                let line = SyncDiagnostic.ingestMerged(run: merged.id, status: merged.status, version: merged.version)
                if deferring && deferredWrites[merged.id] != nil {
                    deferredLogs.append(line)
                } else {
                    actions.append(.log(line))
                }
                push(now: now, force: false, reason: "watch update", into: &actions)
            }
        }
        ingestCounts[outcome, default: 0] += 1
        return (outcome, actions)
    }

    /// Writes a run and caches it; removes its old file when its start moved to another month — after
    /// the new file is written, so the run always has a file (a crash in between leaves a duplicate
    /// the scan reports, never a run without a file).
    ///
    /// `deferring` (a userInfo ingest in a batch): the write waits in `deferredWrites` unless the run
    /// moved months (its old file's removal must follow the new write at once).
    mutating func write(_ run: WorkoutDocument, now: Timestamp, deferring: Bool = false, into actions: inout [Action]) {
        if let old = index[run.id], old.startedAt.yearAndMonth != run.startedAt.yearAndMonth {
            actions += takeDeferredWrites()
            actions.append(.writeWorkout(run))
            actions.append(.removeWorkoutFile(run.id, startedAt: old.startedAt))
        } else if deferring {
            if deferredWrites.updateValue(run, forKey: run.id) == nil { deferredOrder.append(run.id) }
        } else {
            actions.append(.writeWorkout(run))
        }
        cache(run, now: now)
    }
}
