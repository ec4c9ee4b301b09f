/// What the watch sends the phone, over `sendMessage` or `transferUserInfo` (seed 000 §2).
///
/// Encoded with `DocumentCoder.encodeCompact` (sorted keys) and decoded with
/// `DocumentCoder.decode(WatchToPhoneMessage.self, from:)`, which refuses an unknown `schemaVersion`
/// before reading anything else. The JSON shape, version 1:
///
/// ```
/// {"epoch":"2026-11-30T21:00:00.000000Z","kind":"workoutUpdate","schemaVersion":1,
///  "workout":{ …a whole WorkoutDocument… }}
/// {"kind":"requestSync","schemaVersion":1}
/// ```
///
/// - `workoutUpdate`: the whole document after an optimistic edit on the watch (or after the workout
///   session recorded its metrics), with the phone epoch of the state it was made against (absent
///   when the watch has never applied a context that named one). The phone gates it by epoch (made
///   against another epoch: never written), vetoes it for a deleted run, else merges it into its
///   copy per field by stamp (a change is written, an echo or older copy changes nothing).
/// - `requestSync`: the watch asks for a fresh full push (cold launch, S9). Best effort, message only.
package enum WatchToPhoneMessage: VersionedDocument {
    package static let currentSchemaVersion = 1

    case workoutUpdate(WorkoutDocument, epoch: Timestamp? = nil)
    case requestSync

    /// The wire bytes: compact JSON with sorted keys.
    package func encoded() -> [UInt8] { DocumentCoder.encodeCompact(self) }

    /// `workoutUpdate(run, epoch: epoch).encoded()`, byte for byte, around the run's own encoding
    /// (`runBytes`, `DocumentCoder.encodeCompact(run)`) when the caller needs that too: the envelope
    /// written by hand in `JSONEncoder`'s sorted order, the run last.
    package static func encodedUpdate(_ run: WorkoutDocument, runBytes: [UInt8], epoch: Timestamp?) -> [UInt8] {
        var writer = DocumentJSONWriter(pretty: false, capacity: runBytes.count + 96)
        writer.openObject()
        if let epoch {
            writer.key("epoch")
            writer.time(epoch)
        }
        writer.key("kind")
        writer.string(Kind.workoutUpdate.rawValue)
        writer.key("schemaVersion")
        writer.int(currentSchemaVersion)
        writer.key("workout")
        writer.raw(runBytes)
        writer.closeObject()
        return writer.bytes
    }

    /// The run a workout update carries, if any.
    package var runID: DocumentID? {
        if case .workoutUpdate(let run, _) = self { return run.id }
        return nil
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion
        case kind
        case workout
        case epoch
    }

    private enum Kind: String, Codable {
        case workoutUpdate
        case requestSync
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.decode(Int.self, forKey: .schemaVersion)
        switch try container.decode(Kind.self, forKey: .kind) {
        case .workoutUpdate:
            self = .workoutUpdate(
                try container.decode(WorkoutDocument.self, forKey: .workout),
                epoch: try container.decodeIfPresent(Timestamp.self, forKey: .epoch))
        case .requestSync: self = .requestSync
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.currentSchemaVersion, forKey: .schemaVersion)
        switch self {
        case .workoutUpdate(let run, let epoch):
            try container.encode(Kind.workoutUpdate, forKey: .kind)
            try container.encode(run, forKey: .workout)
            try container.encodeIfPresent(epoch, forKey: .epoch)
        case .requestSync:
            try container.encode(Kind.requestSync, forKey: .kind)
        }
    }

    /// A carried workout must be of the document schema this build reads and pass its own checks.
    package func validate() throws(DocumentError) {
        guard case .workoutUpdate(let run, _) = self else { return }
        try DocumentCoder.requireCurrentSchema(run.schemaVersion, of: WorkoutDocument.self)
        try run.validate()
    }
}

/// The phone's request to launch the watch app for a run (the HealthKit `startWatchApp` analog),
/// carried as the payload of the link's launch frame. Best effort: it may arrive before or after the
/// context that carries the run (S1), or not at all.
///
/// JSON, version 1: `{"runID":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","schemaVersion":1}`.
package struct WorkoutLaunchRequest: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// The run the phone just started; the watch starts its workout session for it.
    package var runID: DocumentID
    /// The phone's wall clock when it sent the launch (absent from a phoned before it was added):
    /// the watch sets its clock to the phone's by it before the run's first edit (`WatchNode`).
    package var phoneTime: Timestamp?

    package init(runID: DocumentID, phoneTime: Timestamp? = nil) {
        schemaVersion = Self.currentSchemaVersion
        self.runID = runID
        self.phoneTime = phoneTime
    }

    /// The wire bytes: compact JSON with sorted keys.
    package func encoded() -> [UInt8] { DocumentCoder.encodeCompact(self) }
}
