/// A routine the person plans on the phone: a named, ordered list of exercises with their targets.
///
/// Stored as `Splits/<id>.json`. Starting a run copies the exercises into the run (a snapshot), so
/// editing a split never rewrites a run made from it.
package struct SplitDocument: VersionedDocument, Identifiable {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    package var id: DocumentID
    package var name: String
    package var exercises: [ExerciseTemplate]
    package var updatedAt: Timestamp

    package init(id: DocumentID, name: String, exercises: [ExerciseTemplate], updatedAt: Timestamp) {
        schemaVersion = Self.currentSchemaVersion
        self.id = id
        self.name = name
        self.exercises = exercises
        self.updatedAt = updatedAt
    }

    package func validate() throws(DocumentError) {
        for (index, exercise) in exercises.enumerated() {
            try exercise.validate(field: "exercises[\(index)]", type: "SplitDocument")
        }
    }
}

/// One exercise in a split: what to do and the targets for each set.
package struct ExerciseTemplate: Codable, Equatable, Sendable {
    package var name: String
    package var equipment: String
    package var targetSets: Int
    package var targetReps: Int
    /// Target weight per rep in the settings' weight unit; 0 for body weight.
    package var targetWeight: Double

    package init(name: String, equipment: String, targetSets: Int, targetReps: Int, targetWeight: Double) {
        self.name = name
        self.equipment = equipment
        self.targetSets = targetSets
        self.targetReps = targetReps
        self.targetWeight = targetWeight
    }

    func validate(field: String, type: String) throws(DocumentError) {
        guard (1...100).contains(targetSets) else {
            throw .malformed(type: type, field: "\(field).targetSets", reason: "must be 1...100, got \(targetSets)")
        }
        guard targetReps >= 0 else {
            throw .malformed(type: type, field: "\(field).targetReps", reason: "must not be negative")
        }
        guard targetWeight.isFinite, targetWeight >= 0 else {
            throw .malformed(
                type: type, field: "\(field).targetWeight", reason: "must be a finite, non-negative number")
        }
    }
}
