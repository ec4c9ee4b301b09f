/// One run of a split: a snapshot of the split's exercises with what the person actually did.
///
/// Stored as `Workouts/<YYYY>/<MM>/<id>.json` (the year and month of `startedAt`, UTC). Every
/// mutation goes through `WorkoutDocument+Mutations.swift`, which recomputes `status` with the one
/// shared rule (`recomputeStatus(at:)`) and stamps `updatedAt`.
package struct WorkoutDocument: VersionedDocument, Identifiable {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    package var id: DocumentID
    package var splitID: DocumentID
    /// The split's name when the run started (a snapshot, like the exercises).
    package var splitName: String
    package var status: WorkoutStatus
    /// When the run was minted; decides the file's `<YYYY>/<MM>` and starts the active duration.
    package var startedAt: Timestamp
    /// Stamped when every log is resolved; cleared when the run is reopened or reset.
    package var endedAt: Timestamp?
    package var logs: [ExerciseLog]
    /// Flow position: the index, counting sets across logs in order, of the first unfinished set
    /// (equal to the total set count when every log is resolved). Run screens jump forward to it.
    package var currentStateIndex: Int
    package var pauses: [PauseInterval]
    /// What the watch's workout session recorded when it finished and saved; nil until then.
    package var metrics: SessionMetrics?
    package var updatedAt: Timestamp

    package init(
        id: DocumentID, splitID: DocumentID, splitName: String, startedAt: Timestamp, logs: [ExerciseLog],
        updatedAt: Timestamp
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
        metrics = nil
        self.updatedAt = updatedAt
    }

    /// Whether the run still shows in the active list (not started or in progress).
    package var isActive: Bool { status.isActive }

    /// Whether a pause is open.
    package var isPaused: Bool { pauses.last.map { $0.end == nil } ?? false }

    /// The total number of sets across every log.
    package var totalSetCount: Int { logs.reduce(0) { $0 + $1.sets.count } }

    package func validate() throws(DocumentError) {
        let type = "WorkoutDocument"
        guard !logs.isEmpty else { throw .malformed(type: type, field: "logs", reason: "a run has at least one log") }
        guard (status == .completed) == (endedAt != nil) else {
            throw .malformed(type: type, field: "endedAt", reason: "present exactly when status is completed")
        }
        guard (0...totalSetCount).contains(currentStateIndex) else {
            throw .malformed(type: type, field: "currentStateIndex", reason: "outside 0...\(totalSetCount)")
        }
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
    package var resolution: LogResolution

    package init(
        id: DocumentID, exerciseName: String, equipment: String, targetReps: Int, targetWeight: Double,
        setCount: Int
    ) {
        self.id = id
        self.exerciseName = exerciseName
        self.equipment = equipment
        self.targetReps = targetReps
        self.targetWeight = targetWeight
        sets = Array(repeating: SetRecord(), count: setCount)
        resolution = .notStarted
    }

    /// A log is resolved when completed or skipped.
    package var isResolved: Bool { resolution == .completed || resolution == .skipped }

    /// The number of sets marked done.
    package var completedSetCount: Int { sets.filter(\.isDone).count }
}

/// Where a log stands. `completed` and `skipped` are the resolved states.
package enum LogResolution: String, Codable, Sendable, CaseIterable {
    case notStarted
    case inProgress
    case completed
    case skipped
}

/// What was done in one set; all nil until the set is completed.
package struct SetRecord: Codable, Equatable, Sendable {
    package var reps: Int?
    package var weight: Double?
    package var completedAt: Timestamp?

    package init(reps: Int? = nil, weight: Double? = nil, completedAt: Timestamp? = nil) {
        self.reps = reps
        self.weight = weight
        self.completedAt = completedAt
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
