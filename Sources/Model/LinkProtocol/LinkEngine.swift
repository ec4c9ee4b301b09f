/// The link endpoint's pure engine: one per daemon, alive for the whole process, across connections.
///
/// It owns the handshake of every connection, the heartbeat of the established one, reachability,
/// redial backoff (watch side), and the four channels' state: the context slot (phone) and its
/// receiver mark (watch), messages awaiting a reply, the durable transfer outbox and the receiver's
/// dedup marks. Bytes and facts go in as `Event`s; what to do comes out as `Action`s.
///
/// The shell MUST: perform actions in order; complete every `persist…` action durably (fsync)
/// before performing the next action; remove a transfer from the durable log on `removeTransfers`;
/// deliver `notify` to the app; arm one wake-up for the latest `scheduleWakeUp` (replacing any
/// earlier one) and feed `tick` when it fires; feed `connectionClosed` for every connection it
/// closes or loses, exactly once; on `dial`, try to connect and feed `connectionOpened` or
/// `dialFailed`. Admission checks (`admission(of:bytes:)`) are pure queries the shell asks before
/// persisting a transfer or context.
package struct LinkEngine: Sendable {
    /// Facts fed into the engine.
    package enum Event: Equatable, Sendable {
        /// The daemon started (the watch dials at once).
        case started(now: LinkInstant)
        /// A TCP connection was accepted (phone) or a dial succeeded (watch); `nonce` is 32 fresh CSPRNG bytes.
        /// `source` is the peer's address (host only) for an accepted connection, nil when unknown.
        case connectionOpened(ConnectionID, nonce: [UInt8], now: LinkInstant, source: String? = nil)
        case bytesReceived(ConnectionID, [UInt8], now: LinkInstant)
        case connectionClosed(ConnectionID, now: LinkInstant)
        case dialFailed(reason: String, now: LinkInstant)
        /// The wake-up the engine scheduled fired (early or late ticks are harmless).
        case tick(now: LinkInstant)
        /// The app replaced the application context (phone); admission already checked. An update
        /// byte-equal to the slot is dropped unless `force`, which sends it again under a new generation
        /// (the SyncEngine's re-push that makes the watch re-apply the authoritative state).
        case contextUpdated(payload: [UInt8], force: Bool = false, now: LinkInstant)
        /// The app sends a message with a shell-chosen, unique `id`.
        case messageSent(id: UInt64, payload: [UInt8], wantsReply: Bool, now: LinkInstant)
        /// The app sends raw bytes (`sendMessageData`) with a shell-chosen id unique among its messages.
        case messageDataSent(id: UInt64, payload: [UInt8], wantsReply: Bool, now: LinkInstant)
        /// The app answered a received message.
        case messageAnswered(id: UInt64, MessageAnswer)
        /// The app asks for a transfer (admission already checked): the engine numbers it, in call
        /// order, and asks for its append (`appendTransfer`). `complication`: the phone's
        /// complication outbox.
        case transferRequested(payload: [UInt8], complication: Bool = false)
        /// The appends from `sequence` on failed: none of them is on disk, and their numbers are
        /// issued again.
        case transfersNotPersisted(from: UInt64, complication: Bool = false)
        /// A transfer is on disk in the outbox (the caller has been answered).
        case transferPersisted(sequence: UInt64, payload: [UInt8])
        /// A complication transfer is on disk in the complication outbox (phone).
        case complicationPersisted(sequence: UInt64, payload: [UInt8])
        /// The app asks for a file transfer (admission already checked): the engine numbers it and
        /// asks for its copy into the file outbox (`enqueueFile`).
        case fileRequested(FileSource, metadata: String)
        /// A file is on disk in the file outbox (`transferFile`).
        case filePersisted(OutboundFile)
        case fileCancelRequested(sequence: UInt64)
        /// The partial file is synced through `through` bytes (a `writeInboundChunk` is durable).
        case inboundChunkPersisted(TransferKey, through: UInt64)
        /// The shell checked an arrived file's SHA-256 against the offered one.
        case inboundFileVerified(TransferKey, matches: Bool)
        /// The app took (or left) a received file: the transfer is done.
        case fileProcessed(TransferKey)
        /// The app durably processed received transfers (several: one mark write and their acks).
        case transfersProcessed([TransferKey])
        /// The app could not process these transfers (it cannot decode them): marked as applied, and
        /// answered with a refusal that names `reason`.
        case transfersRefused([TransferKey], reason: String)
        case transferCancelRequested(sequence: UInt64)
        /// The app cancels a complication transfer (`WCSessionUserInfoTransfer.cancel()`).
        case complicationCancelRequested(sequence: UInt64)
        /// The phone asks the watch app to launch (best effort).
        case launchRequested(payload: [UInt8])
        /// The watch app went to the foreground (true, wrist up) or background (false, wrist down).
        case localAppStateChanged(foreground: Bool)
        /// The watch was paired or unpaired, its app installed or removed, its complication put on or
        /// taken off the face (watch only).
        case localWatchStateChanged(WatchState)
    }

    /// What the shell must do, in order.
    package enum Action: Equatable, Sendable {
        /// Write the frame: bare while the connection's handshake runs, sealed with the connection's
        /// `FrameSeal` once `seal` gave one.
        case send(ConnectionID, LinkFrame)
        /// The handshake is over: from here on, seal every frame written to the connection with this
        /// value (it counts them), chunks read for `sendFileChunk` included.
        case seal(ConnectionID, FrameSeal)
        /// Close the connection after flushing what was sent to it (an error frame, say).
        case close(ConnectionID, reason: CloseReason)
        case dial
        case scheduleWakeUp(at: LinkInstant)
        case persistPeer(InstanceID)
        /// Without `flushed`, left to the page cache: a machine crash may lose it (`ContextGenerations`).
        case persistContextSlot(ContextSlot, flushed: Bool)
        case persistReceivedContext(ReceivedContext)
        case persistTransferMark(queue: InstanceID, QueueMark)
        /// Append the transfer to the (complication) outbox under `sequence` — the one the log
        /// expects next — durably; then feed `transferPersisted` (`complicationPersisted`), or
        /// `transfersNotPersisted` from the first append that failed.
        case appendTransfer(sequence: UInt64, payload: [UInt8], complication: Bool)
        /// Delete the transfers from the durable outbox (acknowledged, or cancelled when `cancelled`)
        /// in one durable write.
        case removeTransfers(sequences: [UInt64], cancelled: Bool)
        /// Copy the file into the file outbox under `sequence` (hashing it), durably; then feed
        /// `filePersisted`. A copy that fails leaves the number unused (file sequences may skip).
        case enqueueFile(sequence: UInt64, FileSource, metadata: String)
        /// Read `length` bytes at `offset` of outbound file `key.sequence` and send them as a `fileChunk`.
        case sendFileChunk(ConnectionID, TransferKey, offset: UInt64, length: Int)
        /// Delete the file (bytes and record) from the file outbox.
        case removeOutboundFile(sequence: UInt64)
        /// Create the partial file, or cut an existing one back to `keepingBytes`.
        case prepareInboundFile(TransferKey, keepingBytes: UInt64)
        /// Write the chunk at `offset` of the partial file, then sync it off the loop and feed
        /// `inboundChunkPersisted` (chunks of a file are written and synced in order).
        case writeInboundChunk(TransferKey, offset: UInt64, data: [UInt8])
        /// Compute the partial file's SHA-256 and feed `inboundFileVerified`.
        case verifyInboundFile(TransferKey, digest: [UInt8])
        /// Move the verified file into the inbox, durably.
        case deliverInboundFile(TransferKey)
        /// Delete what exists of the file: partial or inbox copy.
        case discardInboundFile(TransferKey)
        /// Delete acknowledged complication transfers from the complication outbox in one durable write.
        case removeComplications(sequences: [UInt64])
        /// Keep the watch state (the watch's own, or the last the watch reported) durably.
        case persistWatchState(WatchState)
        case notify(LinkNotification)
        case log(LinkDiagnostic)
    }

    /// Which channel an admission check is for.
    package enum Channel: Sendable {
        case context
        case message
        case userInfo
    }

    package let configuration: LinkConfiguration
    package let instance: InstanceID
    let authenticator: any HandshakeAuthenticator

    var knownPeer: InstanceID?
    /// Connections still in their handshake (the phone may have several, even while linked: a
    /// redialling watch's new connection replaces the link once it authenticates).
    var handshaking: [ConnectionID: PendingConnection] = [:]
    /// The link, or the dialling towards one: see `LinkState`.
    var state = LinkState.down(.idle, failures: 0)
    var localAppForeground = true
    /// The watch's own state (watch) or the last state the watch reported (phone).
    var watchState: WatchState
    var contextSlot: ContextSlot?
    var contextGenerations: ContextGenerations
    var receivedContext: ReceivedContext?
    var awaitingReply: [UInt64: AwaitingReply] = [:]
    var outbox: TransferOutbox
    /// The phone's complication outbox, sent ahead of `outbox` (nil on a side without one).
    var complications: TransferOutbox?
    /// The file outbox (nil on a side without one), files arriving, and what the state directory held.
    var files: FileOutbox?
    var inbound: [TransferKey: InboundFile] = [:]
    var restoredPartials: [TransferKey: UInt64]
    var restoredInbox: Set<TransferKey>
    var transferMarks: [InstanceID: QueueMark]
    var deliveredToApp: Set<TransferKey> = []
    /// The digest of each transfer handed to the app and not yet processed (kept over a lost link,
    /// unlike `deliveredToApp`, so the mark records what the app applied).
    var inProcess: [TransferKey: UInt64] = [:]
    var reportedReachable = false
    var scheduledWakeUp: LinkInstant?
    var nextPingToken: UInt64 = 1
    /// The last ping sent and when; its pong's arrival gives a heartbeat round trip.
    var pingInFlight: (token: UInt64, at: LinkInstant)?
    /// The newest heartbeat round trips, oldest first (at most `keptHeartbeatRoundTrips`).
    package internal(set) var heartbeatRoundTrips: [Duration] = []
    static let keptHeartbeatRoundTrips = 128
    var random: SplitMix64

    /// Creates the engine from what the state directory held. `seed` drives redial jitter only.
    package init(
        configuration: LinkConfiguration, instance: InstanceID, authenticator: any HandshakeAuthenticator,
        restored: RestoredLinkState, seed: UInt64
    ) {
        self.configuration = configuration
        self.instance = instance
        self.authenticator = authenticator
        knownPeer = restored.knownPeer
        contextSlot = restored.contextSlot
        contextGenerations = ContextGenerations(restored: restored.contextSlot, current: restored.contextSlotCurrent)
        receivedContext = restored.receivedContext
        transferMarks = restored.transferMarks
        watchState = restored.watchState ?? .installed
        files = restored.fileQueue.map {
            FileOutbox(queue: $0, pending: restored.pendingFiles, nextIssued: restored.nextFileSequence)
        }
        restoredPartials = restored.inboundPartials
        restoredInbox = restored.inboxFiles
        complications = restored.complicationQueue.map {
            TransferOutbox(
                queue: $0, pending: restored.pendingComplications, nextSequence: restored.nextComplicationSequence)
        }
        outbox = TransferOutbox(
            queue: restored.outboxQueue, pending: restored.pendingTransfers, nextSequence: restored.nextOutboxSequence)
        random = SplitMix64(seed: seed)
    }

    // MARK: Dispatch

    /// Handles one event and returns the complete, ordered list of actions.
    package mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        let now: LinkInstant?
        switch event {
        case .started(let at):
            now = at
            if configuration.role == .watch { startDial(into: &actions) }
        case .connectionOpened(let connection, let nonce, let at, let source):
            now = at
            connectionOpened(connection, nonce: nonce, source: source, now: at, into: &actions)
        case .bytesReceived(let connection, let bytes, let at):
            now = at
            bytesReceived(connection, bytes, now: at, into: &actions)
        case .connectionClosed(let connection, let at):
            now = at
            connectionClosed(connection, now: at, into: &actions)
        case .dialFailed(let reason, let at):
            now = at
            dialFailed(reason: reason, now: at, into: &actions)
        case .tick(let at):
            now = at
            tick(now: at, into: &actions)
        case .contextUpdated(let payload, let force, _):
            now = nil
            contextUpdated(payload, force: force, into: &actions)
        case .messageSent(let id, let payload, let wantsReply, let at):
            now = at
            messageSent(id: id, payload: payload, wantsReply: wantsReply, asData: false, now: at, into: &actions)
        case .messageDataSent(let id, let payload, let wantsReply, let at):
            now = at
            messageSent(id: id, payload: payload, wantsReply: wantsReply, asData: true, now: at, into: &actions)
        case .messageAnswered(let id, let answer):
            now = nil
            messageAnswered(id: id, answer, into: &actions)
        case .transferRequested(let payload, let complication):
            now = nil
            transferRequested(payload, complication: complication, into: &actions)
        case .transfersNotPersisted(let sequence, let complication):
            now = nil
            if complication { complications?.notPersisted(from: sequence) } else { outbox.notPersisted(from: sequence) }
        case .transferPersisted(let sequence, let payload):
            now = nil
            transferPersisted(sequence: sequence, payload: payload, into: &actions)
        case .complicationPersisted(let sequence, let payload):
            now = nil
            complications?.append(sequence: sequence, payload: payload)
            sendTransfers(into: &actions)
        case .fileRequested(let source, let metadata):
            now = nil
            fileRequested(source, metadata: metadata, into: &actions)
        case .filePersisted(let file):
            now = nil
            filePersisted(file, into: &actions)
        case .fileCancelRequested(let sequence):
            now = nil
            cancelFile(sequence: sequence, into: &actions)
        case .inboundChunkPersisted(let key, let through):
            now = nil
            inboundChunkPersisted(key, through: through, into: &actions)
        case .inboundFileVerified(let key, let matches):
            now = nil
            inboundFileVerified(key, matches: matches, into: &actions)
        case .fileProcessed(let key):
            now = nil
            fileProcessed(key, into: &actions)
        case .transfersProcessed(let keys):
            now = nil
            transfersProcessed(keys, into: &actions)
        case .transfersRefused(let keys, let reason):
            now = nil
            transfersProcessed(keys, refused: reason, into: &actions)
        case .transferCancelRequested(let sequence):
            now = nil
            cancelTransfer(sequence: sequence, into: &actions)
        case .complicationCancelRequested(let sequence):
            now = nil
            cancelComplication(sequence: sequence, into: &actions)
        case .launchRequested(let payload):
            now = nil
            launchRequested(payload, into: &actions)
        case .localAppStateChanged(let foreground):
            now = nil
            localAppStateChanged(foreground: foreground, into: &actions)
        case .localWatchStateChanged(let state):
            now = nil
            localWatchStateChanged(state, into: &actions)
        }
        reportReachability(into: &actions)
        if let now { rescheduleWakeUp(now: now, into: &actions) }
        return Self.mergingAcknowledgedRemovals(actions)
    }

    /// The acknowledgements one read delivers resolve their transfers in one durable write, at the
    /// first one's place: each is then on disk before it is notified as finished.
    static func mergingAcknowledgedRemovals(_ actions: [Action]) -> [Action] {
        var merged: [Action] = []
        var first: Int?
        for action in actions {
            guard case .removeTransfers(let sequences, cancelled: false) = action else {
                merged.append(action)
                continue
            }
            if let first, case .removeTransfers(let earlier, _) = merged[first] {
                merged[first] = .removeTransfers(sequences: earlier + sequences, cancelled: false)
            } else {
                first = merged.count
                merged.append(action)
            }
        }
        return merged
    }

    /// Emits `reachabilityChanged` exactly when `isReachable` differs from what was last reported.
    mutating func reportReachability(into actions: inout [Action]) {
        let reachable = isReachable
        if reachable != reportedReachable {
            reportedReachable = reachable
            actions.append(.notify(.reachabilityChanged(reachable)))
        }
    }

    /// Arms one wake-up for the earliest deadline any part of the engine is waiting for.
    mutating func rescheduleWakeUp(now: LinkInstant, into actions: inout [Action]) {
        var deadlines: [LinkInstant] = handshaking.values.map(\.deadline)
        if let link {
            deadlines.append(link.nextPingAt)
            deadlines.append(link.lastHeardAt.advanced(by: configuration.peerSilenceLimit))
        }
        deadlines.append(contentsOf: awaitingReply.values.map(\.deadline))
        if case .down(.due(let redialAt), _) = state { deadlines.append(redialAt) }
        let earliest = deadlines.min()
        if let earliest, earliest != scheduledWakeUp {
            scheduledWakeUp = earliest
            actions.append(.scheduleWakeUp(at: max(earliest, now)))
        }
    }
}

/// A small, seeded pseudo-random generator (SplitMix64) for redial jitter: the engine owns it, so a
/// test that fixes the seed replays exactly.
package struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
