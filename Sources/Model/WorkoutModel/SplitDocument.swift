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

/// The phone's rules for what a split may hold, beyond what its reader checks (`validate`): the same
/// for `split create`/`edit` and for a split file dropped into or edited in the document directory.
extension SplitDocument {
    /// The longest split, exercise or equipment name, in UTF-8 bytes: a label on a watch face.
    package static let maximumNameBytes = 200
    /// The most exercises one split holds: every split rides every push, within half the context.
    package static let maximumExercises = 100

    /// What is wrong with `name` as a split's or an exercise's name ("must not be blank", …), or nil.
    /// Control characters are refused: a name is printed on terminals, where one could move the
    /// cursor or set colours.
    package static func nameProblem(_ name: String, blankAllowed: Bool = false) -> String? {
        if !blankAllowed, !name.contains(where: { !$0.isWhitespace }) { return "must not be blank" }
        if name.utf8.count > maximumNameBytes { return "of \(name.utf8.count) bytes is over \(maximumNameBytes)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not hold control characters (a newline, a tab, an escape)"
        }
        return nil
    }

    /// Why a split of this name and these exercises breaks a rule, or nil: its names, its exercise
    /// count, and the size a run of it can reach (`runSizeProblem`).
    package static func ruleProblem(name: String, exercises: [ExerciseTemplate]) -> String? {
        if let problem = nameProblem(name) { return "the name \(problem)" }
        guard !exercises.isEmpty else { return "a split needs at least one exercise" }
        guard exercises.count <= maximumExercises else {
            return "\(exercises.count) exercises is over \(maximumExercises)"
        }
        for exercise in exercises {
            if let problem = nameProblem(exercise.name) { return "an exercise's name \(problem)" }
            if let problem = nameProblem(exercise.equipment, blankAllowed: true) {
                return "\(exercise.name)'s equipment \(problem)"
            }
        }
        return runSizeProblem(name: name, exercises: exercises)
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
