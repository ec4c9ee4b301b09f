/// One run of a split: a snapshot of the split's exercises with what the person actually did.
///
/// Stored as `Workouts/<YYYY>/<MM>/<id>.json` (the year and month of `startedAt`, UTC). Every
/// mutation goes through `WorkoutDocument+Mutations.swift`.
///
/// Schema version 2 is a state-based CRDT (`WorkoutDocument+Merge.swift`): the run's skeleton (IDs,
/// names, targets, set counts, `startedAt`) never changes after the start; every editable field is
/// a register with its own hybrid-logical-clock stamp — each set's record, each log's `mark`
/// (skipped / reopened), the pause list, the metrics and the `ending` (when the run was ended) — and
/// `status`, `endedAt`, each log's `resolution`, `currentStateIndex` and `updatedAt` are derived
/// from the registers (`recomputeDerived()`), stored only for readers. Version-1 documents are
/// migrated on read (every register stamped from their `updatedAt`) and written back as version 2
/// on their next write.
package struct WorkoutDocument: VersionedDocument, Identifiable {
    package static let currentSchemaVersion = 2
    package static let oldestReadableSchemaVersion = 1

    package var schemaVersion: Int
    package var id: DocumentID
    package var splitID: DocumentID
    /// The split's name when the run started (a snapshot, like the exercises).
    package var splitName: String
    /// Derived from the logs (seed 001's rule).
    package var status: WorkoutStatus
    /// When the run was minted; decides the file's `<YYYY>/<MM>` and starts the active duration.
    package var startedAt: Timestamp
    /// Derived: present exactly when the run is completed — the `ending` register's time, or (when
    /// the run completed only by merging two copies) the time of its latest log edit.
    package var endedAt: Timestamp?
    package var logs: [ExerciseLog]
    /// Flow position: the index, counting sets across logs in order, of the first unfinished set
    /// (equal to the total set count when every log is resolved). Run screens jump forward to it.
    package var currentStateIndex: Int
    package var pauses: [PauseInterval]
    package var pausesStamp: Stamp
    /// What the watch's workout session recorded when it finished and saved; nil until then.
    package var metrics: SessionMetrics?
    package var metricsStamp: Stamp
    /// The register an edit writes when it ends the run (the time) or reopens it (nil).
    package var ending: Ending
    /// Derived: the time of the run's latest stamp (`version`).
    package var updatedAt: Timestamp

    /// A run minted by `stamp`: every register starts at it.
    package init(
        id: DocumentID, splitID: DocumentID, splitName: String, startedAt: Timestamp, logs: [ExerciseLog],
        stamp: Stamp
    ) {
        schemaVersion = Self.currentSchemaVersion
        self.id = id
        self.splitID = splitID
        self.splitName = splitName
        status = .notStarted
        self.startedAt = startedAt
        endedAt = nil
        self.logs = logs
        currentStateIndex = 0
        pauses = []
        pausesStamp = stamp
        metrics = nil
        metricsStamp = stamp
        ending = Ending(at: nil, stamp: stamp)
        updatedAt = stamp.time
        recomputeDerived()
    }

    /// Whether the run still shows in the active list (not started or in progress).
    package var isActive: Bool { status.isActive }

    /// Whether a pause is open (a completed run is never paused: its open pause ends at `endedAt`).
    package var isPaused: Bool { status != .completed && (pauses.last.map { $0.end == nil } ?? false) }

    /// The total number of sets across every log.
    package var totalSetCount: Int { logs.reduce(0) { $0 + $1.sets.count } }

    /// The largest stamp anywhere in the run: two copies with the same registers have the same version.
    package var version: Stamp {
        var newest = max(pausesStamp, metricsStamp, ending.stamp)
        for log in logs { newest = max(newest, log.version) }
        return newest
    }

    package func validate() throws(DocumentError) {
        let type = "WorkoutDocument"
        guard !logs.isEmpty else { throw .malformed(type: type, field: "logs", reason: "a run has at least one log") }
        for (logIndex, log) in logs.enumerated() {
            guard !log.sets.isEmpty else {
                throw .malformed(type: type, field: "logs[\(logIndex)].sets", reason: "a log has at least one set")
            }
            for (setIndex, set) in log.sets.enumerated() {
                let field = "logs[\(logIndex)].sets[\(setIndex)]"
                if let reps = set.reps, reps < 0 {
                    throw .malformed(type: type, field: "\(field).reps", reason: "must not be negative")
                }
                if let weight = set.weight, !(weight.isFinite && weight >= 0) {
                    throw .malformed(type: type, field: "\(field).weight", reason: "must be finite and non-negative")
                }
            }
        }
    }
}

/// The `ending` register of a run: when an edit ended it, or nil after one reopened it.
package struct Ending: Codable, Equatable, Sendable {
    package var at: Timestamp?
    package var stamp: Stamp

    package init(at: Timestamp?, stamp: Stamp) {
        self.at = at
        self.stamp = stamp
    }
}

/// A run's status, derived from its logs by `WorkoutDocument.recomputeStatus(at:)` (seed 001):
///
/// - `notStarted` → `inProgress` when any log starts;
/// - `inProgress` → `completed` when every log is resolved (end stamped);
/// - `inProgress` → `notStarted` when every log is back to not started;
/// - `completed` → `inProgress` when a resolved log is reopened (end cleared).
package enum WorkoutStatus: String, Codable, Sendable, CaseIterable {
    case notStarted
    case inProgress
    case completed

    /// Active runs ride in every push uncapped and can be driven on either device.
    package var isActive: Bool { self != .completed }
}

/// One exercise of a run: the snapshot of its targets, one record per set, and its resolution.
package struct ExerciseLog: Codable, Equatable, Sendable, Identifiable {
    package var id: DocumentID
    package var exerciseName: String
    package var equipment: String
    package var targetReps: Int
    package var targetWeight: Double
    package var sets: [SetRecord]
    /// Derived from `sets` and `mark` (`WorkoutDocument.recomputeDerived()`).
    package var resolution: LogResolution
    /// The person's explicit decision on the log (skipped or reopened), a register stamped `markStamp`.
    package var mark: LogMark?
    package var markStamp: Stamp

    package init(
        id: DocumentID, exerciseName: String, equipment: String, targetReps: Int, targetWeight: Double,
        setCount: Int, stamp: Stamp
    ) {
        self.id = id
        self.exerciseName = exerciseName
        self.equipment = equipment
        self.targetReps = targetReps
        self.targetWeight = targetWeight
        sets = Array(repeating: SetRecord(stamp: stamp), count: setCount)
        resolution = .notStarted
        mark = nil
        markStamp = stamp
    }

    /// A log is resolved when completed or skipped.
    package var isResolved: Bool { resolution == .completed || resolution == .skipped }

    /// The number of sets marked done.
    package var completedSetCount: Int { sets.filter(\.isDone).count }

    /// The largest stamp of the log's registers.
    package var version: Stamp { sets.reduce(markStamp) { max($0, $1.stamp) } }
}

/// What a person decided about a log as a whole.
package enum LogMark: String, Codable, Sendable, CaseIterable {
    /// Skipped (its done sets kept); "end keeping progress" skips every unresolved log.
    case skipped
    /// Reopened after it was resolved: in progress until a later set edit resolves it again.
    case reopened
}

/// Where a log stands. `completed` and `skipped` are the resolved states.
package enum LogResolution: String, Codable, Sendable, CaseIterable {
    case notStarted
    case inProgress
    case completed
    case skipped
}

/// What was done in one set; all nil until the set is completed. The whole record is one register:
/// the edit with the later `stamp` (complete, redo or undo) wins.
package struct SetRecord: Codable, Equatable, Sendable {
    /// The heaviest weight an edit may enter, in either unit: above any lift, and low enough that a
    /// session's volume (reps × weight, summed) stays a finite number JSON can carry. Documents
    /// are read with any finite weight, so one written before the bound still loads.
    package static let maximumWeight: Double = 100_000

    /// Whether an edit may enter `weight` for a set or a target: a number from 0 to `maximumWeight`.
    package static func isValid(weight: Double) -> Bool { (0...maximumWeight).contains(weight) }

    /// Why `isValid(weight:)` refused, for every message that names the rule.
    package static let weightRule = "must be a number from 0 to 100000"

    package var reps: Int?
    package var weight: Double?
    package var completedAt: Timestamp?
    package var stamp: Stamp

    package init(reps: Int? = nil, weight: Double? = nil, completedAt: Timestamp? = nil, stamp: Stamp) {
        self.reps = reps
        self.weight = weight
        self.completedAt = completedAt
        self.stamp = stamp
    }

    package var isDone: Bool { completedAt != nil }
}

/// A pause in a run; `end` is nil while the pause is open. Paused time does not count as active.
package struct PauseInterval: Codable, Equatable, Sendable {
    package var start: Timestamp
    package var end: Timestamp?

    package init(start: Timestamp, end: Timestamp? = nil) {
        self.start = start
        self.end = end
    }
}

/// What the watch's workout session records when it finishes and saves.
package struct SessionMetrics: Codable, Equatable, Sendable {
    /// Seconds from the run's start to its end, paused time excluded.
    package var activeSeconds: Double
    package var setsCompleted: Int
    /// Sum of reps × weight over completed sets, in the settings' weight unit.
    package var totalVolume: Double
    package var recordedAt: Timestamp

    package init(activeSeconds: Double, setsCompleted: Int, totalVolume: Double, recordedAt: Timestamp) {
        self.activeSeconds = activeSeconds
        self.setsCompleted = setsCompleted
        self.totalVolume = totalVolume
        self.recordedAt = recordedAt
    }
}
