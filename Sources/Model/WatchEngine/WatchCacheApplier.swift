import WorkoutModel

/// Applies the phone's state push (the application context) to the watch's cache.
///
/// The rules (seed 000 §1, ARCHITECTURE §5):
/// - every document sent is upserted, then every document absent is pruned: the pushed sets are
///   authoritative, which is how a delete or discard on the phone reaches the watch;
/// - a run with a local edit still undelivered is merged with the pushed copy register by register
///   (`WorkoutDocument.merged(with:)`), so neither the watch's edit nor a concurrent phone edit of
///   another set is lost; the mark is cleared once a pushed copy covers every local register (the
///   phone has merged the edit); a run without one takes the pushed copy (the phone's is the
///   authoritative state);
/// - a run absent from the push is pruned, unless it carries an edit the phone may not have yet
///   (an undelivered mark): the phone leaves runs out for other reasons than a delete (the recent
///   window, the cap, the size bound), and a run pruned with its edit in flight loses the edit when
///   watchd dies before it lands (start-up re-forwards only cached runs). It stays, reported as
///   `heldUndelivered`, until its edit is delivered (`WatchEngine`: the mark is then cleared, and the
///   next push prunes it); a deleted run's edit is then vetoed by the phone, and tombstones win;
/// - settings, edit locks and the runs held back to fit the context limit are replaced by the pushed ones;
/// - bytes that do not decode (not JSON, malformed, or a `schemaVersion` this build does not read)
///   are skipped entirely — no upsert, no prune — so a bogus empty set never wipes real rows.
///
/// Applying the same context twice changes nothing the second time.
package enum WatchCacheApplier {
    /// Decodes `bytes` with `DocumentCoder` and applies the context; on a decode failure the cache is
    /// left exactly as it was and the outcome says why it was skipped.
    package static func apply(contextBytes bytes: [UInt8], to cache: inout WatchCache) -> ContextApplyOutcome {
        let context: ApplicationContext
        do throws(DocumentError) {
            context = try DocumentCoder.decode(ApplicationContext.self, from: bytes)
        } catch {
            return .skipped(error)
        }
        return .applied(apply(context, to: &cache))
    }

    /// Applies a decoded context and reports what changed; `delivered` holds the newest copy of each
    /// run the phone is known to have received (an absent run whose edit is no newer is pruned).
    package static func apply(
        _ context: ApplicationContext, to cache: inout WatchCache, delivered: [DocumentID: Stamp] = [:]
    ) -> ContextApplyReport {
        var report = ContextApplyReport()
        let pushedRunIDs = Set(context.workouts.map(\.id))
        for pushed in context.workouts {
            var run = pushed
            if cache.hasUndeliveredEdit(pushed.id), let local = cache.workouts[pushed.id] {
                if local.isCovered(by: pushed) {
                    cache.clearUndeliveredEdit(pushed.id)
                    report.confirmedEdits.append(pushed.id)
                } else if let merged = try? local.merged(with: pushed) {
                    run = merged
                    report.keptLocal.append(pushed.id)
                }
            }
            if cache.workouts[pushed.id] != run {
                cache.storePushed(run)
                report.upsertedWorkouts.append(pushed.id)
            }
        }
        for id in cache.workouts.keys.sorted() where !pushedRunIDs.contains(id) {
            #if !SIMULATION_MUTATION_PRUNE_HELD
                // (`scripts/simulate --mutations` prunes it with its edit in flight.)
                if let mark = cache.undeliveredEdits[id], delivered[id].map({ $0 < mark }) ?? true {
                    report.heldUndelivered.append(id)
                    continue
                }
            #endif
            cache.removeWorkout(id)
            report.prunedWorkouts.append(id)
        }

        let pushedSplitIDs = Set(context.splits.map(\.id))
        for split in context.splits where cache.splits[split.id] != split {
            cache.storeSplit(split)
            report.upsertedSplits.append(split.id)
        }
        for id in cache.splits.keys.sorted() where !pushedSplitIDs.contains(id) {
            cache.removeSplit(id)
            report.prunedSplits.append(id)
        }

        report.settingsChanged = cache.settings != context.settings
        report.editLocksChanged = cache.editLocks != context.editLocks
        cache.replaceSettings(
            context.settings, editLocks: context.editLocks, heldBack: Set(context.heldBackRunIDs ?? []))
        report.sortIDs()
        return report
    }
}

/// How applying received context bytes ended.
package enum ContextApplyOutcome: Equatable, Sendable {
    /// The context decoded and was applied.
    case applied(ContextApplyReport)
    /// The context did not decode; the cache is untouched (no upsert, no prune).
    case skipped(DocumentError)
}

/// What one applied context changed, for persistence, logs and status. Every list is sorted by ID.
package struct ContextApplyReport: Equatable, Sendable {
    /// Runs stored with the pushed copy because it differed from the cached one.
    package var upsertedWorkouts: [DocumentID] = []
    /// Runs removed because the push no longer carries them (undelivered edits included).
    package var prunedWorkouts: [DocumentID] = []
    /// Runs whose undelivered local edit the pushed copy lacks: the two were merged, the edit kept.
    package var keptLocal: [DocumentID] = []
    /// Runs absent from the push kept because their edit may not have reached the phone yet.
    package var heldUndelivered: [DocumentID] = []
    /// Runs whose undelivered-edit mark this push cleared (the pushed copy covers the local edit).
    package var confirmedEdits: [DocumentID] = []
    package var upsertedSplits: [DocumentID] = []
    package var prunedSplits: [DocumentID] = []
    package var settingsChanged = false
    package var editLocksChanged = false

    package init() {}

    /// Whether the cache differs from before the apply (a kept local copy is not a change).
    package var changedCache: Bool {
        !upsertedWorkouts.isEmpty || !prunedWorkouts.isEmpty || !confirmedEdits.isEmpty
            || !upsertedSplits.isEmpty || !prunedSplits.isEmpty || settingsChanged || editLocksChanged
    }

    /// One line for the log, e.g. `context applied: 1 run upserted, 1 pruned, 0 kept local; …`.
    package var summary: String {
        var parts = [
            "runs \(upsertedWorkouts.count) upserted, \(prunedWorkouts.count) pruned, \(keptLocal.count) kept local"
                + (heldUndelivered.isEmpty ? "" : ", \(heldUndelivered.count) held until their edit is delivered"),
            "\(confirmedEdits.count) local edits confirmed",
            "splits \(upsertedSplits.count) upserted, \(prunedSplits.count) pruned",
        ]
        if settingsChanged { parts.append("settings changed") }
        if editLocksChanged { parts.append("edit locks changed") }
        return "context applied: " + parts.joined(separator: "; ")
    }

    mutating func sortIDs() {
        upsertedWorkouts.sort()
        prunedWorkouts.sort()
        keptLocal.sort()
        confirmedEdits.sort()
        upsertedSplits.sort()
        prunedSplits.sort()
    }
}
