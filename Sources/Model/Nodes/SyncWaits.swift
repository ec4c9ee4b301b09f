import AdminCommands
import WorkoutModel

/// The `watchctl wait` requests not answered yet. A wait is answered once no edit made on the
/// watch is undelivered — every one has come back in a context from the phone, applied to the
/// cache — and refused at its deadline otherwise. The node calls `settled` after each event, so the
/// answer goes out with the step that cleared the last edit, after that step's writes.
package struct SyncWaits: Sendable {
    private var waiting: [Wait] = []

    private struct Wait: Sendable {
        var request: AdminRequestID
        var since: Timestamp
        var deadline: Timestamp
    }

    package init() {}

    /// How many waits are not answered yet.
    package var count: Int { waiting.count }

    /// A new wait: answered at once when nothing is undelivered, otherwise kept until `settled` or
    /// its deadline.
    mutating func serve(
        _ request: AdminRequestID, milliseconds: Int, undelivered: Int, now: Timestamp
    ) -> [NodeAction] {
        guard undelivered > 0 else { return [Self.synced(request, since: now, now: now)] }
        waiting.append(Wait(request: request, since: now, deadline: now.advanced(by: .milliseconds(milliseconds))))
        let fields = [("undelivered", "\(undelivered)"), ("timeoutMilliseconds", "\(milliseconds)")]
        return [.log(LogLine(.info, "admin", "wait: edits not yet back from the phone", fields))] + armed()
    }

    /// After an event: every wait is answered when nothing is undelivered any more.
    mutating func settled(undelivered: Int, now: Timestamp) -> [NodeAction] {
        guard undelivered == 0, !waiting.isEmpty else { return [] }
        let answered = waiting.map { Self.synced($0.request, since: $0.since, now: now) }
        waiting = []
        return answered + [.cancelTimer(.syncWait)]
    }

    /// The timer fired: the waits whose deadline has come are refused.
    mutating func timerFired(undelivered: Int, now: Timestamp) -> [NodeAction] {
        let due = waiting.filter { $0.deadline <= now }
        waiting.removeAll { $0.deadline <= now }
        let refusals = due.map { wait in
            let waited = Double(wait.since.duration(to: now).wholeMicroseconds) / 1_000_000
            let message =
                "\(undelivered) edit\(undelivered == 1 ? "" : "s") not yet back from the phone after "
                + "\((waited * 10).rounded() / 10) s"
            return [
                NodeAction.log(
                    LogLine(.notice, "admin", "refused admin request", [("command", "wait"), ("reason", message)])),
                .reply(wait.request, AdminOutcome.refused(message).response),
            ]
        }
        return refusals.flatMap { $0 } + armed()
    }

    private func armed() -> [NodeAction] {
        guard let next = waiting.map(\.deadline).min() else { return [.cancelTimer(.syncWait)] }
        return [.armTimer(.syncWait, at: next)]
    }

    private static func synced(_ request: AdminRequestID, since: Timestamp, now: Timestamp) -> NodeAction {
        let waited = Double(since.duration(to: now).wholeMicroseconds) / 1000
        // `AdminOutcome.json(AdminReply.Synced(waitedMilliseconds: waited))`, without `JSONEncoder`
        // (each edit's `wait` in the round trip paid for it).
        let json = #"{"synced":true,"waitedMilliseconds":"# + DocumentJSONWriter.number(waited) + "}"
        return .reply(request, AdminOutcome.output(text: "synced", json: json).response)
    }
}
