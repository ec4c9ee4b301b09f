import AdminCommands
import WorkoutModel

/// What both nodes hand their shell, beside their own store writes: the link's verbs, logs, journal
/// entries, admin replies, timers, the durable bits of state both keep, and the exit. The shell
/// carries each out as it comes, in order; nothing here is a decision left to it.
package enum NodeAction: Equatable, Sendable {
    case link(LinkCommand)
    case log(LogLine)
    case journal(JournalEntry)
    /// The answer to admin request N (the shell writes it to that request's connection). A response
    /// with `more` is one chunk of it: the shell feeds `.replyTaken` once the client has taken it.
    case reply(AdminRequestID, AdminResponse)
    /// `trace`: the shell reads its journal with the query and replies with what it selects.
    case replyTrace(AdminRequestID, TraceQuery)
    /// One timer per name: arming again replaces it. When it fires the shell feeds `.timerFired`.
    case armTimer(NodeTimer, at: Timestamp)
    case cancelTimer(NodeTimer)
    /// Feed `.turnEnded` once the events the loop has in hand now are handled and no durable write
    /// is in flight (a batch's end): while the disk is busy, what arrives joins the batch, so one
    /// round of fsyncs covers more (group commit).
    case callAtEndOfTurn
    /// Keep `value` in `<state>/live-version` (best effort: a failure is logged, the floor holds).
    case persistLiveVersion(Int)
    /// Keep the edit clock's high-water mark durably (a restart never stamps below it).
    case persistClock(Stamp)
    /// Mark the link's context slot as the last one made, for the next start (`ContextGenerations`):
    /// the stop is clean, every write before this one has landed. Best effort: a failure is logged.
    case markStoppedCleanly
    /// systemd: STOPPING=1.
    case notifyStopping
    /// Stop taking admin requests and (phone) directory changes; close the link gracefully.
    case closeServices
    /// Leave the process with this status, after the actions before it.
    case exit(code: Int32)
}

extension NodeAction {
    /// Whether the shell runs this on its write queue (docs/PROTOCOL.md, "The order of writes"),
    /// as it does every store action of a node.
    package var isDurableWrite: Bool {
        switch self {
        case .persistClock, .persistLiveVersion, .markStoppedCleanly, .link(.keepReceivedFile): true
        default: false
        }
    }

    /// Whether this may go out ahead of the writes before it when it answers a query
    /// (`ShelledNode.isQuery`): it reports, it changes nothing.
    package var answersWithoutWaiting: Bool {
        switch self {
        case .reply, .replyTrace, .log, .journal: true
        default: false
        }
    }
}
