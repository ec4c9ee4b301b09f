/// The state push (WatchConnectivity's application context): the phone's complete state as the watch
/// needs it, rebuilt and sent whole every time, because a key left out would read as "cleared".
///
/// Two contexts are compared by decoded value (`==`), never by bytes: a push equal to the last one
/// sent is skipped.
package struct ApplicationContext: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// Every split, ordered by ID.
    package var splits: [SplitDocument]
    /// Active runs (oldest start first), then completed ones (newest end first): what
    /// `SyncEngine`'s push selection carries within the context limit.
    package var workouts: [WorkoutDocument]
    package var settings: Settings
    /// What the phone is editing; absent keys mean nothing is.
    package var editLocks: EditLocks
    /// Runs the phone still holds as live (active, or completed while the watch may still hold them
    /// active) that this push leaves out to fit the context limit. They are not cleared: the watch
    /// drops its copy like any run absent, but a session following one keeps running. Absent (nil)
    /// when nothing is held back.
    package var heldBackRunIDs: [DocumentID]?
    /// The phone epoch this state belongs to (docs/PROTOCOL.md, "Phone epochs"): a watch applies a
    /// context only if its epoch is not older than the newest it has applied, and a newer epoch
    /// replaces its cache wholesale. Absent only from a phone that predates epochs (the oldest).
    package var epoch: Timestamp?

    package init(
        splits: [SplitDocument], workouts: [WorkoutDocument], settings: Settings, editLocks: EditLocks,
        heldBackRunIDs: [DocumentID]? = nil
    ) {
        schemaVersion = Self.currentSchemaVersion
        self.splits = splits
        self.workouts = workouts
        self.settings = settings
        self.editLocks = editLocks
        self.heldBackRunIDs = heldBackRunIDs
    }

    /// Builds the push from the phone's index without touching every run in history: only the runs
    /// `index.pushSelection` names, and the completed runs in `awaited` (the watch may still hold
    /// them active: they ride until it has seen them completed, whatever the window), are looked up
    /// with `run(_:)`. A selected ID the lookup cannot produce (its file vanished since it was
    /// indexed) is left out.
    ///
    /// The push fits `policy.maximumBytes` by this rule: when everything does not fit, runs are
    /// taken in priority order — active runs most recently updated first, then `awaited` runs, then
    /// the other completed ones newest end first — each while it still fits (the first that does not
    /// ends the selection). Active and awaited runs left out are named in `heldBackRunIDs`. Before the
    /// runs, splits are taken most recently updated first, each while the splits stay within half the
    /// limit (one that does not is skipped; the watch does not show it): a set of splits too large to
    /// send once blocked every push for good. Only when the settings, locks and those IDs alone are
    /// too large does the result still exceed the limit.
    package static func build(
        splits: some Sequence<SplitDocument>, index: RunIndex, run: (DocumentID) -> WorkoutDocument?,
        settings: Settings, editLocks: EditLocks, now: Timestamp, policy: PushPolicy = .standard,
        awaited: Set<DocumentID> = [], epoch: Timestamp? = nil,
        encodedSize: (WorkoutDocument) -> Int = { DocumentCoder.encodeCompact($0).count },
        encodedFrameSize: (ApplicationContext) -> Int = { DocumentCoder.encodeCompact($0).count }
    ) -> ApplicationContext {
        let selection = index.pushSelection(now: now, policy: policy)
        let extra = awaited.subtracting(selection).compactMap { index[$0] }.filter { !$0.status.isActive }
        let ordered = selection.compactMap { index[$0] } + extra
        let runs = ordered.sorted(by: Self.displayOrder).compactMap { run($0.id) }
        var context = ApplicationContext(
            splits: splits.sorted { $0.id < $1.id }, workouts: runs, settings: settings, editLocks: editLocks)
        context.epoch = epoch
        // The size from each run's own encoding and the frame's (`encodedSize`, `encodedFrameSize`,
        // which a caller may cache): a comma per run over-counts by one, so a context that fits by this
        // sum fits.
        var empty = context
        empty.workouts = []
        let total = runs.reduce(encodedFrameSize(empty)) { $0 + encodedSize($1) + 1 }
        guard total > policy.maximumBytes else { return context }

        let live = runs.filter { $0.isActive || awaited.contains($0.id) }
        let rank = { (run: WorkoutDocument) in (awaited.contains(run.id) ? 1 : 0, run.endedAt!, run.id) }
        let priority =
            live.filter(\.isActive).sorted { ($0.updatedAt, $0.id) > ($1.updatedAt, $1.id) }
            + runs.filter { !$0.isActive }.sorted { rank($0) > rank($1) }
        // Room is kept for every live run's ID, and a comma per run or split: the result can only be smaller.
        var frame = context
        frame.workouts = []
        frame.splits = []
        frame.heldBackRunIDs = live.map(\.id)
        var used = encodedFrameSize(frame)
        var splitBytes = 0
        var keptSplits: Set<DocumentID> = []
        for split in context.splits.sorted(by: { ($0.updatedAt, $0.id) > ($1.updatedAt, $1.id) }) {
            let size = DocumentCoder.encodeCompact(split).count + 1
            guard splitBytes + size <= policy.maximumBytes / 2 else { continue }
            splitBytes += size
            keptSplits.insert(split.id)
        }
        context.splits = context.splits.filter { keptSplits.contains($0.id) }
        used += splitBytes
        var chosen: Set<DocumentID> = []
        for candidate in priority {
            let size = encodedSize(candidate) + 1
            guard used + size <= policy.maximumBytes else { break }
            used += size
            chosen.insert(candidate.id)
        }
        context.workouts = runs.filter { chosen.contains($0.id) }
        let heldBack = live.map(\.id).filter { !chosen.contains($0) }.sorted()
        context.heldBackRunIDs = heldBack.isEmpty ? nil : heldBack
        return context
    }

    /// Active runs oldest start first, then completed runs newest end first.
    private static func displayOrder(_ lhs: RunIndex.RunSummary, _ rhs: RunIndex.RunSummary) -> Bool {
        let lhsEnd = lhs.status.isActive ? nil : lhs.endedAt
        let rhsEnd = rhs.status.isActive ? nil : rhs.endedAt
        switch (lhsEnd, rhsEnd) {
        case (nil, nil): return (lhs.startedAt, lhs.id) < (rhs.startedAt, rhs.id)
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return (left, lhs.id) > (right, rhs.id)
        }
    }

    /// Whether a run is locked for editing on the phone.
    package func isParked(_ run: WorkoutDocument) -> Bool { editLocks.parks(run) }

    /// Every inner document must be of a schema this build reads (both daemons' loaders skip such
    /// files; the watch skips such a context whole, seed 000) and pass its own checks.
    package func validate() throws(DocumentError) {
        try DocumentCoder.requireCurrentSchema(settings.schemaVersion, of: Settings.self)
        try settings.validate()
        for split in splits {
            try DocumentCoder.requireCurrentSchema(split.schemaVersion, of: SplitDocument.self)
            try split.validate()
        }
        for run in workouts {
            try DocumentCoder.requireCurrentSchema(run.schemaVersion, of: WorkoutDocument.self)
            try run.validate()
        }
        guard Set(splits.map(\.id)).count == splits.count else {
            throw .malformed(type: "ApplicationContext", field: "splits", reason: "duplicate split ID")
        }
        guard Set(workouts.map(\.id)).count == workouts.count else {
            throw .malformed(type: "ApplicationContext", field: "workouts", reason: "duplicate workout ID")
        }
    }
}
