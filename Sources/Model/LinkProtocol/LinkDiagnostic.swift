/// What the link engine reports for the log. Typed, so tests assert what happened rather than its
/// wording; `description` is the line the shell logs.
package enum LinkDiagnostic: Equatable, Sendable, CustomStringConvertible {
    /// The watch's dial failed (logged once per outage).
    case dialFailed(reason: String)
    case linkEstablished(ConnectionID, peerRole: LinkRole, peer: InstanceID)
    case linkLost(reason: String)
    /// The answer to a message that had already timed out or failed.
    case lateAnswerDropped(messageID: UInt64)
    case unknownTransferCancelIgnored(sequence: UInt64)
    case unknownFileCancelIgnored(sequence: UInt64)
    /// A transfer was cancelled after it went on the wire (the receiver may keep it).
    case transferCancelledAfterSending(sequence: UInt64)
    /// A transfer at or below its queue's mark with contents the mark never applied: its sender
    /// went back (a state directory restored from an older backup), so it is applied, not dropped.
    case senderWentBack(TransferKey, highest: UInt64)
    /// The watch acknowledged a generation of this phone's context past every one the phone knows:
    /// its state went back (restored from an older backup); the slot goes again, numbered past it.
    case phoneWentBack(watchHolds: UInt64, newest: UInt64)
    /// The watch received the generation it holds with other contents: the phone's state went back
    /// to it (restored from an older backup); taken as the phone's newest.
    case contextGenerationReused(UInt64)
    /// `reason` is the watch state that refuses sends, nil when the watch is not linked.
    case launchDropped(reason: LinkError?)
    /// A complication transfer asked of a side without a complication outbox (the watch): dropped.
    case noComplicationOutbox
    /// A file transfer asked of an engine without a file outbox: dropped.
    case noFileOutbox

    package var description: String {
        switch self {
        case .dialFailed(let reason): "dial failed: \(reason); retrying with backoff"
        case .linkEstablished(let connection, let role, let peer):
            "link established on \(connection) with \(role) \(peer)"
        case .linkLost(let reason): "link lost: \(reason)"
        case .lateAnswerDropped(let id): "dropped late answer to message \(id)"
        case .unknownTransferCancelIgnored(let sequence): "cancel of unknown transfer \(sequence) ignored"
        case .unknownFileCancelIgnored(let sequence): "cancel of unknown file transfer \(sequence) ignored"
        case .transferCancelledAfterSending(let sequence): "transfer \(sequence) cancelled after it was sent"
        case .senderWentBack(let key, let highest):
            "transfer \(key) is new at or below its queue's mark \(highest): the sender went back (restored from an older backup?); applied"
        case .phoneWentBack(let held, let newest):
            "the watch holds context generation \(held) of this phone, past its newest \(newest): this state went back (restored from an older backup?); the context goes again past it"
        case .contextGenerationReused(let generation):
            "context generation \(generation) came again with other contents: the phone's state went back (restored from an older backup?); taken as its newest"
        case .launchDropped(let reason): "launch dropped: \(reason?.description ?? "the watch is not linked")"
        case .noComplicationOutbox: "complication transfer dropped: this side has no complication outbox"
        case .noFileOutbox: "file transfer dropped: this side has no file outbox"
        }
    }
}

/// Why the engine closes a connection: the words the log shows, and whether the peer failed to
/// prove the pairing key (a wrong key, a forged frame), which the log shows as a warning.
package struct CloseReason: Equatable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    package var description: String
    package var isAuthenticationFailure: Bool

    package init(_ description: String, authenticationFailure: Bool = false) {
        self.description = description
        isAuthenticationFailure = authenticationFailure
    }

    /// A reason with `code`, which may say authentication failed.
    package init(_ description: String, code: LinkErrorCode) {
        self.init(description, authenticationFailure: code == .authenticationFailed)
    }

    package init(stringLiteral value: String) { self.init(value) }

    package init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }
}
