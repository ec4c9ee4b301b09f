import WorkoutModel

/// Publishing a written run's file (`publishWorkout`), the one rule both nodes follow. A run's write
/// is durable on its own; the publish only makes its file visible (docs/PROTOCOL.md, "On disk"). So
/// what goes out after the write (the watch's message, the phone's push) does not wait for it, and
/// a reply does: a person who has an answer finds the file as answered.
extension ShelledNode {
    /// `actions` with a publish for each run `written` names (once per run, the last write's), before
    /// the first reply or message answer after the first write, or at the end.
    static func publishingWrites(
        _ actions: [Action], written: (Action) -> (run: DocumentID, publish: Action)?
    ) -> [Action] {
        var publishes: [(run: DocumentID, publish: Action)] = []
        var firstWrite: Int?
        for (index, action) in actions.enumerated() {
            guard let write = written(action) else { continue }
            firstWrite = firstWrite ?? index
            publishes.removeAll { $0.run == write.run }
            publishes.append(write)
        }
        guard let firstWrite else { return actions }
        let reply = actions[firstWrite...].firstIndex { action in
            switch nodeAction(action) {
            case .reply, .replyTrace, .link(.answerMessage): true
            default: false
            }
        }
        var result = actions
        result.insert(contentsOf: publishes.map(\.publish), at: reply ?? actions.endIndex)
        return result
    }
}

extension PhoneNode {
    /// `actions` with each run `writeWorkout` wrote published, at the folder of its last write.
    package static func publishingWrites(_ actions: [Action]) -> [Action] {
        publishingWrites(actions) { action in
            guard case .store(.writeWorkout(let run)) = action else { return nil }
            return (run.id, .store(.publishWorkout(run.id, startedAt: run.startedAt)))
        }
    }
}

extension WatchNode {
    /// `actions` with each run `persistWorkout` wrote published.
    package static func publishingWrites(_ actions: [Action]) -> [Action] {
        publishingWrites(actions) { action in
            guard case .store(.persistWorkout(let run)) = action else { return nil }
            return (run.id, .store(.publishWorkout(run.id)))
        }
    }
}
