import WorkoutModel

/// The gather's scan and the directory watcher's reports: what the phone learns from its files.
extension SyncEngine {
    mutating func scanned(_ document: ScannedDocument, now: Timestamp, into actions: inout [Action]) {
        switch document {
        case .split(let split):
            guard tombstones[split.id] == nil else {
                orphanedSplitFiles.append(split.id)
                return
            }
            do throws(OperationError) {
                try validateSplit(name: split.name, exercises: split.exercises)
            } catch {
                actions.append(.refuseSplitFile(split.id, reason: "\(error)"))
                return
            }
            splits[split.id] = split
        case .workout(let run):
            clock.observe(run)
            if tombstones[run.id] != nil || pendingDeletes[run.id] != nil {
                orphanedLiveFiles.append((run.id, run.startedAt))
                return
            }
            cache(run, now: now)
        case .tombstone(let stub):
            tombstones[stub.id] = stub
            if let summary = index[stub.id] {
                forget(run: stub.id)
                orphanedLiveFiles.append((stub.id, summary.startedAt))
            }
            if splits.removeValue(forKey: stub.id) != nil { orphanedSplitFiles.append(stub.id) }
        }
    }

    /// The runs of the initial scan known from the run index file (its month folders unchanged since
    /// it was recorded): indexed where they lie, their documents loaded when a push or an operation
    /// needs them. Sent before the scan reads any document.
    mutating func recorded(_ table: RunTable) {
        for (folder, statistics) in table.folders.enumerated() where table.isLive[folder] {
            if let newest = statistics.newestVersion { clock.observe(newest) }
        }
        index.install(table)
        for id in Set(tombstones.keys).union(pendingDeletes.keys) {
            guard let summary = index[id] else { continue }
            orphanedLiveFiles.append((id, summary.startedAt))
            forget(run: id)
        }
    }

    mutating func externalChange(_ change: ExternalChange, now: Timestamp, into actions: inout [Action]) {
        switch change {
        case .documentChanged(.workout(let run)):
            // A file of the run is back (its new month folder, or rewritten in place): not a vanish.
            if heldRemovals.removeValue(forKey: run.id) != nil {
                actions.append(.log(.runFileBack(run.id)))
            }
            if tombstones[run.id] != nil || pendingDeletes[run.id] != nil {
                actions.append(.log(.externalCopyOfDeletedRunIgnored(run.id)))
                actions.append(.removeWorkoutFile(run.id, startedAt: run.startedAt))
                return
            }
            // Every copy goes through the merge: what the phone holds must be what the file holds, so a
            // restart reads it back. A copy the phone's covers (our own write read late, or another
            // device's older copy) changes nothing here, and the phone's copy goes back over it.
            #if SIMULATION_MUTATION_ECHO
                // (`scripts/simulate --mutations`: the late-echo rollback, every copy taken whole.)
                let adopted = run
            #else
                guard let adopted = adoptedCopy(of: run, now: now, into: &actions) else { return }
            #endif
            clock.observe(run)
            // To the copy's own month folder; an old folder's file is the moving device's to remove.
            actions.append(.writeWorkout(adopted))
            cache(adopted, now: now)
            actions.append(.log(adopted == run ? .externalRun(run.id) : .externalRunMerged(run.id)))
        case .documentChanged(.split(let split)):
            guard tombstones[split.id] == nil else { return }
            if let known = splits[split.id], split.updatedAt <= known.updatedAt {
                // The phone stamps every version it writes anew: another one under the same stamp is
                // the file edited in place, taken as an edit made now (or put back if it breaks a rule).
                guard split.updatedAt == known.updatedAt, split != known else { return }
                do throws(OperationError) {
                    try validateSplit(name: split.name, exercises: split.exercises)
                } catch {
                    actions.append(.writeSplit(known))
                    actions.append(.log(.externalSplitEditRefused(split.id, reason: "\(error)")))
                    return
                }
                var taken = split
                stamper.observe(known.updatedAt)
                taken.updatedAt = stamper.stamp(at: now)
                splits[split.id] = taken
                actions.append(.writeSplit(taken))
                actions.append(.log(.externalSplitEditedInPlace(split.id)))
                break
            }
            do throws(OperationError) {
                try validateSplit(name: split.name, exercises: split.exercises)
            } catch {
                // A newer copy, or a new split, that breaks a rule: the phone's own copy goes back
                // over it when there is one; else the file is only reported.
                if let known = splits[split.id] {
                    actions.append(.writeSplit(known))
                    actions.append(.log(.externalSplitEditRefused(split.id, reason: "\(error)")))
                } else {
                    actions.append(.refuseSplitFile(split.id, reason: "\(error)"))
                }
                return
            }
            splits[split.id] = split
            actions.append(.log(.externalSplit(split.id)))
        case .documentChanged(.tombstone(let stub)):
            guard tombstones[stub.id] == nil else { return }
            tombstones[stub.id] = stub
            pendingDeletes[stub.id] = nil
            if let summary = index[stub.id] {
                forget(run: stub.id)
                actions.append(.removeWorkoutFile(stub.id, startedAt: summary.startedAt))
            }
            if splits.removeValue(forKey: stub.id) != nil { actions.append(.removeSplitFile(stub.id)) }
            actions.append(.log(.externalDelete(stub.id)))
        case .workoutRemoved(let id, let year, let month):
            guard let summary = index[id] else { return }
            guard summary.startedAt.yearAndMonth == (year, month) else {
                actions.append(.log(.oldFolderFileRemoved(run: id, year: year, month: month)))
                return
            }
            guard heldRemovals[id] == nil else { return }
            heldRemovals[id] = now.advanced(by: Self.removalGrace)
            actions.append(.log(.liveFileVanished(run: id, grace: Self.removalGrace)))
            // Nothing changed for the watch yet: the run stays in the push until the grace ends.
            return
        case .splitRemoved(let id):
            guard splits.removeValue(forKey: id) != nil else { return }
            actions.append(.log(.splitFileVanished(id)))
        case .splitUnreadable(let id, let reason):
            // Put back, as an edit in place that breaks a rule is: else the split would vanish from
            // both sides at the next start, when the scan skips the file.
            guard tombstones[id] == nil, let known = splits[id] else { return }
            actions.append(.writeSplit(known))
            actions.append(.log(.externalSplitEditRefused(id, reason: reason)))
            return
        }
        push(now: now, force: false, reason: "external change", into: &actions)
    }

    /// What the phone takes from another writer's copy of a run: the merge of its own copy with it,
    /// or nil when that is handled here already (an echo, an edit in place, a covered copy written
    /// back, or a copy of a run the phone only summarises, which waits for its file's load).
    ///
    /// A run only summarised in memory has no copy to merge with, so its file is loaded. An older copy
    /// is either a late echo of the phone's own write (the file holds the newer one) or another
    /// writer's copy that replaced the file: what the file holds decides (`runsLoaded` takes a file
    /// that reads older than the index twice as all there is of the run). A newer copy is merged with
    /// what the file holds (`pendingExternalCopies`).
    private mutating func adoptedCopy(
        of run: WorkoutDocument, now: Timestamp, into actions: inout [Action]
    ) -> WorkoutDocument? {
        #if SIMULATION_MUTATION_OLDER_COPY
            // (`scripts/simulate --mutations`: a copy not newer than the index's passed over as an echo.)
            if let known = index[run.id], run.version <= known.version {
                if run.version == known.version { editedInPlace(run, now: now, into: &actions) }
                return nil
            }
        #endif
        guard let mine = self.run(run.id) else {
            guard let known = index[run.id] else { return run }
            if run.version == known.version { return nil }
            if run.version < known.version {
                actions.append(.loadRuns([run.id: known.startedAt]))
                actions.append(.log(.externalOlderCopyOfSummary(run.id, version: run.version, had: known.version)))
                return nil
            }
            // A newer copy may still lack what the phone wrote into the file since the other device
            // read it (a late report): it is merged with what the file holds, once loaded (seed 27541).
            guard run.startedAt == known.startedAt else { return run }
            let waiting = pendingExternalCopies[run.id]
            pendingExternalCopies[run.id] = waiting.flatMap { try? $0.merged(with: run) } ?? run
            actions.append(.loadRuns([run.id: known.startedAt]))
            return nil
        }
        if run == mine { return nil }
        if run.version == mine.version {
            editedInPlace(run, now: now, into: &actions)
            return nil
        }
        // A copy whose skeleton differs cannot merge: a newer one is taken whole (another device
        // restarted the run's file), an older one loses to the phone's.
        let merged = (try? mine.merged(with: run)) ?? (run.version > mine.version ? run : mine)
        guard merged == mine else { return merged }
        actions.append(.writeWorkout(mine))
        actions.append(.log(.externalCopyCovered(run.id, version: run.version)))
        return nil
    }

    /// A copy at the phone's own version that differs from the phone's copy: the file was edited in
    /// place, keeping the stamps (a person with an editor, a tool that does not stamp). Each register
    /// it changed is taken as a new edit made now, so it wins on both sides and reaches the watch, and
    /// the file is written back with the new stamps; what cannot change in place (the run's split,
    /// start or exercises) is put back.
    /// The phone's own writes never look like this: it stamps every change it makes.
    private mutating func editedInPlace(_ copy: WorkoutDocument, now: Timestamp, into actions: inout [Action]) {
        guard let mine = run(copy.id), mine != copy else { return }
        var stamper = clock
        guard let edited = mine.takingInPlaceEdits(from: copy, stamp: stamper.stamp(at: now)) else {
            actions.append(.writeWorkout(mine))
            actions.append(.log(.externalRunEditRefused(copy.id)))
            return
        }
        // No register changed under its own stamp: an older copy at this version (merging the
        // watch's older sets does not raise it: a late echo, or another device's copy), or derived
        // fields only. The file may hold that copy now: the phone's goes back over it.
        guard edited != mine else {
            actions.append(.writeWorkout(mine))
            actions.append(.log(.externalCopyCovered(copy.id, version: copy.version)))
            return
        }
        clock = stamper
        actions.append(.writeWorkout(edited))
        cache(edited, now: now)
        actions.append(.log(.externalRunEditedInPlace(copy.id)))
        push(now: now, force: false, reason: "external change", into: &actions)
    }
}
