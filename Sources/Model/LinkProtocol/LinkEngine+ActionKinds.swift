// MARK: Kinds of action, for the shells' ordering rules

extension LinkEngine.Action {
    /// A ping, a pong or the next wake-up: it promises nothing about what is on disk, so a shell may
    /// carry it out ahead of the writes before it (never ahead of a seal).
    package var isHeartbeat: Bool {
        switch self {
        case .send(_, .ping), .send(_, .pong), .scheduleWakeUp: true
        default: false
        }
    }

    /// A write to the link's state directory that must be durable before the next action.
    package var isStateWrite: Bool {
        switch self {
        case .persistPeer, .persistContextSlot, .persistReceivedContext, .persistTransferMark, .removeTransfers,
            .removeComplications, .persistWatchState, .removeOutboundFile, .prepareInboundFile, .deliverInboundFile,
            .discardInboundFile:
            true
        default:
            false
        }
    }
}
