import LinkProtocol
import LinkRuntime

/// A `LinkEngine` (phone or watch, real HMAC) that completed an honest handshake, then gets any bytes
/// and frames from the peer mixed with clock ticks and its own app's calls.
///
/// Properties: nothing is sent on a connection after the engine closed it or was told it closed, and
/// every sent frame fits the peer's limit and survives the codec; a received context is persisted
/// before the app hears of it, and generations from one sender only grow; a transfer reaches the app
/// at most once; a message completes at most once, and only one that was sent; a file chunk is
/// acknowledged only once the shell synced it, no partial keeps more than was synced, and a file
/// reaches the app at most once; the engine stays activated with the honest peer; once the handshake
/// is over every frame the engine sends is sealed, and opens under the honest peer's view of the
/// session. Frames from the peer are sealed as the peer would; raw bytes are not (they fail).
enum LinkEngineTarget {
    static func check(_ input: inout FuzzInput) throws {
        let role: LinkRole = input.bool() ? .watch : .phone
        var engine = LinkEngine(
            configuration: LinkConfiguration(role: role), instance: HandshakeTarget.instance,
            authenticator: try HandshakeTarget.authenticator(HandshakeTarget.key),
            restored: RestoredLinkState(outboxQueue: InstanceID(bytes: [UInt8](repeating: 0x33, count: 16))!),
            seed: 7)
        var checker = Checker(role: role)
        var now = LinkInstant(.zero)
        let connection = ConnectionID(1)
        try checker.record(engine.handle(.started(now: now)))
        try checker.record(engine.handle(.connectionOpened(connection, nonce: input.fixed(32), now: now)))
        let transcript = try handshake(&engine, &checker, connection: connection, peerNonce: input.fixed(32), now: now)
        try require(engine.isLinked, "the honest handshake did not link")
        let authenticator = try HandshakeTarget.authenticator(HandshakeTarget.key)
        var peerSeal = FrameSeal(authenticator: authenticator, transcript: transcript, sender: role.counterpart)
        checker.dials = 0  // the watch's first dial is the connection just opened

        var nextMessage: UInt64 = 1
        var nextTransfer: UInt64 = 1
        var nextFile: UInt64 = 1
        var steps = 0
        while !input.isAtEnd, steps < 256 {
            steps += 1
            let actions: [LinkEngine.Action]
            switch input.byte() % 9 {
            case 0:
                guard !checker.closed.contains(connection) else { continue }
                actions = engine.handle(.bytesReceived(connection, input.chunk(), now: now))
            case 1, 2:
                guard !checker.closed.contains(connection) else { continue }
                guard let frame = try? LinkFrame.decode(kindByte: input.byte(), body: input.chunk()[...]) else {
                    continue
                }
                actions = engine.handle(.bytesReceived(connection, peerSeal.seal(frame), now: now))
            case 3:
                now = now.advanced(by: .milliseconds(Int(input.integer(UInt16.self))))
                actions = engine.handle(.tick(now: now))
            case 4:
                // Only the phone has an application context to update; the watch's app says it was raised.
                actions =
                    role == .phone
                    ? engine.handle(.contextUpdated(payload: input.chunk(), force: input.bool(), now: now))
                    : engine.handle(.launchRequested(payload: input.chunk()))
            case 5:
                let (payload, wantsReply) = (input.chunk(), input.bool())
                actions = engine.handle(
                    input.bool()
                        ? .messageDataSent(id: nextMessage, payload: payload, wantsReply: wantsReply, now: now)
                        : .messageSent(id: nextMessage, payload: payload, wantsReply: wantsReply, now: now))
                checker.messagesSent.insert(nextMessage)
                nextMessage += 1
            case 6:
                // The engine numbers each transfer asked for, in order, never reusing a persisted one's
                // number; the shell persists it, or the append fails and the number is issued again.
                let requested = engine.handle(.transferRequested(payload: input.chunk()))
                guard requested.count == 1, case .appendTransfer(let sequence, let payload, false) = requested[0] else {
                    throw PropertyViolation(description: "a transfer request gave \(requested), not one append")
                }
                try require(
                    sequence == nextTransfer, "transfer numbered \(sequence), the outbox holds \(nextTransfer) next")
                if input.byte() % 8 == 0 {
                    actions = engine.handle(.transfersNotPersisted(from: sequence))
                } else {
                    actions = engine.handle(.transferPersisted(sequence: sequence, payload: payload))
                    nextTransfer += 1
                }
            case 7:
                // Files: queue one, or play the shell's and the app's part for one arriving.
                let choice = Int(input.byte()) % 4
                if choice == 0 {
                    let file = OutboundFile(
                        sequence: nextFile, size: UInt64(input.integer(UInt16.self)),
                        digest: [UInt8](repeating: 0, count: LinkFrame.digestByteCount), metadata: "{}")
                    nextFile += 1
                    actions = engine.handle(.filePersisted(file))
                } else if choice == 1, !checker.unsynced.isEmpty {
                    let (key, through) = checker.unsynced.removeFirst()
                    checker.synced[key] = max(checker.synced[key] ?? 0, through)
                    actions = engine.handle(.inboundChunkPersisted(key, through: through))
                } else if choice == 2, !checker.verifying.isEmpty {
                    actions = engine.handle(
                        .inboundFileVerified(checker.verifying.removeFirst(), matches: input.bool()))
                } else if !checker.filesReceived.isEmpty {
                    actions = engine.handle(.fileProcessed(checker.filesReceived.removeFirst()))
                } else {
                    continue
                }
            default:
                let choice = Int(input.byte())
                if !checker.received.isEmpty, choice % 2 == 0 {
                    actions = engine.handle(.transfersProcessed([checker.received.removeFirst()]))
                } else if !checker.messagesReceived.isEmpty {
                    let id = checker.messagesReceived.removeFirst()
                    actions = engine.handle(
                        .messageAnswered(id: id, choice % 3 == 0 ? .reply(input.chunk()) : .handled))
                } else {
                    actions = engine.handle(.localAppStateChanged(foreground: choice % 2 == 0))
                }
            }
            try checker.record(actions)
            // The shell's side of the contract: report the close, and fail every dial (no second connection).
            if checker.closed.contains(connection), !checker.reportedClosed {
                checker.reportedClosed = true
                try checker.record(engine.handle(.connectionClosed(connection, now: now)))
            }
            while checker.dials > 0 {
                checker.dials -= 1
                try checker.record(engine.handle(.dialFailed(reason: "fuzzing", now: now)))
            }
        }
        try require(engine.isActivated && engine.peerInstance == HandshakeTarget.peerInstance, "lost the paired peer")
    }

    /// Runs the honest peer's side of the handshake against the engine over `connection`; returns
    /// the transcript the peer saw.
    private static func handshake(
        _ engine: inout LinkEngine, _ checker: inout Checker, connection: ConnectionID, peerNonce: [UInt8],
        now: LinkInstant
    ) throws -> HandshakeTranscript {
        let peerSide: HandshakeSide = checker.role == .phone ? .dialer : .listener
        var peer = Handshake(
            configuration: .init(
                side: peerSide, role: checker.role.counterpart, instance: HandshakeTarget.peerInstance),
            authenticator: try HandshakeTarget.authenticator(HandshakeTarget.key))
        var toEngine = peer.handle(.started(nonce: peerNonce)).sentFrames
        var toPeer = checker.sent.removeAll()
        while !toEngine.isEmpty || !toPeer.isEmpty {
            for frame in toPeer where peer.state.isRunning { toEngine += peer.handle(.frameReceived(frame)).sentFrames }
            toPeer = []
            if checker.peerView == nil, let transcript = peer.transcript {
                // The peer's view of the session, for opening what the engine seals once it is linked.
                var view = FrameDecoder()
                view.requireSeal(
                    FrameSeal(
                        authenticator: try HandshakeTarget.authenticator(HandshakeTarget.key), transcript: transcript,
                        sender: checker.role))
                checker.peerView = view
            }
            for frame in toEngine {
                try checker.record(engine.handle(.bytesReceived(connection, frame.encoded(), now: now)))
            }
            toEngine = []
            toPeer = checker.sent.removeAll()
        }
        try require(peer.transcript != nil, "the honest peer has no transcript")
        return peer.transcript!
    }

    /// What the engine did so far, checked action by action.
    private struct Checker {
        let role: LinkRole
        var closed: Set<ConnectionID> = []
        var reportedClosed = false
        /// Dials asked for and not yet answered.
        var dials = 0
        /// Frames sent since the handshake driver last took them.
        var sent = Taken<LinkFrame>()
        /// The engine's seal, once it gave one, and the honest peer's decoder that must open what it seals.
        var seal: FrameSeal?
        var peerView: FrameDecoder?
        var contextGenerations: [InstanceID: UInt64] = [:]
        var persistedContext: ReceivedContext?
        var delivered: Set<TransferKey> = []
        /// Transfers and messages the app has not answered yet, oldest first.
        var received: [TransferKey] = []
        var messagesReceived: [UInt64] = []
        var messagesSent: Set<UInt64> = []
        var messagesEnded: Set<UInt64> = []
        /// Files arriving: chunks written and not yet synced, how far each file is synced, files
        /// waiting for the digest check, and files handed to the app.
        var unsynced: [(TransferKey, UInt64)] = []
        var synced: [TransferKey: UInt64] = [:]
        var verifying: [TransferKey] = []
        var filesReceived: [TransferKey] = []
        var filesDelivered: Set<TransferKey> = []

        init(role: LinkRole) { self.role = role }

        mutating func record(_ actions: [LinkEngine.Action]) throws {
            for action in actions {
                switch action {
                case .send(let connection, let frame):
                    try require(
                        !closed.contains(connection), "sent a \(frame.kind) frame on closed connection \(connection)")
                    let bytes = frame.encoded()
                    try require(bytes.count - 4 <= FrameDecoder.defaultMaximumFrameLength, "sent an oversized frame")
                    var decoder = FrameDecoder()
                    decoder.feed(bytes)
                    try require(
                        (try? decoder.nextFrame()) == frame, "a sent \(frame.kind) frame did not survive the codec")
                    if var seal {
                        decoder = peerView ?? FrameDecoder()
                        decoder.feed(seal.seal(frame))
                        try require(
                            (try? decoder.nextFrame()) == frame, "a sealed \(frame.kind) frame did not open at the peer"
                        )
                        self.seal = seal
                        peerView = decoder
                    }
                    if case .fileResume(let key, let offset) = frame {
                        try require(
                            offset <= synced[key] ?? 0, "acknowledged \(offset) bytes of \(key) before they were synced"
                        )
                    }
                    sent.append(frame)
                case .seal(_, let given):
                    try require(seal == nil, "sealed the connection twice")
                    seal = given
                case .writeInboundChunk(let key, let offset, let data):
                    unsynced.append((key, offset + UInt64(data.count)))
                case .prepareInboundFile(let key, let keeping):
                    try require(
                        keeping <= synced[key] ?? 0, "the partial of \(key) keeps \(keeping) bytes, more than synced")
                case .verifyInboundFile(let key, _):
                    verifying.append(key)
                case .notify(.fileReceived(let file)):
                    try require(filesDelivered.insert(file.key).inserted, "file \(file.key) reached the app twice")
                    filesReceived.append(file.key)
                case .close(let connection, _):
                    try require(closed.insert(connection).inserted, "closed connection \(connection) twice")
                case .dial:
                    dials += 1
                case .persistReceivedContext(let context):
                    persistedContext = context
                case .notify(.contextReceived(let context)):
                    try require(
                        persistedContext == context, "context generation \(context.generation) notified unpersisted")
                    if let last = contextGenerations[context.sender] {
                        try require(context.generation > last, "context generation \(context.generation) after \(last)")
                    }
                    contextGenerations[context.sender] = context.generation
                case .notify(.userInfoReceived(let key, _)):
                    try require(delivered.insert(key).inserted, "transfer \(key) reached the app twice")
                    received.append(key)
                case .notify(.messageReceived(let id, _, _)), .notify(.messageDataReceived(let id, _, _)):
                    messagesReceived.append(id)
                case .notify(.messageCompleted(let id, _)):
                    try require(messagesSent.contains(id), "message \(id) completed but was never sent")
                    try require(messagesEnded.insert(id).inserted, "message \(id) completed twice")
                default:
                    break
                }
            }
        }
    }
}

/// A list whose contents are taken all at once.
struct Taken<Element> {
    private var elements: [Element] = []
    mutating func append(_ element: Element) { elements.append(element) }
    mutating func removeAll() -> [Element] {
        defer { elements = [] }
        return elements
    }
}
