/// A connection still in its handshake: nothing but handshake frames is accepted from it.
struct PendingConnection: Sendable {
    var handshake: Handshake
    var decoder: FrameDecoder
    var deadline: LinkInstant
    /// The peer's address (host only), when known.
    var source: String?
    var openedAt: LinkInstant
    /// The handshake accepted at least one frame from the peer: a silent connection goes first.
    var progressed = false
}

/// The one authenticated connection: the link.
struct EstablishedLink: Sendable {
    var connection: ConnectionID
    var peer: InstanceID
    var decoder: FrameDecoder
    var lastHeardAt: LinkInstant
    var nextPingAt: LinkInstant
    /// The watch app's state as last reported by the watch (phone side only; the watch reports on link-up).
    var peerAppForeground: Bool
}

/// A message this side sent that still waits for its answer.
struct AwaitingReply: Sendable {
    var deadline: LinkInstant
    /// The payload's size, for a `payloadTooLarge` refusal.
    var bytes: Int
}

/// The link, or on the watch the dialling towards one: one state at a time, so a link that is up
/// cannot also have a redial due or a dial in flight (the simulator's seed 17 found a redial
/// deadline left set beside a live connection, waking the engine in a loop).
enum LinkState: Sendable {
    /// No authenticated connection. `failures` counts the dials and connections that failed since the
    /// last link, for the backoff; the phone listens and stays `idle`.
    case down(DialState, failures: Int)
    /// One authenticated connection carries every channel.
    case up(EstablishedLink)
}

extension LinkEngine {
    /// The established link, if any.
    var link: EstablishedLink? {
        if case .up(let current) = state { current } else { nil }
    }

    /// Changes the established link in place; nil (and nothing) when the link is down.
    @discardableResult
    mutating func withLink<Value>(_ body: (inout EstablishedLink) -> Value) -> Value? {
        guard case .up(var current) = state else { return nil }
        // Parks the state while `current` is changed, so its buffered bytes are not copied.
        state = .down(.idle, failures: 0)
        defer { state = .up(current) }
        return body(&current)
    }

    // MARK: Connections

    /// A new connection starts its handshake. At a cap (per source address, then overall) the
    /// stalest pending handshake is closed to make room — silent before progressed, then oldest —
    /// so unauthenticated connections can delay the paired peer by at most a handshake, never lock
    /// it out: the newest connection is always the one that may be the real peer redialling.
    mutating func connectionOpened(
        _ connection: ConnectionID, nonce: [UInt8], source: String?, now: LinkInstant, into actions: inout [Action]
    ) {
        if configuration.role == .watch, case .down(.dialling, let failures) = state {
            state = .down(.idle, failures: failures)
        }
        if let source,
            handshaking.values.lazy.filter({ $0.source == source }).count
                >= configuration.maximumUnauthenticatedConnectionsPerAddress
        {
            evictStalestHandshake(from: source, into: &actions)
        }
        if handshaking.count >= configuration.maximumUnauthenticatedConnections {
            evictStalestHandshake(from: nil, into: &actions)
        }
        var handshake = Handshake(
            configuration: Handshake.Configuration(
                side: configuration.role == .watch ? .dialer : .listener, role: configuration.role, instance: instance,
                version: configuration.protocolVersion, timeout: configuration.handshakeTimeout),
            authenticator: authenticator)
        var pending = PendingConnection(
            handshake: handshake, decoder: FrameDecoder(maximumFrameLength: configuration.maximumFrameLength),
            deadline: now.advanced(by: configuration.handshakeTimeout), source: source, openedAt: now)
        let handshakeActions = handshake.handle(.started(nonce: nonce))
        pending.handshake = handshake
        handshaking[connection] = pending
        apply(handshakeActions, on: connection, now: now, into: &actions)
    }

    /// Closes the pending handshake (from `source`, or any when nil) that has shown the least: one
    /// that never sent a frame before one that did, then the oldest.
    private mutating func evictStalestHandshake(from source: String?, into actions: inout [Action]) {
        let candidates = handshaking.filter { source == nil || $0.value.source == source }
        guard
            let (victim, _) = candidates.min(by: { lhs, rhs in
                (lhs.value.progressed ? 1 : 0, lhs.value.openedAt, lhs.key.rawValue)
                    < (rhs.value.progressed ? 1 : 0, rhs.value.openedAt, rhs.key.rawValue)
            })
        else { return }
        handshaking[victim] = nil
        let reason = "too many connections mid-handshake" + (source.map { " from \($0)" } ?? "")
        actions.append(.send(victim, .error(code: .tooManyConnections, reason: reason)))
        actions.append(.close(victim, reason: "\(reason): closing the stalest to make room"))
    }

    mutating func connectionClosed(_ connection: ConnectionID, now: LinkInstant, into actions: inout [Action]) {
        if handshaking.removeValue(forKey: connection) != nil {
            scheduleRedial(now: now)
            return
        }
        guard let current = link, current.connection == connection else { return }
        linkLost(reason: "connection closed", now: now, into: &actions)
    }

    /// Drops the link's per-connection state; messages in flight fail, transfers will be resent.
    mutating func linkLost(reason: String, now: LinkInstant, into actions: inout [Action]) {
        state = .down(.idle, failures: 0)
        actions.append(.notify(.linkLost(reason: reason)))
        actions.append(.log(.linkLost(reason: reason)))
        for id in awaitingReply.keys.sorted() {
            actions.append(.notify(.messageCompleted(id: id, .failed(.deliveryFailed(reason: "link lost: \(reason)")))))
        }
        awaitingReply.removeAll()
        deliveredToApp.removeAll()
        outbox.connectionLost()
        complications?.connectionLost()
        filesLinkLost()
        scheduleRedial(now: now)
    }

    mutating func bytesReceived(
        _ connection: ConnectionID, _ bytes: [UInt8], now: LinkInstant, into actions: inout [Action]
    ) {
        if var pending = handshaking[connection] {
            pending.decoder.feed(bytes)
            handshaking[connection] = pending
            drainHandshake(connection, now: now, into: &actions)
        } else if link?.connection == connection {
            withLink { $0.decoder.feed(bytes) }
            drainLink(now: now, into: &actions)
        }
    }

    /// Feeds every complete frame of a handshaking connection to its handshake; once it authenticates,
    /// the remaining bytes belong to the link.
    private mutating func drainHandshake(_ connection: ConnectionID, now: LinkInstant, into actions: inout [Action]) {
        while var pending = handshaking[connection] {
            let frame: LinkFrame?
            do {
                frame = try pending.decoder.nextFrame()
            } catch {
                handshaking[connection] = nil
                refuse(connection, error, into: &actions)
                scheduleRedial(now: now)
                return
            }
            guard let frame else {
                handshaking[connection] = pending
                return
            }
            let handshakeActions = pending.handshake.handle(.frameReceived(frame))
            pending.progressed = true
            handshaking[connection] = pending
            apply(handshakeActions, on: connection, now: now, into: &actions)
        }
        if link?.connection == connection { drainLink(now: now, into: &actions) }
    }

    /// Carries out a handshake's actions for `connection`.
    private mutating func apply(
        _ handshakeActions: [Handshake.Action], on connection: ConnectionID, now: LinkInstant,
        into actions: inout [Action]
    ) {
        for action in handshakeActions {
            switch action {
            case .send(let frame):
                actions.append(.send(connection, frame))
            case .scheduleDeadline(let after):
                handshaking[connection]?.deadline = now.advanced(by: after)
            case .close(let code, let message):
                handshaking[connection] = nil
                actions.append(
                    .close(connection, reason: CloseReason("handshake failed (\(code)): \(message)", code: code)))
                scheduleRedial(now: now)
            case .authenticated(let peer):
                guard let pending = handshaking.removeValue(forKey: connection),
                    let transcript = pending.handshake.transcript
                else { continue }
                var decoder = pending.decoder
                decoder.requireSeal(FrameSeal(authenticator: authenticator, transcript: transcript, sender: peer.role))
                actions.append(
                    .seal(
                        connection,
                        FrameSeal(authenticator: authenticator, transcript: transcript, sender: configuration.role)))
                establish(connection, peer: peer.instance, decoder: decoder, now: now, into: &actions)
            }
        }
    }

    /// Makes `connection` the link, replacing an older one, and starts every channel on it.
    private mutating func establish(
        _ connection: ConnectionID, peer: InstanceID, decoder: FrameDecoder, now: LinkInstant,
        into actions: inout [Action]
    ) {
        if let old = link {
            actions.append(
                .send(old.connection, .error(code: .replaced, reason: "a newer connection replaced this one")))
            actions.append(.close(old.connection, reason: "replaced by \(connection)"))
            linkLost(reason: "replaced by a newer connection", now: now, into: &actions)
        }
        state = .up(
            EstablishedLink(
                connection: connection, peer: peer, decoder: decoder, lastHeardAt: now,
                nextPingAt: now.advanced(by: configuration.heartbeatInterval), peerAppForeground: false))
        if knownPeer == nil { actions.append(.notify(.activated(peer: peer))) }
        if knownPeer != peer {
            knownPeer = peer
            actions.append(.persistPeer(peer))
            // A different watch (wiped or replaced) has none of our contexts: forget the old acknowledgement.
            if var slot = contextSlot, slot.acknowledgedGeneration != 0 {
                slot.acknowledgedGeneration = 0
                contextSlot = slot
                actions.append(.persistContextSlot(slot, flushed: true))
            }
        }
        actions.append(.notify(.linkEstablished(peer: peer)))
        actions.append(.log(.linkEstablished(connection, peerRole: configuration.role.counterpart, peer: peer)))
        if configuration.role == .watch {
            actions.append(.send(connection, .appState(localAppForeground ? .foreground : .background)))
            actions.append(.send(connection, .watchState(watchState)))
        }
        sendContextIfUnacknowledged(into: &actions)
        sendTransfers(into: &actions)
        offerFile(into: &actions)
    }

    // MARK: Established link

    /// Handles every complete frame buffered on the link.
    mutating func drainLink(now: LinkInstant, into actions: inout [Action]) {
        while let next = withLink({ current in
            current.lastHeardAt = now
            return Result { () throws(FrameError) in try current.decoder.nextFrame() }
        }) {
            switch next {
            case .failure(let error):
                if let current = link { refuse(current.connection, error, into: &actions) }
                linkLost(reason: "protocol error: \(error)", now: now, into: &actions)
                return
            case .success(nil):
                return
            case .success(let frame?):
                linkFrameReceived(frame, now: now, into: &actions)
            }
        }
    }

    /// Sends an error frame naming the decoding problem and closes the connection.
    private func refuse(_ connection: ConnectionID, _ error: FrameError, into actions: inout [Action]) {
        actions.append(.send(connection, .error(code: error.linkErrorCode, reason: "\(error)")))
        actions.append(.close(connection, reason: CloseReason("\(error)", code: error.linkErrorCode)))
    }

    /// A peer frame that is not allowed here: error frame, close, link lost.
    mutating func violation(_ message: String, now: LinkInstant, into actions: inout [Action]) {
        guard let current = link else { return }
        actions.append(.send(current.connection, .error(code: .protocolViolation, reason: message)))
        actions.append(.close(current.connection, reason: CloseReason(message)))
        linkLost(reason: "protocol violation: \(message)", now: now, into: &actions)
    }

    mutating func linkFrameReceived(_ frame: LinkFrame, now: LinkInstant, into actions: inout [Action]) {
        let role = configuration.role
        switch frame {
        case .ping(let token):
            if let current = link { actions.append(.send(current.connection, .pong(token: token))) }
        case .pong(let token):
            // The heartbeat's round trip: how long a frame waits on this link, files streaming or not.
            if let sent = pingInFlight, sent.token == token {
                pingInFlight = nil
                heartbeatRoundTrips.append(now.sinceOrigin - sent.at.sinceOrigin)
                if heartbeatRoundTrips.count > Self.keptHeartbeatRoundTrips { heartbeatRoundTrips.removeFirst() }
            }
        case .error(let code, let reason):
            guard let current = link else { return }
            actions.append(.close(current.connection, reason: CloseReason("peer error \(code): \(reason)", code: code)))
            linkLost(reason: "peer sent error \(code): \(reason)", now: now, into: &actions)
        case .appState(let state) where role == .phone:
            let foreground = state == .foreground
            guard link?.peerAppForeground != foreground else { return }
            withLink { $0.peerAppForeground = foreground }
            actions.append(.notify(.peerAppStateChanged(foreground: foreground)))
        case .context(let generation, let sender, let payload) where role == .watch:
            contextReceived(generation: generation, sender: sender, payload: payload, into: &actions)
        case .contextAck(let generation, let sender) where role == .phone:
            contextAcknowledged(generation: generation, sender: sender, into: &actions)
        case .message(let id, let wantsReply, let payload):
            messageReceived(id: id, payload: payload, wantsReply: wantsReply, asData: false, into: &actions)
        case .messageData(let id, let wantsReply, let payload):
            messageReceived(id: id, payload: payload, wantsReply: wantsReply, asData: true, into: &actions)
        case .messageReply(let id, let payload):
            completeMessage(id: id, .replied(payload), into: &actions)
        case .messageDelivered(let id):
            completeMessage(id: id, .delivered, into: &actions)
        case .messageFailed(let id, let code, let reason):
            messageFailed(id: id, code: code, reason: reason, into: &actions)
        case .userInfo(let queue, let sequence, let payload):
            userInfoReceived(TransferKey(queue: queue, sequence: sequence), payload: payload, into: &actions)
        case .userInfoAck(let queue, let sequence):
            transferAcknowledged(TransferKey(queue: queue, sequence: sequence), into: &actions)
        case .userInfoRefused(let queue, let sequence, let reason):
            transferAcknowledged(
                TransferKey(queue: queue, sequence: sequence), refused: .payloadUnsupportedTypes(reason: reason),
                into: &actions)
        case .watchState(let state) where role == .phone:
            peerWatchStateReceived(state, into: &actions)
        case .fileOffer(let key, let size, let digest, let metadata):
            fileOffered(key, size: size, digest: digest, metadata: metadata, into: &actions)
        case .fileResume(let key, let offset):
            fileResumed(key, offset: offset, now: now, into: &actions)
        case .fileChunk(let key, let offset, let data):
            fileChunkReceived(key, offset: offset, data: data, now: now, into: &actions)
        case .fileDone(let key, let code, let reason):
            fileDone(key, code: code, reason: reason, into: &actions)
        case .fileCancel(let key):
            fileCancelled(key, into: &actions)
        case .launch(let payload) where role == .watch:
            actions.append(.notify(.launchReceived(payload: payload)))
        case .hello, .challenge, .proof, .welcome:
            violation("handshake frame after the handshake completed", now: now, into: &actions)
        case .appState, .watchState, .context, .contextAck, .launch:
            violation("\(frame.kind) is not allowed towards the \(role)", now: now, into: &actions)
        }
    }

    // MARK: Time

    mutating func tick(now: LinkInstant, into actions: inout [Action]) {
        scheduledWakeUp = nil
        for (connection, pending) in handshaking.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where pending.deadline <= now {
            var handshake = pending.handshake
            let handshakeActions = handshake.handle(.deadlinePassed)
            handshaking[connection]?.handshake = handshake
            apply(handshakeActions, on: connection, now: now, into: &actions)
            if handshaking[connection] != nil {
                // The handshake had nothing to say (should not happen); close it anyway at its deadline.
                handshaking[connection] = nil
                actions.append(.close(connection, reason: "handshake deadline passed"))
            }
        }
        if let current = link {
            if now >= current.lastHeardAt.advanced(by: configuration.peerSilenceLimit) {
                actions.append(
                    .close(current.connection, reason: "peer silent for \(configuration.peerSilenceLimit)"))
                linkLost(reason: "heartbeat: no frame for \(configuration.peerSilenceLimit)", now: now, into: &actions)
            } else if now >= current.nextPingAt {
                actions.append(.send(current.connection, .ping(token: nextPingToken)))
                pingInFlight = (nextPingToken, now)
                nextPingToken += 1
                let nextPing = now.advanced(by: configuration.heartbeatInterval)
                withLink { $0.nextPingAt = nextPing }
            }
        }
        expireMessages(now: now, into: &actions)
        if case .down(.due(let dialAt), let failures) = state, dialAt <= now {
            state = .down(.idle, failures: failures)
            startDial(into: &actions)
        }
    }
}

extension Duration {
    /// Whole microseconds, truncated toward zero (LinkProtocol does not depend on WorkoutModel).
    var wholeMicrosecondsForLink: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
