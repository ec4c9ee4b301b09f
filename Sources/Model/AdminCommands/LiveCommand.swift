import ArgumentParsing
import WorkoutModel

/// The `live …` verbs, the same on phonectl and watchctl (see `SharedCommands.live`).
package enum LiveCommand: Codable, Sendable, Equatable {
    /// `exercise` counts from 1; nil means the first unfinished.
    case open(run: DocumentID, exercise: Int?)
    /// `reps`/`weight` apply when the action completes a set; nil means the targets.
    case advance(run: DocumentID, reps: Int?, weight: Double?)
    case close(run: DocumentID)
    case dismiss(run: DocumentID)
    case show

    /// The wire names of the cases, spelt out so an unknown one is answered with the list
    /// (`AdminCommand.verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case open, advance, close, dismiss, show
    }

    static var verbs: [String] { CodingKeys.allCases.map(\.rawValue) }

    init(_ command: ParsedCommand) throws(UsageError) {
        switch command.path {
        case ["live", "open"]:
            self = .open(run: try command.documentID("run"), exercise: try command.optionalInteger("exercise"))
        case ["live", "advance"]:
            self = .advance(
                run: try command.documentID("run"), reps: try command.optionalInteger("reps"),
                weight: try command.optionalDouble("weight"))
        case ["live", "close"]: self = .close(run: try command.documentID("run"))
        case ["live", "dismiss"]: self = .dismiss(run: try command.documentID("run"))
        case ["live", "show"]: self = .show
        default: throw UsageError.unknownCommand(command.path)
        }
    }

    /// `advance`'s reps and weight, held as `complete`'s are.
    func validate() throws(UsageError) {
        guard case .advance(_, let reps, let weight) = self else { return }
        try SetCommand.check(reps: reps, weight: weight)
    }
}

extension WorkoutDocument {
    /// The 1-based `exercise` as a log index; a usage error naming the run's count otherwise.
    package func logIndex(exercise: Int) throws(UsageError) -> Int {
        guard exercise >= 1, exercise <= logs.count else {
            throw UsageError("run \(id) has \(logs.count) exercises; no exercise \(exercise)")
        }
        return exercise - 1
    }

    /// The 1-based `exercise` and `set` as indexes into the run.
    package func setPosition(exercise: Int, set: Int) throws(UsageError) -> (logIndex: Int, setIndex: Int) {
        let logIndex = try logIndex(exercise: exercise)
        guard set >= 1, set <= logs[logIndex].sets.count else {
            throw UsageError("exercise \(logIndex + 1) has \(logs[logIndex].sets.count) sets; no set \(set)")
        }
        return (logIndex, set - 1)
    }
}
