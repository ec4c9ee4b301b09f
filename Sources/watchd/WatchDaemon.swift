import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import LinkProtocol
import LinkRuntime
import LiveMirror
import WatchEngine
import WatchStore
import WorkoutModel

/// `watchd`'s shell: owns the WatchEngine (cache applier, optimistic edits, session coordinator), the
/// plain-file cache, the link endpoint and the admin socket, all on one event loop.
///
/// Start-up order: the cache and session record from disk, the eager re-apply of the last received
/// context (the session coordinator reconciles right there, so a run that ended while watchd was
/// down ends its session now), then the link (dialling the phone), the admin socket, the readiness
/// line and `READY=1`.
final class WatchDaemon: LaunchedDaemon, @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    let configuration: WatchdConfiguration
    let loop: EventLoop
    let logger: Logger
    let cache: WatchCacheDirectory
    let state: LinkStateDirectory
    let link: LinkEndpoint
    var engine: WatchEngine
    var admin: AdminServer<WatchCommand>?
    let notifier: SystemdNotifier
    let startedAt = Date()
    var skippedCacheFiles: [String] = []
    var skippedContexts = 0
    var appliedContexts = 0
    var launchesReceived = 0
    var messageTokens: [UInt64: MessageToken] = [:]
    var watchdogTimer: TimerID?
    /// The last edit refusal, read back by the admin request that caused it.
    var lastRefusal: EditRefusal?
    let live: LiveRelay
    var clockFile: ClockFile

    /// The wall clock the engine stamps edits with (shifted by `testClockOffsetSeconds` in skew tests).
    var now: Timestamp { Timestamp.current.advanced(by: configuration.clockOffset) }

    init(configuration: WatchdConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        loop = try EventLoop(name: "watchd")
        cache = try WatchCacheDirectory(root: configuration.cacheDirectory)
        var linkConfiguration = configuration.link.configuration(role: .watch)
        linkConfiguration.maximumRedialDelay = configuration.redialMaximum
        link = try LinkEndpoint.forDaemon(
            configuration: linkConfiguration, stateDirectory: configuration.stateDirectory,
            pairingKeyFile: configuration.pairingKeyFile,
            address: .dial(host: configuration.phoneAddress.host, port: configuration.phoneAddress.port), loop: loop,
            journalMaximumBytes: configuration.link.journalMaximumBytes)
        state = link.state
        let contents = try cache.load()
        skippedCacheFiles = contents.skipped.map { "\($0.path): \($0.reason)" }
        clockFile = ClockFile(stateDirectory: configuration.stateDirectory)
        engine = WatchEngine(
            cache: WatchCache(restoringWorkouts: contents.workouts, splits: contents.splits), session: contents.session,
            queued: link.state.outbox.pending().compactMap {
                try? DocumentCoder.decode(WatchToPhoneMessage.self, from: $0.payload)
            },
            phoneEpoch: contents.phoneEpoch?.epoch, clockHighWater: try clockFile.read())
        notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        live = try LiveRelay(
            link: link, logger: logger, now: .current, versionFile: "\(configuration.stateDirectory)/live-version")
    }

    /// Runs the start-up sequence on the loop; returns the readiness line.
    func start() throws -> String {
        loop.preconditionInLoop()
        for skipped in skippedCacheFiles { logger.warning("skipped unreadable cache file", ["file": skipped]) }
        for note in state.recoveryNotes { logger.warning(note, component: "link") }
        let lastContext = try state.readReceivedContext()?.payload
        perform(engine.handle(.started(lastContext: lastContext, now: now)))
        link.log = { [logger] line in logger.info(line, component: "link") }
        link.onNotification = { [unowned self] notification in linkNotified(notification) }
        try link.start()
        admin = try AdminServer(loop: loop, path: configuration.adminSocket) { [unowned self] request in
            handleAdmin(request)
        }
        try? notifier.ready(status: "cache: \(engine.cache.workouts.count) runs")
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
        return "watchd ready phone=\(configuration.phoneAddress) admin=\(configuration.adminSocket) instance=\(state.instance)"
    }

    func stop() {
        loop.preconditionInLoop()
        try? notifier.stopping()
        admin?.close()
        link.stop()
        if let watchdogTimer { loop.cancelTimer(watchdogTimer) }
    }

    // MARK: Link → engine

    private func linkNotified(_ notification: LinkNotification) {
        switch notification {
        case .reachabilityChanged(let reachable):
            logger.info("phone reachability changed", ["reachable": "\(reachable)"], component: "link")
            perform(engine.handle(.reachabilityChanged(reachable)))
            live.handle(.reachabilityChanged(reachable, now: .current))
        case .contextReceived(let context):
            let before = engine.lastSkipped
            perform(engine.handle(.contextReceived(context.payload, now: now)))
            if engine.lastSkipped != nil, engine.lastSkipped != before || engine.lastApplied == nil {
                skippedContexts += 1
            } else {
                appliedContexts += 1
            }
            reconcileLive()
        case .launchReceived(let payload):
            launchesReceived += 1
            perform(engine.handle(.launchReceived(payload: payload, now: now)))
        case .messageReceived(let id, let payload, _):
            if LiveRelay.isLiveMessage(payload) {
                live.received(payload)
                link.answerMessage(id: id, .handled)
            } else {
                link.answerMessage(id: id, .failed(.deliveryFailed, reason: "watchd has no handler for this message"))
            }
        case .userInfoReceived(let key, _):
            logger.notice("ignored a transfer from the phone (none are defined)", ["key": "\(key)"], component: "link")
            link.transferProcessed(key)
        case .linkEstablished(let peer):
            logger.info("phone linked", ["peer": "\(peer)"], component: "link")
        case .linkLost(let reason):
            logger.info("phone unlinked", ["reason": reason], component: "link")
        case .transferFailed(let sequence, let error):
            logger.notice("transfer not delivered", ["sequence": sequence, "reason": error], component: "link")
        case .activated:
            perform(engine.handle(.linkActivated))
        case .contextAcknowledged, .messageCompleted, .transferFinished, .launchDropped, .peerAppStateChanged:
            break
        }
    }

    /// Durable repair for the live mirror: every run a flow or cover is on is compared with the
    /// watch's authoritative (applied) copy; a run pruned from the cache closes its views. A flow on a
    /// run the phone has locked for editing pops out (S8): it is closed here, and its liveEnded drops
    /// the phone's cover, so no phase of it can be advanced until the phone lets go.
    func reconcileLive() {
        let followed = Set(live.mirror.flows.keys).union(live.mirror.covers.keys)
        for runID in followed.sorted() {
            if let run = engine.cache.workouts[runID] {
                live.handle(.documentAbsorbed(run, now: .current))
                if live.mirror.flows[runID] != nil, engine.cache.isParked(run) {
                    logger.info(
                        "live flow closed: the phone is editing the run (S8)", ["run": "\(runID)"], component: "live")
                    live.handle(.flowClosed(runID: runID, now: .current))
                }
            } else {
                live.handle(.runRemoved(runID: runID))
            }
        }
    }

    // MARK: Engine → the world

    /// Carries out the engine's actions in order (a failed durable write exits; see
    /// `DaemonLauncher.performDurably`).
    func perform(_ actions: [WatchEngine.Action]) {
        DaemonLauncher.performDurably(actions, logger: logger, perform)
        // The clock's high-water mark, when an edit moved it: a restart must never stamp below it.
        DaemonLauncher.performDurably([engine.editor.clock.last], logger: logger) { try clockFile.persist($0) }
    }

    private func perform(_ action: WatchEngine.Action) throws {
        switch action {
        case .persistWorkout(let run):
            try cache.write(run)
            // Every stored document repairs the live mirror, local edits too (the phone may be away).
            live.handle(.documentAbsorbed(run, now: .current))
        case .deleteWorkout(let id):
            try cache.removeWorkout(id)
            live.handle(.runRemoved(runID: id))
        case .persistSplit(let split):
            try cache.write(split)
        case .deleteSplit(let id):
            try cache.removeSplit(id)
        case .persistPhoneEpoch(let record):
            try cache.write(record)
        case .persistSession(let record):
            try cache.write(record)
            logger.info("session", ["state": describe(record.state)], component: "session")
            link.journal?.record(.session, run: record.state.runID?.description, detail: describe(record.state))
        case .sendMessage(let token, let message):
            link.sendMessage(message.encoded(), wantsReply: true, run: message.runID) { [unowned self] outcome in
                switch outcome {
                case .replied, .delivered:
                    perform(engine.handle(.messageDelivered(token)))
                case .failed(let error):
                    perform(engine.handle(.messageSendFailed(token, reason: error.description)))
                }
            }
        case .transferUserInfo(let message):
            link.transferUserInfo(message.encoded(), run: message.runID) { [unowned self] result in
                if case .failure(let error) = result {
                    logger.warning("could not queue a transfer", ["reason": "\(error)"], component: "link")
                    perform(engine.handle(.transferRefused(message, reason: "\(error)")))
                }
            }
        case .editRefused(_, let refusal):
            lastRefusal = refusal
        case .log(let line):
            logger.info(line, component: "watch")
        }
    }
}

/// One line for a session state.
func describe(_ state: SessionState) -> String {
    switch state {
    case .idle:
        return "idle"
    case .running(let session):
        return "running run=\(session.runID) since=\(session.startedAt) origin=\(session.origin.rawValue)"
    case .ended(let session):
        let outcome: String
        switch session.outcome {
        case .finishedAndSaved(let metrics):
            outcome = "finishedAndSaved activeSeconds=\(Int(metrics.activeSeconds)) sets=\(metrics.setsCompleted) volume=\(metrics.totalVolume)"
        case .discarded:
            outcome = "discarded"
        case .systemFailure(let reason):
            outcome = "systemFailure reason=\(reason)"
        }
        return "ended run=\(session.runID) at=\(session.endedAt) \(outcome)"
    }
}

extension WatchToPhoneMessage {
    /// The run an update is about, for the journal.
    fileprivate var runID: String? {
        guard case .workoutUpdate(let run, _) = self else { return nil }
        return run.id.description
    }
}
