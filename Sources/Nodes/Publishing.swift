import WorkoutModel

extension PhoneNode {
    /// `actions` with each written run's file published (`publishWorkout`, once per run, at the
    /// folder of its last write) before the first reply or message answer after the first write,
    /// or at the end. A write is durable on its own; the publish only makes its file visible, so
    /// what goes out after the write (the push) does not wait for it, and a reply does: a person
    /// who has an answer finds the file as answered.
    package static func publishingWrites(_ actions: [Action]) -> [Action] {
        var written: [(DocumentID, Timestamp)] = []
        var firstWrite: Int?
        for (index, action) in actions.enumerated() {
            guard case .store(.writeWorkout(let run)) = action else { continue }
            firstWrite = firstWrite ?? index
            written.removeAll { $0.0 == run.id }
            written.append((run.id, run.startedAt))
        }
        guard let firstWrite else { return actions }
        let publishes = written.map { Action.store(.publishWorkout($0.0, startedAt: $0.1)) }
        var result = actions
        let reply = actions[firstWrite...].firstIndex { action in
            switch nodeAction(action) {
            case .reply, .replyTrace, .link(.answerMessage): true
            default: false
            }
        }
        result.insert(contentsOf: publishes, at: reply ?? actions.endIndex)
        return result
    }
}
