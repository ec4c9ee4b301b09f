/// The phone's user settings (its UserDefaults), pushed to the watch inside every context.
package struct Settings: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// Length of the timed rest after each set.
    package var restSeconds: Int
    /// Length of the timed ready countdown before each set.
    package var doneCountdownSeconds: Int
    package var weightUnit: WeightUnit

    package init(restSeconds: Int = 90, doneCountdownSeconds: Int = 5, weightUnit: WeightUnit = .kilograms) {
        schemaVersion = Self.currentSchemaVersion
        self.restSeconds = restSeconds
        self.doneCountdownSeconds = doneCountdownSeconds
        self.weightUnit = weightUnit
    }

    /// The rest and the countdown a person may set, in seconds.
    package static let restRange = 0...3_600
    package static let countdownRange = 0...600

    package func validate() throws(DocumentError) {
        guard Self.restRange.contains(restSeconds) else {
            throw .malformed(type: "Settings", field: "restSeconds", reason: "must be 0...3600, got \(restSeconds)")
        }
        guard Self.countdownRange.contains(doneCountdownSeconds) else {
            throw .malformed(
                type: "Settings", field: "doneCountdownSeconds", reason: "must be 0...600, got \(doneCountdownSeconds)")
        }
    }
}

/// The unit weights are shown and entered in.
package enum WeightUnit: String, Codable, Sendable, CaseIterable {
    case kilograms = "kg"
    case pounds = "lb"
}

/// A deletion that outlives the document: once an ID has a tombstone, nothing with that ID is
/// written again by any path. Stored as `Stubs/<id>.json`; tombstones are kept forever.
package struct Tombstone: VersionedDocument, Identifiable {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    package var id: DocumentID
    package var kind: Kind
    package var deletedAt: Timestamp

    /// What kind of document was deleted.
    package enum Kind: String, Codable, Sendable {
        case split
        case workout
    }

    package init(id: DocumentID, kind: Kind, deletedAt: Timestamp) {
        schemaVersion = Self.currentSchemaVersion
        self.id = id
        self.kind = kind
        self.deletedAt = deletedAt
    }
}

/// What the phone currently has open in an editor. A run is parked on the watch while it, or the split
/// it came from, is being edited. Absent keys mean "not editing". Locks are runtime state of the phone
/// process: they are never written to disk and die with it.
package struct EditLocks: Codable, Equatable, Sendable {
    package var editingWorkoutID: DocumentID?
    package var editingSplitID: DocumentID?

    package init(editingWorkoutID: DocumentID? = nil, editingSplitID: DocumentID? = nil) {
        self.editingWorkoutID = editingWorkoutID
        self.editingSplitID = editingSplitID
    }

    /// Whether edits to `run` must be refused ("editing on phone").
    package func parks(_ run: WorkoutDocument) -> Bool {
        run.id == editingWorkoutID || run.splitID == editingSplitID
    }
}
