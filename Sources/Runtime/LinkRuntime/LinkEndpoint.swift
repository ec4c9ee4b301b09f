import DurableFiles
import Foundation
import LinkProtocol
import POSIX
import Trace

/// The link's I/O on an `EventLoop`: it listens (phone) or dials (watch), turns socket bytes, closes
/// and timer expiry into `LinkEngine` events, and carries out the engine's actions: frames are
/// written (sealed), the outboxes' appends run on one outbox thread, batched so concurrent producers
/// share one `fdatasync` (group commit), files are copied, read and synced off the loop.
///
/// Two ways to use it. The daemons' node holds the engine (`drive`, in LinkEndpoint+Driven): every
/// event goes to the node, which decides, and `NodeShell` carries out the actions, state writes on
/// its own write queue. Alone (linkpeer, the link's own tests, the enqueue bench), it runs the engine
/// itself as the `WCSession` analog: actions in order on the loop, each `persist…` durable before the
/// next, notifications to `onNotification`.
///
/// Loop-only API: `start`, `updateApplicationContext`, `sendMessage`, `answerMessage`,
/// `transferUserInfo`, `transferProcessed`, `cancelTransfer`, `launch`, `setAppForeground`,
/// `status`, `outstandingTransfers`, `stop`. Set `onNotification` and `log` before `start`.
/// Events raised while actions are being carried out (an app calling back from a notification)
/// are queued and handled right after, so actions are never interleaved.
package final class LinkEndpoint: @unchecked Sendable {
    // @unchecked: every mutable member is confined to `loop`'s thread (checked with preconditionInLoop);
    // Sendable only lets the reference travel into `execute` closures that run there.

    /// Where the peer is: the phone listens, the watch dials.
    package enum Address: Sendable, Equatable {
        case listen(host: String, port: UInt16)
        case dial(host: String, port: UInt16)
    }

    package let loop: EventLoop
    package let configuration: LinkConfiguration
    package let state: LinkStateDirectory
    private let address: Address
    package internal(set) var engine: LinkEngine
    var connections: [Int: Connection] = [:]
    /// The seal of each connection past its handshake: every frame written to it is sealed.
    private var seals: [Int: FrameSeal] = [:]
    private var listener: Listener?
    private var wakeTimer: TimerID?
    private let origin = ContinuousClock.now
    private var messageWaiters: [UInt64: (MessageOutcome) -> Void] = [:]
    var transferWaiters: [AppendKey: Waiter] = [:]
    private var nextMessageID: UInt64 = 1
    var queuedEvents: [LinkEngine.Event] = []
    /// The run each message in flight is about, for its outcome's journal line.
    var messageRuns: [UInt64: String] = [:]
    var isHandling = false
    /// The rest of the action list being carried out (alone: actions of a call made meanwhile join it).
    var actionsLeft: ArraySlice<LinkEngine.Action> = []
    var readingPaused = false
    var stopped = false
    /// Set once a node holds the engine (`drive`): events go to it, and `engine` is no longer used.
    var driver: LinkDriver?
    /// The outboxes (by `complication`) whose appends are void until the node numbers them again.
    var voidAppends: Set<Bool> = []
    /// The peer named in the journal's lines for what it sent (as the engine last reported it).
    var journalPeer: InstanceID?
    /// Runs the blocking outbox appends (serial: one group commit at a time, see `commitWaitingAppends`).
    let outboxQueue = DispatchQueue(label: "link.outbox")
    var appendsWaiting: [WaitingAppend] = []
    var appendInFlight = false
    /// How many group commits of the outbox have started (each is one `fdatasync` per outbox).
    package internal(set) var groupCommits = 0
    /// How long a dial may take before it counts as failed (a partition drops SYNs silently).
    package var connectTimeout: Duration = .seconds(1)

    /// Called on the loop for every notification, in order.
    package var onNotification: (LinkNotification) -> Void = { _ in }
    /// The event journal (docs/TRACE.md): every frame that carries an id, every receipt, link changes.
    /// Nil writes none (tests of the endpoint alone).
    package var journal: EventJournal?
    /// One line per decision worth seeing (handshake failures, link up/down, dropped launches);
    /// `warn` for a peer that failed to prove the pairing key.
    package var log: (String) -> Void = { _ in }
    package var warn: (String) -> Void = { _ in }
    /// Called when a durable write fails: after a failed fsync nothing is known about the file, so
    /// the daemon must stop and recover from disk (default: print and exit 75).
    package var onFatal: (String) -> Void = { message in
        FileHandle.standardError.write(Data("fatal: \(message)\n".utf8))
        exit(75)
    }

    /// Draws each new connection's handshake nonce (tests replace it to make the draw fail).
    package var nonces: () throws -> [UInt8] = { try SecureRandom.bytes(count: LinkFrame.nonceByteCount) }

    /// Builds the endpoint from the state directory (read now) and the pairing key.
    package init(
        configuration: LinkConfiguration, state: LinkStateDirectory, pairingKey: [UInt8], address: Address,
        loop: EventLoop, seed: UInt64
    ) throws {
        self.loop = loop
        self.configuration = configuration
        self.state = state
        self.address = address
        engine = LinkEngine(
            configuration: configuration, instance: state.instance,
            authenticator: try PairingKeyAuthenticator(key: pairingKey), restored: try state.restore(), seed: seed)
    }

    // MARK: Lifecycle

    /// Starts listening or dialling; returns the bound port when listening. Loop-only.
    @discardableResult
    package func start() throws -> UInt16? {
        loop.preconditionInLoop()
        var port: UInt16?
        if case .listen(let host, let requested) = address {
            let listener = try loop.listen(host: host, port: requested) { [unowned self] connection in
                self.accepted(connection)
            }
            listener.onAcceptPaused = { [unowned self] reason in
                warn("cannot accept a connection: \(reason); the peer waits in the backlog, tried again every 100 ms")
            }
            self.listener = listener
            port = listener.port
        }
        journal?.record(.started, detail: "instance \(state.instance)")
        handle(.started(now: now))
        return port
    }

    /// Tells the peer we are going, closes every connection and the listener. Loop-only.
    package func stop() {
        loop.preconditionInLoop()
        guard !stopped else { return }
        stopped = true
        listener?.close()
        listener = nil
        if let wakeTimer { loop.cancelTimer(wakeTimer) }
        for (id, connection) in connections {
            write(.error(code: .shuttingDown, reason: "\(configuration.role) is shutting down"), to: id)
            connection.closeAfterFlush()
        }
    }

    // MARK: App API (loop-only)

    /// `updateApplicationContext`: replaces the context slot (persisted before its frame goes out).
    ///
    /// Handled at once even from inside a notification (as `transfersProcessed`), so `status()` names
    /// the generation this update was given when the call returns: phoned records its push under that
    /// generation, and a queued update would have read the one before.
    package func updateApplicationContext(_ payload: [UInt8], force: Bool = false) throws(LinkError) {
        loop.preconditionInLoop()
        if let error = engine.admission(of: .context, bytes: payload.count) { throw error }
        handleAtOnce(.contextUpdated(payload: payload, force: force, now: now))
    }

    /// `sendMessage`: exactly one outcome is passed to `completion`, on the loop.
    /// `run` only labels the journal's lines.
    package func sendMessage(
        _ payload: [UInt8], wantsReply: Bool, run: String? = nil, completion: @escaping (MessageOutcome) -> Void
    ) {
        let id = messageAttempt(run: run, completion: completion)
        handle(.messageSent(id: id, payload: payload, wantsReply: wantsReply, now: now))
    }

    /// `sendMessageData`: raw bytes under `sendMessage`'s rules (one id space, one outcome, in order).
    package func sendMessageData(
        _ payload: [UInt8], wantsReply: Bool, completion: @escaping (MessageOutcome) -> Void
    ) {
        let id = messageAttempt(run: nil, completion: completion)
        handle(.messageDataSent(id: id, payload: payload, wantsReply: wantsReply, now: now))
    }

    /// Numbers a send, journals the attempt and keeps its completion.
    private func messageAttempt(run: String?, completion: @escaping (MessageOutcome) -> Void) -> UInt64 {
        loop.preconditionInLoop()
        let id = nextMessageID
        nextMessageID += 1
        journalAttempt(id, run: run)
        messageWaiters[id] = completion
        return id
    }

    /// Answers a message received through `onNotification`.
    package func answerMessage(id: UInt64, _ answer: MessageAnswer) {
        loop.preconditionInLoop()
        handle(.messageAnswered(id: id, answer))
    }

    /// Tells the link a received transfer was processed durably: its mark is persisted, then acked.
    package func transferProcessed(_ key: TransferKey) {
        transfersProcessed([key])
    }

    /// Several received transfers processed durably at once: one mark write, then their acks.
    ///
    /// Handed to the engine at once even from inside a notification (unlike other events); its mark
    /// and acks follow the actions of earlier calls. A crash before the mark redelivers the batch,
    /// which the app finds already applied.
    package func transfersProcessed(_ keys: [TransferKey]) {
        loop.preconditionInLoop()
        handleAtOnce(.transfersProcessed(keys))
    }

    /// Cancels an outstanding (unacknowledged) transfer, as `WCSessionUserInfoTransfer.cancel()` does;
    /// returns whether it had been put on the wire (then it may have been delivered already).
    @discardableResult
    package func cancelTransfer(sequence: UInt64) throws(LinkError) -> Bool {
        loop.preconditionInLoop()
        if let error = engine.cancellationError(sequence: sequence) { throw error }
        let wasSent = engine.outstandingTransfers.contains { $0.sequence == sequence && $0.everSent }
        handle(.transferCancelRequested(sequence: sequence))
        return wasSent
    }

    /// The HealthKit-style launch: sent if linked, otherwise dropped (and `launchDropped` notified).
    package func launch(_ payload: [UInt8]) {
        loop.preconditionInLoop()
        handle(.launchRequested(payload: payload))
    }

    /// Watch only: the watch app goes to the foreground (wrist up) or background (wrist down).
    package func setAppForeground(_ foreground: Bool) {
        loop.preconditionInLoop()
        handle(.localAppStateChanged(foreground: foreground))
    }

    /// A snapshot of the session for status displays.
    package func status() -> LinkStatus {
        loop.preconditionInLoop()
        return engine.status
    }

    // MARK: The shell

    package var now: LinkInstant { LinkInstant(ContinuousClock.now - origin) }

    static func wallClockMicros() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }

    private func accepted(_ connection: Connection) {
        register(connection)
        openConnection(connection)
    }

    private func register(_ connection: Connection) {
        connections[connection.id] = connection
        connection.isReadingPaused = readingPaused
        let id = connection.id
        connection.onRead = { [unowned self] bytes in
            self.handle(.bytesReceived(ConnectionID(id), bytes, now: self.now))
        }
        connection.onClose = { [unowned self] reason in
            self.connections[id] = nil
            self.seals[id] = nil
            self.handle(.connectionClosed(ConnectionID(id), now: self.now))
        }
    }

    /// Hands a new connection to the engine; without a nonce it is closed instead, and the reason returned.
    @discardableResult
    private func openConnection(_ connection: Connection) -> String? {
        let nonce: [UInt8]
        do {
            nonce = try nonces()
        } catch {
            log("refusing \(connection.remoteDescription): \(error)")
            connection.close()
            return "no handshake nonce: \(error)"
        }
        handle(.connectionOpened(ConnectionID(connection.id), nonce: nonce, now: now, source: connection.remoteHost))
        return nil
    }

    private func write(_ frame: LinkFrame, to id: Int) {
        guard let connection = connections[id] else { return }
        connection.write(seals[id]?.seal(frame) ?? frame.encoded())
    }

    func perform(_ action: LinkEngine.Action) {
        switch action {
        case .send(let connection, let frame):
            // The frame first and its line after, stamped before the frame went: the peer hears of
            // it a journal line sooner, and the line's time is unchanged.
            let stamp = journal?.stamp()
            write(frame, to: connection.rawValue)
            journalSent(frame, at: stamp)
        case .seal(let connection, let seal):
            seals[connection.rawValue] = seal
        case .close(let connection, let reason):
            (reason.isAuthenticationFailure ? warn : log)("closing connection \(connection): \(reason)")
            connections[connection.rawValue]?.closeAfterFlush()
        case .dial:
            dial()
        case .scheduleWakeUp(let at):
            if let wakeTimer { loop.cancelTimer(wakeTimer) }
            wakeTimer = loop.scheduleTimer(after: at.sinceOrigin - now.sinceOrigin) { [unowned self] in
                self.wakeTimer = nil
                self.handle(.tick(now: self.now))
            }
        case .appendTransfer, .enqueueFile:
            break  // alone: `transferUserInfo` makes the append; driven: `carryOut(driven:)`
        case .persistPeer, .persistContextSlot, .persistReceivedContext, .persistTransferMark, .removeTransfers,
            .removeComplications, .persistWatchState, .removeOutboundFile, .prepareInboundFile, .deliverInboundFile,
            .discardInboundFile:
            // State writes: `carryOut` makes them durable before the next action.
            break
        case .sendFileChunk(let connection, let key, let offset, let length):
            do {
                let data = try state.files.read(sequence: key.sequence, offset: offset, length: length)
                write(LinkFrame.fileChunk(key, offset: offset, data: data), to: connection.rawValue)
            } catch {
                onFatal("read of queued file \(key.sequence) failed: \(error)")
            }
        case .writeInboundChunk(let key, let offset, let data):
            // Written on the loop, synced on the outbox thread: a heartbeat or a message read
            // meanwhile is answered at once. The sync's completion is what acknowledges the chunk.
            durably("write arriving file \(key)") { try state.files.write(key, offset: offset, data: data) }
            let files = state.files
            let through = offset + UInt64(data.count)
            outboxQueue.async { [loop] in
                let result = Result { try files.sync(key) }
                loop.execute { [self] in
                    switch result {
                    case .success(true): handle(.inboundChunkPersisted(key, through: through))
                    case .success(false): break
                    case .failure(let error): onFatal("sync of arriving file \(key) failed: \(error)")
                    }
                }
            }
        case .verifyInboundFile(let key, let digest):
            // Hashing a large file takes a while: off the loop too.
            let files = state.files
            outboxQueue.async { [loop] in
                let matches = (try? files.digest(key)) == digest
                loop.execute { [self] in handle(.inboundFileVerified(key, matches: matches)) }
            }
        case .notify(let notification):
            if case .activated(let peer) = notification { journalPeer = peer }
            if case .linkEstablished(let peer) = notification { journalPeer = peer }
            journalNotified(notification)
            if case .messageCompleted(let id, let outcome) = notification,
                let waiter = messageWaiters.removeValue(forKey: id)
            {
                waiter(outcome)
            }
            onNotification(notification)
        case .log(let diagnostic):
            log(diagnostic.description)
        }
    }

    private func dial() {
        guard case .dial(let host, let port) = address, !stopped else { return }
        loop.connect(host: host, port: port, timeout: connectTimeout) { [unowned self] result in
            switch result {
            case .success(let connection):
                guard !self.stopped else {
                    connection.close()
                    return
                }
                self.register(connection)
                if let refusal = self.openConnection(connection) {
                    // The engine never heard of this connection: to it, the dial failed (else it
                    // would wait for that dial's outcome for good and never redial).
                    self.handle(.dialFailed(reason: refusal, now: self.now))
                }
            case .failure(let error):
                self.handle(.dialFailed(reason: "\(error)", now: self.now))
            }
        }
    }

    func durably(_ what: String, _ write: () throws -> Void) {
        do {
            try write()
        } catch {
            onFatal("\(what) failed: \(error)")
        }
    }
}
