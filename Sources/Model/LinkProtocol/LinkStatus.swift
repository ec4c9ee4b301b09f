/// What `status` reports about the link.
package struct LinkStatus: Equatable, Sendable, Codable {
    package var role: String
    package var instance: String
    package var activated: Bool
    package var reachable: Bool
    package var linked: Bool
    package var peer: String?
    package var watchAppForeground: Bool
    package var contextGenerationSent: UInt64?
    package var contextGenerationAcknowledged: UInt64?
    package var contextGenerationReceived: UInt64?
    package var contextSender: String?
    package var outboxDepth: Int
    package var handshakingConnections: Int
    /// The watch's pairing, app and complication state: its own (watch) or as last reported (phone).
    package var watchState: WatchState
    /// Received items handed to the app and not yet processed.
    package var hasContentPending: Bool
    /// The 99th percentile (nearest rank) of the newest heartbeat round trips (ping sent → pong
    /// read), in milliseconds; nil before the first.
    package var heartbeatRoundTripP99Milliseconds: Double?

    package init(
        role: LinkRole, instance: InstanceID, activated: Bool, reachable: Bool, linked: Bool, peer: InstanceID?,
        watchAppForeground: Bool, contextGenerationSent: UInt64?, contextGenerationAcknowledged: UInt64?,
        contextGenerationReceived: UInt64?, contextSender: InstanceID?, outboxDepth: Int, handshakingConnections: Int,
        watchState: WatchState = .installed, hasContentPending: Bool = false, heartbeatRoundTrips: [Duration] = []
    ) {
        heartbeatRoundTripP99Milliseconds = Self.percentile99(heartbeatRoundTrips)
        self.watchState = watchState
        self.hasContentPending = hasContentPending
        self.role = role.description
        self.instance = instance.description
        self.activated = activated
        self.reachable = reachable
        self.linked = linked
        self.peer = peer?.description
        self.watchAppForeground = watchAppForeground
        self.contextGenerationSent = contextGenerationSent
        self.contextGenerationAcknowledged = contextGenerationAcknowledged
        self.contextGenerationReceived = contextGenerationReceived
        self.contextSender = contextSender?.description
        self.outboxDepth = outboxDepth
        self.handshakingConnections = handshakingConnections
    }
}

extension LinkStatus {
    /// The nearest-rank 99th percentile of `samples`, in milliseconds.
    static func percentile99(_ samples: [Duration]) -> Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let rank = max(1, Int((Double(sorted.count) * 0.99).rounded(.up)))
        let (seconds, attoseconds) = sorted[rank - 1].components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

/// One transfer still in the outbox, for `queue` listings.
package struct OutstandingTransfer: Equatable, Sendable, Codable {
    package var sequence: UInt64
    package var bytes: Int
    package var ageSeconds: Double
    /// Put on the wire at least once, or recovered from the outbox after a restart (which counts as
    /// sent). Still cancellable until the peer acknowledges it, but the peer may already hold it.
    package var sent: Bool
    /// For a complication transfer: whether it is the current one (only the newest is); nil for an
    /// ordinary userInfo transfer.
    package var isCurrentComplicationInfo: Bool?

    package init(sequence: UInt64, bytes: Int, ageSeconds: Double, sent: Bool, isCurrentComplicationInfo: Bool? = nil) {
        self.sequence = sequence
        self.bytes = bytes
        self.ageSeconds = ageSeconds
        self.sent = sent
        self.isCurrentComplicationInfo = isCurrentComplicationInfo
    }
}

extension LinkEngine {
    /// The snapshot `status` shows.
    package var status: LinkStatus {
        LinkStatus(
            role: configuration.role, instance: instance, activated: isActivated, reachable: isReachable,
            linked: isLinked, peer: peerInstance, watchAppForeground: watchAppForeground,
            contextGenerationSent: contextSlot?.generation,
            contextGenerationAcknowledged: contextSlot?.acknowledgedGeneration,
            contextGenerationReceived: receivedContext?.generation, contextSender: receivedContext?.sender,
            outboxDepth: outstandingTransfers.count, handshakingConnections: handshakingConnectionCount,
            watchState: currentWatchState, hasContentPending: hasContentPending,
            heartbeatRoundTrips: heartbeatRoundTrips)
    }
}
