import LinkProtocol

/// What the shell reports back about the actions it carried out (and `LinkedNode` about the link
/// verbs it handed to the engine: a transfer not queued, a complication or file queued or not, a
/// file cancel's outcome).
package enum ShellReport: Sendable {
    case timerFired(NodeTimer)
    case turnEnded
    case transferNotQueued([UInt8], reason: String)
    case durableWriteFailed(reason: String)
    /// A `.transferComplication` is on disk under this sequence, or why the link refused it.
    case complicationQueued(AdminRequestID, asCurrent: Bool, Result<UInt64, ReadFailure>)
    /// A `.transferFile` is in the file outbox, or why it is not.
    case fileQueued(AdminRequestID, Result<OutboundFile, ReadFailure>)
    /// A `.cancelFile` ended: nil when cancelled, else why not.
    case fileCancelEnded(AdminRequestID, sequence: UInt64, ReadFailure?)
    /// The client of admin request N has taken the reply's last chunk (little is left queued for it),
    /// or has gone (`clientGone`: the rest of the reply is not wanted).
    case replyTaken(AdminRequestID, clientGone: Bool)
}
