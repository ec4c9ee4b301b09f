/// Identifies one TCP connection for the lifetime of the process; chosen by the shell.
package struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    package var rawValue: Int
    package init(_ rawValue: Int) { self.rawValue = rawValue }
    package var description: String { "#\(rawValue)" }
}

/// Names one durable transfer: the sender's queue ID and the transfer's sequence in that queue.
package struct TransferKey: Hashable, Sendable, CustomStringConvertible {
    package var queue: InstanceID
    package var sequence: UInt64
    package init(queue: InstanceID, sequence: UInt64) {
        self.queue = queue
        self.sequence = sequence
    }
    package var description: String { "\(queue)/\(sequence)" }
}

/// The phone's context slot: the latest complete state, its generation (only ever grows) and the
/// highest generation the watch acknowledged. The shell persists it atomically on every change.
package struct ContextSlot: Equatable, Sendable {
    package var generation: UInt64
    package var payload: [UInt8]
    package var acknowledgedGeneration: UInt64

    package init(generation: UInt64, payload: [UInt8], acknowledgedGeneration: UInt64) {
        self.generation = generation
        self.payload = payload
        self.acknowledgedGeneration = acknowledgedGeneration
    }
}

/// The watch's last received context: which phone instance sent it, its generation and the payload.
/// Persisted atomically before the app sees it; it survives the watch's restart.
package struct ReceivedContext: Equatable, Sendable {
    package var sender: InstanceID
    package var generation: UInt64
    package var payload: [UInt8]

    package init(sender: InstanceID, generation: UInt64, payload: [UInt8]) {
        self.sender = sender
        self.generation = generation
        self.payload = payload
    }
}

/// What a daemon recovered from its state directory at start-up, handed to the session once.
package struct RestoredLinkState: Equatable, Sendable {
    /// The paired peer's instance ID from the last completed handshake; non-nil means activated.
    package var knownPeer: InstanceID?
    package var contextSlot: ContextSlot?
    package var receivedContext: ReceivedContext?
    /// The receiver's dedup marks, per sender queue.
    package var transferMarks: [InstanceID: QueueMark]
    /// The sender's outbox: its queue ID and the transfers not yet acknowledged, in order.
    package var outboxQueue: InstanceID
    package var pendingTransfers: [(sequence: UInt64, payload: [UInt8])]
    /// The sequence the outbox will give its next transfer (transfers persisted concurrently are
    /// reported out of order; the engine puts them back in sequence before sending).
    package var nextOutboxSequence: UInt64
    /// The watch's pairing, app and complication state: the watch's own (watch side) or the last one
    /// the watch reported (phone side); nil when never set, which reads as `WatchState.installed`.
    package var watchState: WatchState?
    /// The phone's complication outbox (`transferCurrentComplicationUserInfo`): its own durable queue,
    /// so its transfers can go ahead of ordinary userInfo without breaking the order the receiver
    /// relies on within each queue. Nil: this side has none.
    package var complicationQueue: InstanceID?
    package var pendingComplications: [(sequence: UInt64, payload: [UInt8])]
    package var nextComplicationSequence: UInt64
    /// The file outbox (`transferFile`): its queue and the files not yet done, in order. Nil: none.
    package var fileQueue: InstanceID?
    package var pendingFiles: [OutboundFile]
    /// The sequence the next queued file gets (past every one ever given, done ones included).
    package var nextFileSequence: UInt64
    /// Files arriving: the bytes each partial holds on disk, and the whole, verified files waiting in
    /// the inbox for the app (handed to it again when the sender offers them again).
    package var inboundPartials: [TransferKey: UInt64]
    package var inboxFiles: Set<TransferKey>
    /// The context slot is the last one the phone made (it stopped cleanly after its writes landed);
    /// false when a crash may have lost newer ones (`ContextGenerations`).
    package var contextSlotCurrent: Bool

    package init(
        knownPeer: InstanceID? = nil, contextSlot: ContextSlot? = nil, receivedContext: ReceivedContext? = nil,
        transferMarks: [InstanceID: QueueMark] = [:], outboxQueue: InstanceID,
        pendingTransfers: [(sequence: UInt64, payload: [UInt8])] = [], nextOutboxSequence: UInt64? = nil,
        watchState: WatchState? = nil, complicationQueue: InstanceID? = nil,
        pendingComplications: [(sequence: UInt64, payload: [UInt8])] = [], nextComplicationSequence: UInt64? = nil,
        fileQueue: InstanceID? = nil, pendingFiles: [OutboundFile] = [], nextFileSequence: UInt64? = nil,
        inboundPartials: [TransferKey: UInt64] = [:], inboxFiles: Set<TransferKey> = [],
        contextSlotCurrent: Bool = false
    ) {
        self.contextSlotCurrent = contextSlotCurrent
        self.fileQueue = fileQueue
        self.pendingFiles = pendingFiles
        self.nextFileSequence = nextFileSequence ?? ((pendingFiles.map(\.sequence).max() ?? 0) + 1)
        self.inboundPartials = inboundPartials
        self.inboxFiles = inboxFiles
        self.watchState = watchState
        self.complicationQueue = complicationQueue
        self.pendingComplications = pendingComplications
        self.nextComplicationSequence = nextComplicationSequence ?? ((pendingComplications.last?.sequence ?? 0) + 1)
        self.knownPeer = knownPeer
        self.contextSlot = contextSlot
        self.receivedContext = receivedContext
        self.transferMarks = transferMarks
        self.outboxQueue = outboxQueue
        self.pendingTransfers = pendingTransfers
        self.nextOutboxSequence = nextOutboxSequence ?? ((pendingTransfers.last?.sequence ?? 0) + 1)
    }

    package static func == (lhs: RestoredLinkState, rhs: RestoredLinkState) -> Bool {
        lhs.knownPeer == rhs.knownPeer && lhs.contextSlot == rhs.contextSlot
            && lhs.contextSlotCurrent == rhs.contextSlotCurrent
            && lhs.receivedContext == rhs.receivedContext && lhs.transferMarks == rhs.transferMarks
            && lhs.outboxQueue == rhs.outboxQueue && lhs.nextOutboxSequence == rhs.nextOutboxSequence
            && lhs.watchState == rhs.watchState && lhs.complicationQueue == rhs.complicationQueue
            && lhs.nextComplicationSequence == rhs.nextComplicationSequence
            && lhs.pendingComplications.map(\.sequence) == rhs.pendingComplications.map(\.sequence)
            && lhs.pendingComplications.map(\.payload) == rhs.pendingComplications.map(\.payload)
            && lhs.fileQueue == rhs.fileQueue && lhs.pendingFiles == rhs.pendingFiles
            && lhs.nextFileSequence == rhs.nextFileSequence
            && lhs.inboundPartials == rhs.inboundPartials && lhs.inboxFiles == rhs.inboxFiles
            && lhs.pendingTransfers.map(\.sequence) == rhs.pendingTransfers.map(\.sequence)
            && lhs.pendingTransfers.map(\.payload) == rhs.pendingTransfers.map(\.payload)
    }
}

/// How the app answered a message it received.
package enum MessageAnswer: Equatable, Sendable {
    /// Reply with a payload (the sender asked for one).
    case reply([UInt8])
    /// Handled; no reply payload.
    case handled
    /// The app could not handle the message: the sender gets the error named by `code`
    /// (`deliveryFailed`: no handler; `payloadUnsupportedTypes`: the payload does not decode).
    case failed(MessageFailureCode, reason: String)
}

/// How a sent message ended: exactly one of these per send.
package enum MessageOutcome: Equatable, Sendable {
    case replied([UInt8])
    case delivered
    case failed(LinkError)
}

/// What the session tells the app (the WCSessionDelegate analog).
package enum LinkNotification: Equatable, Sendable {
    /// The first handshake with the paired peer completed; sends are now possible.
    case activated(peer: InstanceID)
    /// `isReachable` changed; fires exactly once per real change.
    case reachabilityChanged(Bool)
    /// The watch app moved to the foreground (true) or background (false); seen by the phone.
    case peerAppStateChanged(foreground: Bool)
    /// The watch reported another pairing, app or complication state (`sessionWatchStateDidChange`);
    /// seen by the phone, already persisted.
    case watchStateChanged(WatchState)
    /// A new application context arrived and is on disk.
    case contextReceived(ReceivedContext)
    /// The app's context update is the slot's generation `generation` and on disk (the generation
    /// it already had when the payload was unchanged). Phone only.
    case contextQueued(generation: UInt64)
    /// The app's context update was refused (`payloadTooLarge`, `sessionNotActivated`); the slot
    /// is unchanged. `updateApplicationContext` throws this instead.
    case contextRefused(LinkError)
    /// The watch acknowledged this context generation.
    case contextAcknowledged(generation: UInt64)
    /// A message arrived; answer it with `Event.messageAnswered`.
    case messageReceived(id: UInt64, payload: [UInt8], wantsReply: Bool)
    /// Raw bytes arrived (`didReceiveMessageData`); answer with `Event.messageAnswered` (a reply is
    /// raw bytes too).
    case messageDataReceived(id: UInt64, payload: [UInt8], wantsReply: Bool)
    /// A message this side sent ended.
    case messageCompleted(id: UInt64, MessageOutcome)
    /// A transfer the app cancelled left the outbox (`session(_:didFinish:error:)` with
    /// `transferCancelled`): its payload, and whether it had been put on the wire (the peer may then
    /// have it, and keeps it).
    case transferCancelled(sequence: UInt64, payload: [UInt8], wasSent: Bool)
    /// A cancel of a transfer that is not outstanding (acknowledged already, or never queued).
    case transferCancelRefused(sequence: UInt64, LinkError)
    /// A cancel of complication transfer `sequence` ended: it left the complication outbox (whether
    /// it had been sent: the watch may then have it, and keeps it), or it was not outstanding.
    case complicationCancelEnded(sequence: UInt64, Result<Bool, LinkError>)
    /// A transfer arrived; process it durably, then send `Event.transfersProcessed`.
    case userInfoReceived(TransferKey, payload: [UInt8])
    /// The peer's app could not process this outbound transfer (`didFinish` with an error,
    /// `payloadUnsupportedTypes`): it left the outbox, failed.
    case transferFailed(sequence: UInt64, complication: Bool, payload: [UInt8], LinkError)
    /// The peer durably processed this outbound transfer (didFinish), which carried `payload`.
    case transferFinished(sequence: UInt64, payload: [UInt8])
    /// The watch durably processed this complication transfer (didFinish).
    case complicationFinished(sequence: UInt64)
    /// A file arrived whole, its digest matched, and it is in the inbox: take it, then send
    /// `Event.fileProcessed` (what is left in the inbox then is deleted).
    case fileReceived(ReceivedFile)
    /// A file this side sent ended (`didFinish`): delivered (nil) or why not.
    case fileFinished(sequence: UInt64, LinkError?)
    /// The phone asked the watch app to launch (HealthKit startWatchApp analog).
    case launchReceived(payload: [UInt8])
    /// A launch request was dropped because the watch is not linked (never queued, never retried).
    case launchDropped
    /// A connection authenticated and became the link.
    case linkEstablished(peer: InstanceID)
    /// The link went down.
    case linkLost(reason: String)
}
