import ArgumentParsing
import WorkoutModel

/// The set and exercise verbs both CLIs share (`complete`, `undo`, `skip`, `reopen`): positions
/// count from 1 and are checked by the daemon against the run.
package enum SetCommand: Codable, Sendable, Equatable {
    /// nil reps/weight mean the targets.
    case complete(run: DocumentID, exercise: Int, set: Int, reps: Int?, weight: Double?)
    case undo(run: DocumentID, exercise: Int, set: Int)
    case skip(run: DocumentID, exercise: Int)
    case reopen(run: DocumentID, exercise: Int)

    /// The wire names of the cases, spelt out so an unknown one is answered with the list
    /// (`AdminCommand.verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case complete, undo, skip, reopen
    }

    static var verbs: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// The command for one of the four paths.
    init(_ command: ParsedCommand) throws(UsageError) {
        let run = try command.documentID("run")
        let exercise = try command.integer("exercise")
        switch command.path {
        case ["complete"]:
            self = .complete(
                run: run, exercise: exercise, set: try command.integer("set"),
                reps: try command.optionalInteger("reps"),
                weight: try command.optionalDouble("weight"))
        case ["undo"]: self = .undo(run: run, exercise: exercise, set: try command.integer("set"))
        case ["skip"]: self = .skip(run: run, exercise: exercise)
        case ["reopen"]: self = .reopen(run: run, exercise: exercise)
        default: throw UsageError.unknownCommand(command.path)
        }
    }

    /// What the CLI can tell without the run: positions from 1, reps not negative, a weight an edit
    /// may enter. (Whether the run has that exercise or set only the daemon knows: exit 1.)
    func validate() throws(UsageError) {
        switch self {
        case .complete(_, let exercise, let set, let reps, let weight):
            try Self.check(exercise: exercise, set: set)
            try Self.check(reps: reps, weight: weight)
        case .undo(_, let exercise, let set):
            try Self.check(exercise: exercise, set: set)
        case .skip(_, let exercise), .reopen(_, let exercise):
            try Self.check(exercise: exercise, set: nil)
        }
    }

    private static func check(exercise: Int, set: Int?) throws(UsageError) {
        guard exercise >= 1 else { throw UsageError("EXERCISE counts from 1, got \(exercise)") }
        if let set, set < 1 { throw UsageError("SET counts from 1, got \(set)") }
    }

    /// `--reps` and `--weight` as an edit may enter them (`complete`, `live advance`).
    static func check(reps: Int?, weight: Double?) throws(UsageError) {
        if let reps, reps < 0 { throw UsageError("--reps must not be negative, got \(reps)") }
        if let weight, !SetRecord.isValid(weight: weight) { throw UsageError("--weight \(SetRecord.weightRule)") }
    }
}
