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
    /// Every active run (uncapped), then the recent completed ones; see `RunIndex.pushSelection`.
    package var workouts: [WorkoutDocument]
    package var settings: Settings
    /// What the phone is editing; absent keys mean nothing is.
    package var editLocks: EditLocks
    /// The phone epoch this state belongs to (docs/PROTOCOL.md, "Phone epochs"): a watch applies a
    /// context only if its epoch is not older than the newest it has applied, and a newer epoch
    /// replaces its cache wholesale. Absent only from a phone that predates epochs (the oldest).
    package var epoch: Timestamp?

    package init(splits: [SplitDocument], workouts: [WorkoutDocument], settings: Settings, editLocks: EditLocks) {
        schemaVersion = Self.currentSchemaVersion
        self.splits = splits
        self.workouts = workouts
        self.settings = settings
        self.editLocks = editLocks
    }

    /// Builds the push from the phone's index without touching every run in history: only the runs
    /// `index.pushSelection` names are looked up with `run(_:)`. A selected ID the lookup cannot
    /// produce (its file vanished since it was indexed) is left out.
    package static func build(
        splits: some Sequence<SplitDocument>, index: RunIndex, run: (DocumentID) -> WorkoutDocument?,
        settings: Settings, editLocks: EditLocks, now: Timestamp, policy: PushPolicy = .standard
    ) -> ApplicationContext {
        ApplicationContext(
            splits: splits.sorted { $0.id < $1.id },
            workouts: index.pushSelection(now: now, policy: policy).compactMap(run),
            settings: settings, editLocks: editLocks)
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
