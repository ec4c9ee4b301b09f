import WorkoutModel

/// The outbound side of the mirror: at most one staged frame per run, and its retry schedule.
///
/// - Staging replaces: a newer frame, or the terminal `liveEnded`, takes the run's slot, so whatever is
///   re-sent is never stale. A fresh frame starts with a fresh retry budget.
/// - A send that fails while the peer is still reachable is retried after 250 ms, 500 ms, 1 s, 2 s and
///   4 s (`retryDelay(afterFailure:)`): at most `maximumRetries` retries per staged frame, then it gives
///   up and durable repair is the safety net. The frame stays staged, so a later reachability edge still
///   re-sends it; edge re-sends are not retries and do not count against the budget.
/// - A delivery report clears the slot only if it is still the same frame (a newer one may have replaced
///   it while the older was in flight).
package struct LiveStaging: Equatable, Sendable {
    /// Retries allowed for one staged frame after sends that failed while reachable.
    package static let maximumRetries = 5
    /// The delay before the first retry; each further retry doubles it.
    package static let firstRetryDelay: Duration = .milliseconds(250)

    /// One run's staged frame.
    package struct Entry: Equatable, Sendable {
        package var message: LiveMessage
        /// Sends handed to the shell so far (the next send's `attempt` is `sends + 1`).
        package var sends: Int
        /// Retries scheduled so far after failures while reachable (at most `maximumRetries`).
        package var retriesUsed: Int
        /// When the scheduled retry is due; nil when none is scheduled.
        package var retryAt: Timestamp?

        package init(message: LiveMessage) {
            self.message = message
            sends = 0
            retriesUsed = 0
            retryAt = nil
        }

        /// Whether the retry budget is spent.
        package var retriesExhausted: Bool { retriesUsed >= LiveStaging.maximumRetries }
    }

    /// Staged frames by run.
    package private(set) var entries: [DocumentID: Entry] = [:]

    package init() {}

    /// The delay before retry number `failure` (1-based): 250 ms × 2^(failure − 1).
    package static func retryDelay(afterFailure failure: Int) -> Duration {
        precondition(failure >= 1, "retries are numbered from 1")
        return firstRetryDelay * (1 << (failure - 1))
    }

    /// The staged frame for `runID`, if any.
    package subscript(runID: DocumentID) -> Entry? { entries[runID] }

    /// Runs with a staged frame, in ID order (the order re-sends go out).
    package var runIDs: [DocumentID] { entries.keys.sorted() }

    /// The earliest scheduled retry.
    package var nextRetry: Timestamp? { entries.values.compactMap(\.retryAt).min() }

    /// Stages `message` for its run, replacing whatever was staged.
    package mutating func stage(_ message: LiveMessage) {
        entries[message.runID] = Entry(message: message)
    }

    /// Drops the run's staged frame; returns it.
    @discardableResult
    package mutating func drop(_ runID: DocumentID) -> Entry? {
        entries.removeValue(forKey: runID)
    }

    /// Records a send of the run's staged frame and returns its attempt number (1-based); clears any
    /// scheduled retry, which this send supersedes.
    package mutating func recordSend(_ runID: DocumentID) -> Int {
        guard var entry = entries[runID] else { preconditionFailure("recordSend for run \(runID) with nothing staged") }
        entry.sends += 1
        entry.retryAt = nil
        entries[runID] = entry
        return entry.sends
    }

    /// Whether the run's staged frame is the one with `version`.
    package func isStaged(_ runID: DocumentID, version: Int) -> Bool {
        entries[runID]?.message.version == version
    }

    /// After a failure while reachable: schedules the next retry at `now + retryDelay`, or returns nil
    /// when the budget is spent (the frame stays staged for a reachability edge).
    package mutating func scheduleRetry(_ runID: DocumentID, now: Timestamp) -> Timestamp? {
        guard var entry = entries[runID], !entry.retriesExhausted else { return nil }
        entry.retriesUsed += 1
        let due = now.advanced(by: Self.retryDelay(afterFailure: entry.retriesUsed))
        entry.retryAt = due
        entries[runID] = entry
        return due
    }

    /// Forgets every scheduled retry (the peer became unreachable; the reachability edge re-sends).
    package mutating func cancelRetries() {
        for runID in entries.keys { entries[runID]?.retryAt = nil }
    }

    /// Runs whose retry is due at `now`, in ID order.
    package func dueRetries(at now: Timestamp) -> [DocumentID] {
        runIDs.filter { entries[$0]?.retryAt.map { $0 <= now } ?? false }
    }
}
