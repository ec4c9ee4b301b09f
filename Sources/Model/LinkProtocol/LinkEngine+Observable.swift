/// What the engine shows its shell and the app: activation, reachability, the slots and outboxes,
/// and whether a send would be admitted now.
extension LinkEngine {
    /// WCSession.activationState == .activated: a handshake with the paired peer has completed, now or
    /// in an earlier run of this state directory.
    package var isActivated: Bool { knownPeer != nil }

    /// Connected, authenticated and heartbeats fresh; phone → watch also needs the watch app in the
    /// foreground (the watch always reaches the phone while linked).
    package var isReachable: Bool {
        guard let link else { return false }
        return configuration.role == .watch || (link.peerAppForeground && watchState.sendRefusal == nil)
    }

    /// The watch's pairing, app and complication state as this side knows it.
    package var currentWatchState: WatchState { watchState }

    /// Received items handed to the app and not yet processed (`hasContentPending`).
    package var hasContentPending: Bool {
        !deliveredToApp.isEmpty || inbound.values.contains { $0.stage == .delivered }
    }

    /// Whether an authenticated connection is up (context and transfers flow whatever the app state).
    package var isLinked: Bool { link != nil }

    /// The peer's instance ID, once known.
    package var peerInstance: InstanceID? { link?.peer ?? knownPeer }

    /// The watch app's state as this side knows it (the phone learns it from the watch).
    package var watchAppForeground: Bool {
        configuration.role == .watch ? localAppForeground : (link?.peerAppForeground ?? false)
    }

    package var currentContextSlot: ContextSlot? { contextSlot }
    package var lastReceivedContext: ReceivedContext? { receivedContext }
    /// The receiver's mark of `queue` (`QueueMark`), nil when nothing from it was applied.
    package func transferMark(of queue: InstanceID) -> QueueMark? { transferMarks[queue] }
    package var outstandingTransfers: ArraySlice<OutboundTransfer> { outbox.pending }
    /// The complication transfers not yet acknowledged, oldest first (the last is the current one).
    package var outstandingComplications: ArraySlice<OutboundTransfer> { complications?.pending ?? [] }
    /// `outstandingFileTransfers`: the files not yet done, oldest first, with the bytes acknowledged.
    package var outstandingFiles: [OutboundFile] { files?.pending ?? [] }
    /// The file outbox's queue, when this side has one.
    package var fileQueue: InstanceID? { files?.queue }
    package var outboxQueue: InstanceID { outbox.queue }
    package var handshakingConnectionCount: Int { handshaking.count }

    /// Why a send on `channel` of `bytes` bytes would be refused now, or nil if it may proceed.
    package func admission(of channel: Channel, bytes: Int) -> LinkError? {
        guard isActivated else { return .sessionNotActivated }
        if configuration.role == .phone, let refusal = watchState.sendRefusal { return refusal }
        let limit: Int
        switch channel {
        case .context: limit = configuration.maximumContextBytes
        case .message: limit = configuration.maximumMessageBytes
        case .userInfo: limit = configuration.maximumUserInfoBytes
        }
        return bytes > limit ? .payloadTooLarge(size: bytes, limit: limit) : nil
    }
}
