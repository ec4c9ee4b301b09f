import WorkoutModel

/// What the watch holds: the phone's last pushed state plus the watch's own optimistic edits.
///
/// Workouts and splits are kept by ID; settings and edit locks are whatever the last applied push
/// said. The one piece of bookkeeping the phone does not send is `undeliveredEdits`: for each run the
/// watch edited, the stamp (`version`) of its newest local edit that no applied push has confirmed yet.
/// A mark is set by every local edit and cleared when a push carries that run with every local
/// register covered (the phone merged the edit). While a mark stands, a pushed copy is merged into
/// the local one instead of replacing it (`WatchCacheApplier`).
package struct WatchCache: Equatable, Sendable {
    package private(set) var workouts: [DocumentID: WorkoutDocument]
    package private(set) var splits: [DocumentID: SplitDocument]
    package private(set) var settings: Settings
    package private(set) var editLocks: EditLocks
    /// Run ID → the stamp (`version`) of the newest local edit not yet confirmed by an applied push:
    /// a stamp, not `updatedAt`, since edits made while the watch's clock is behind share one time.
    package private(set) var undeliveredEdits: [DocumentID: Stamp]
    /// Runs the last push left out only to fit the context limit: not in the cache, but not gone.
    package private(set) var heldBackRunIDs: Set<DocumentID> = []

    /// An empty cache: no runs, no splits, default settings, nothing locked.
    package init() {
        workouts = [:]
        splits = [:]
        settings = Settings()
        editLocks = EditLocks()
        undeliveredEdits = [:]
    }

    /// Rebuilds the cache from the documents found in the watch's cache files at start-up.
    ///
    /// Which of them carry an undelivered local edit is not stored, so every restored run is marked
    /// undelivered at its own `version`. That is safe: a push whose copy covers the file clears the
    /// mark as usual, and one that does not is merged with it, so an unconfirmed edit survives.
    /// Settings and locks come from the persisted context, which the engine re-applies right after.
    package init(restoringWorkouts workouts: some Sequence<WorkoutDocument>, splits: some Sequence<SplitDocument>) {
        self.init()
        for run in workouts {
            self.workouts[run.id] = run
            undeliveredEdits[run.id] = run.version
        }
        for split in splits {
            self.splits[split.id] = split
        }
    }

    /// The runs a person can act on (not started or in progress), oldest start first, ties by ID —
    /// the same order the phone's push uses.
    package var activeRuns: [WorkoutDocument] {
        workouts.values.filter(\.isActive).sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    /// Whether the run's newest local edit still waits for the phone's confirmation.
    package func hasUndeliveredEdit(_ run: DocumentID) -> Bool { undeliveredEdits[run] != nil }

    /// Whether edits to the run are refused because the phone has it (or its split) open in an editor.
    package func isParked(_ run: WorkoutDocument) -> Bool { editLocks.parks(run) }

    // MARK: Changes (made only by the applier, the editor and the engine of this module)

    /// Stores a document the watch changed itself and marks the edit undelivered.
    mutating func storeLocalEdit(_ run: WorkoutDocument) {
        workouts[run.id] = run
        undeliveredEdits[run.id] = run.version
    }

    mutating func storePushed(_ run: WorkoutDocument) { workouts[run.id] = run }

    mutating func removeWorkout(_ id: DocumentID) {
        workouts[id] = nil
        undeliveredEdits[id] = nil
    }

    mutating func clearUndeliveredEdit(_ id: DocumentID) { undeliveredEdits[id] = nil }

    /// Forgets every local edit's mark: a newer phone epoch's push then replaces every run.
    mutating func dropUndeliveredEdits() { undeliveredEdits = [:] }

    mutating func storeSplit(_ split: SplitDocument) { splits[split.id] = split }

    mutating func removeSplit(_ id: DocumentID) { splits[id] = nil }

    mutating func replaceSettings(_ settings: Settings, editLocks: EditLocks, heldBack: Set<DocumentID>) {
        self.settings = settings
        self.editLocks = editLocks
        heldBackRunIDs = heldBack
    }
}
