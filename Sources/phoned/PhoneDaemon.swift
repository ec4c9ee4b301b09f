import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import LinkProtocol
import LinkRuntime
import LiveMirror
import PhoneStore
import SyncEngine
import Trace
import WorkoutModel

/// `phoned`'s shell: owns the SyncEngine, the document directory, its watcher, the link endpoint and
/// the admin socket, all on one event loop, and carries out what the engine decides.
///
/// Start-up order: the state directory (instance ID, settings), the initial gather of the whole
/// document directory (nothing can be pushed before it finishes: the link is not even listening
/// yet), the link, the watcher, the admin socket, then the readiness line and `READY=1`.
final class PhoneDaemon: LaunchedDaemon, @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    let configuration: PhonedConfiguration
    let loop: EventLoop
    let logger: Logger
    let documents: DocumentDirectory
    let state: LinkStateDirectory
    let link: LinkEndpoint
    var engine: SyncEngine
    var watcher: DirectoryWatcher?
    var admin: AdminServer<PhoneCommand>?
    let notifier: SystemdNotifier
    var skippedFiles: [SkippedEntry] = []
    let startedAt = Date()
    var linkPort: UInt16 = 0
    var launchesSent = 0
    var launchesDropped = 0
    var watchdogTimer: TimerID?
    /// The timer for the engine's `nextDeadline` (a push retry, a run leaving the recent window).
    var pushTimer: (id: TimerID, at: Timestamp)?
    let live: LiveRelay
    var clockFile: ClockFile
    /// The open batch's transfers, acknowledged at its end, and its ingest log lines.
    var batchKeys: [TransferKey] = []
    var batchLines: [IngestLine] = []

    private var settingsPath: String { "\(configuration.stateDirectory)/settings.json" }
    private var epochPath: String { "\(configuration.stateDirectory)/epoch.json" }

    init(configuration: PhonedConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        loop = try EventLoop(name: "phoned")
        // The document directory's parents may not exist yet on a fresh machine (DocumentDirectory
        // creates one level only, so a typo in a deep path is not silently materialised elsewhere).
        try FileManager.default.createDirectory(
            atPath: (configuration.documentsDirectory as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        documents = try DocumentDirectory(root: configuration.documentsDirectory)
        var linkConfiguration = configuration.link.configuration(role: .phone)
        linkConfiguration.maximumUnauthenticatedConnections = configuration.maximumPendingHandshakes
        linkConfiguration.maximumUnauthenticatedConnectionsPerAddress = configuration.maximumPendingHandshakesPerAddress
        link = try LinkEndpoint.forDaemon(
            configuration: linkConfiguration, stateDirectory: configuration.stateDirectory,
            pairingKeyFile: configuration.pairingKeyFile,
            address: .listen(host: configuration.listen.host, port: configuration.listen.port), loop: loop,
            journalMaximumBytes: configuration.link.journalMaximumBytes)
        state = link.state
        var settings: Settings?
        if let bytes = try AtomicFile.read("\(configuration.stateDirectory)/settings.json") {
            settings = try DocumentCoder.decode(Settings.self, from: bytes)
        }
        var epoch: PhoneEpochRecord?
        if let bytes = try AtomicFile.read("\(configuration.stateDirectory)/epoch.json") {
            epoch = try DocumentCoder.decode(PhoneEpochRecord.self, from: bytes)
        }
        engine = SyncEngine(
            settings: settings,
            policy: PushPolicy(
                recentLimit: configuration.recentRunsLimit,
                recentWindow: configuration.recentRunsWindow, maximumBytes: linkConfiguration.maximumContextBytes),
            epoch: epoch?.epoch)
        clockFile = ClockFile(stateDirectory: configuration.stateDirectory)
        engine.clock = HybridLogicalClock(origin: .phone, highWater: try clockFile.read())
        notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        live = try LiveRelay(
            link: link, logger: logger, now: .current, versionFile: "\(configuration.stateDirectory)/live-version")
    }

    /// Runs the start-up sequence on the loop; returns the readiness line.
    func start() throws -> String {
        loop.preconditionInLoop()
        for note in state.recoveryNotes { logger.warning(note, component: "link") }
        // The watcher starts before the scan so nothing that lands during it is missed; its reports
        // queue on this loop and are handled after the gather (a document seen twice is equal by
        // value and ignored).
        let loop = self.loop
        watcher = try DirectoryWatcher(
            directory: documents,
            onChange: { change in loop.execute { [unowned self] in self.externalChange(change) } },
            onSkipped: { entry in loop.execute { [unowned self] in self.skipped(entry) } },
            onNotice: { notice in loop.execute { [unowned self] in self.watcherNoticed(notice) } },
            onSettled: { path in loop.execute { [unowned self] in self.skippedFiles.removeAll { $0.path == path } } })
        // The watch may still hold as active what the last context the link holds carried.
        if let payload = link.contextSlot?.payload,
            let last = try? DocumentCoder.decode(ApplicationContext.self, from: payload)
        {
            engine.watchMayHoldActive = Set(last.workouts.filter(\.isActive).map(\.id) + (last.heldBackRunIDs ?? []))
        }
        let report = try documents.scan { [self] document in
            perform(engine.handle(.documentScanned(document, now: .current)))
        }
        skippedFiles = report.skipped
        for skipped in report.skipped {
            logger.warning("skipped unreadable file", ["path": skipped.path, "reason": skipped.reason], component: "documents")
        }
        logger.info("initial gather", ["report": report.description], component: "documents")
        perform(engine.handle(.gatherFinished(now: .current)))

        link.log = { [logger] line in logger.info(line, component: "link") }
        link.onNotification = { [unowned self] notification in linkNotified(notification) }
        linkPort = try link.start() ?? 0
        if link.status().activated { perform(engine.handle(.linkActivated(now: .current))) }

        admin = try AdminServer(loop: loop, path: configuration.adminSocket) { [unowned self] request in
            handleAdmin(request)
        }
        try? notifier.ready(status: "linked: no; documents: \(engine.splits.count) splits, \(engine.index.count) runs")
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
        return "phoned ready port=\(linkPort) admin=\(configuration.adminSocket) instance=\(state.instance)"
    }

    /// Graceful shutdown: stop taking requests and changes, tell the watch, close the link.
    func stop() {
        loop.preconditionInLoop()
        try? notifier.stopping()
        admin?.close()
        watcher?.stop()
        link.stop()
        if let watchdogTimer { loop.cancelTimer(watchdogTimer) }
    }

    // MARK: Link → engine

    private func linkNotified(_ notification: LinkNotification) {
        switch notification {
        case .activated:
            perform(engine.handle(.linkActivated(now: .current)))
        case .reachabilityChanged(let reachable):
            logger.info("watch reachability changed", ["reachable": "\(reachable)"], component: "link")
            if reachable { perform(engine.handle(.reachabilityRestored(now: .current))) }
            live.handle(.reachabilityChanged(reachable, now: .current))
        case .messageReceived(let id, let payload, let wantsReply):
            messageReceived(id: id, payload: payload, wantsReply: wantsReply)
        case .userInfoReceived(let key, let payload):
            if !engine.isBatching {
                // The transfers of one read arrive in this turn; work queued now runs after them.
                perform(engine.handle(.batchBegan))
                loop.execute { [unowned self] in endBatch() }
            }
            switch decodeWatchMessage(payload, via: "userInfo \(key)") {
            case .success(.workoutUpdate(let run, let epoch)):
                ingest(
                    run, epoch: epoch, via: .userInfo,
                    cause: TraceEvent.transferCause(queue: key.queue.description, sequence: key.sequence))
            case .success(.requestSync):
                perform(engine.handle(.requestSyncReceived(now: .current)))
            case .failure:
                break
            }
            // Acknowledged at the end of the batch, once its writes are on disk (or refused with a
            // logged reason: either way the transfer is done and must not block the queue).
            batchKeys.append(key)
        case .launchDropped:
            launchesDropped += 1
            logger.notice("launch dropped: the watch is not linked", component: "link")
        case .linkEstablished(let peer):
            logger.info("watch linked", ["peer": "\(peer)"], component: "link")
        case .linkLost(let reason):
            logger.info("watch unlinked", ["reason": reason], component: "link")
        case .contextAcknowledged(let generation):
            perform(engine.handle(.contextAcknowledged(generation: generation, now: .current)))
        case .contextReceived, .messageCompleted, .transferFinished, .transferFailed, .launchReceived,
            .peerAppStateChanged:
            break
        }
    }

    /// The end of a batch of transfers: its writes and push, then the ingest lines (a `merged` line
    /// means the document is on disk), then one acknowledgement round for all of them.
    private func endBatch() {
        perform(engine.handle(.batchEnded(now: .current)))
        for line in batchLines { logIngest(line) }
        batchLines = []
        reconcileLive()
        link.transfersProcessed(batchKeys)
        batchKeys = []
    }

    private func messageReceived(id: UInt64, payload: [UInt8], wantsReply: Bool) {
        if LiveRelay.isLiveMessage(payload) {
            live.received(payload)
            link.answerMessage(id: id, .handled)
            return
        }
        switch decodeWatchMessage(payload, via: "message \(id)") {
        case .success(.workoutUpdate(let run, let epoch)):
            let cause = TraceEvent.messageCause(sender: link.status().peer ?? "unknown", id: id)
            let outcome = ingest(run, epoch: epoch, via: .message, cause: cause)
            reconcileLive()
            link.answerMessage(id: id, wantsReply ? .reply(Array("{\"outcome\":\"\(outcome.rawValue)\"}".utf8)) : .handled)
        case .success(.requestSync):
            perform(engine.handle(.requestSyncReceived(now: .current)))
            link.answerMessage(id: id, wantsReply ? .reply(Array("{\"outcome\":\"pushed\"}".utf8)) : .handled)
        case .failure(let error):
            // WatchConnectivity's name for a payload the receiver cannot take.
            link.answerMessage(id: id, .failed(.payloadUnsupportedTypes, reason: "phoned cannot decode it: \(error)"))
        }
    }

    /// The watch's message; a payload that does not decode is logged and returned as the failure.
    private func decodeWatchMessage(
        _ payload: [UInt8], via channel: String
    ) -> Result<WatchToPhoneMessage, DocumentError> {
        Result { () throws(DocumentError) in try DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) }
            .mapError { error in
                logger.warning(
                    "refused a watch update", ["via": channel, "reason": error.description], component: "ingest")
                return error
            }
    }

    @discardableResult
    private func ingest(
        _ run: WorkoutDocument, epoch: Timestamp?, via channel: SyncEngine.IngestChannel, cause: String
    ) -> SyncEngine.IngestOutcome {
        // The merge needs the phone's copy: an old run only summarised in memory is loaded first.
        var loaded: WorkoutDocument?
        if engine.needsDocument(run.id), let summary = engine.index.summaries[run.id] {
            do {
                loaded = try documents.loadWorkout(id: run.id, startedAt: summary.startedAt)
            } catch {
                logger.warning(
                    "could not load the phone's copy to merge", ["run": "\(run.id)", "reason": "\(error)"],
                    component: "ingest")
            }
        }
        let (outcome, actions) = engine.ingestFromWatch(run, epoch: epoch, loaded: loaded, via: channel, now: .current)
        perform(actions)
        // Logged after the write, so a `merged` line always means the document is on disk: in a
        // batch that is at its end.
        let line = IngestLine(run: run.id, channel: channel, outcome: outcome, version: run.version, cause: cause)
        if engine.isBatching {
            batchLines.append(line)
        } else {
            logIngest(line)
        }
        return outcome
    }

    struct IngestLine {
        var run: DocumentID
        var channel: SyncEngine.IngestChannel
        var outcome: SyncEngine.IngestOutcome
        var version: Stamp
        var cause: String
    }

    private func logIngest(_ line: IngestLine) {
        logger.info(
            "ingest",
            ["run": "\(line.run)", "via": "\(line.channel)", "outcome": line.outcome.rawValue, "version": "\(line.version)"],
            component: "ingest")
        link.journal?.record(
            .ingest, cause: line.cause, run: "\(line.run)", detail: "\(line.outcome.rawValue) via \(line.channel)")
    }

    // MARK: Watcher → engine

    private func externalChange(_ change: SyncEngine.ExternalChange) {
        perform(engine.handle(.externalChange(change, now: .current)))
        reconcileLive()
    }

    /// Durable repair for the live mirror: every run a flow or cover is on is compared with the
    /// phone's authoritative copy (a run that is gone closes its views).
    func reconcileLive() {
        let followed = Set(live.mirror.flows.keys).union(live.mirror.covers.keys)
        for runID in followed.sorted() {
            if let run = engine.run(runID) {
                live.handle(.documentAbsorbed(run, now: .current))
            } else if engine.index.summaries[runID] == nil {
                live.handle(.runRemoved(runID: runID))
            }
        }
    }

    private func skipped(_ entry: SkippedEntry) {
        skippedFiles.removeAll { $0.path == entry.path }
        skippedFiles.append(entry)
        logger.warning("skipped unreadable file", ["path": entry.path, "reason": entry.reason], component: "documents")
    }

    /// A folder moved or the kernel dropped events: rescan, feeding every document as an external
    /// change (equal values are ignored by the engine, so only real differences flow on).
    private func watcherNoticed(_ notice: WatcherNotice) {
        logger.notice("watcher", ["notice": notice.description], component: "documents")
        switch notice {
        case .folderMoved, .eventsLost:
            do {
                let report = try documents.scan { [self] document in
                    perform(engine.handle(.externalChange(.documentChanged(document), now: .current)))
                }
                skippedFiles = report.skipped
            } catch {
                logger.error("rescan failed", ["reason": "\(error)"], component: "documents")
            }
        default:
            break
        }
    }

    // MARK: Engine → the world

    /// Carries out the engine's actions in order (a failed durable write exits; see
    /// `DaemonLauncher.performDurably`).
    func perform(_ actions: [SyncEngine.Action]) {
        DaemonLauncher.performDurably(actions, logger: logger, perform)
        // The clock's high-water mark, when an edit or an ingest moved it: a restart never stamps below
        // it. A batch persists it once, at its end, with its writes.
        if !engine.isBatching {
            DaemonLauncher.performDurably([engine.clock.last], logger: logger) { try clockFile.persist($0) }
        }
        armPushTimer()
    }

    /// Keeps one timer at the engine's next deadline, so a refused push is retried and a run leaves
    /// the push when it leaves the recent window, with nothing else happening.
    private func armPushTimer() {
        let deadline = engine.nextDeadline
        guard pushTimer?.at != deadline else { return }
        if let pushTimer { loop.cancelTimer(pushTimer.id) }
        pushTimer = nil
        guard let deadline else { return }
        let delay = max(Timestamp.current.duration(to: deadline), .zero)
        let id = loop.scheduleTimer(after: delay) { [unowned self] in
            pushTimer = nil
            perform(engine.handle(.tick(now: .current)))
        }
        pushTimer = (id, deadline)
    }

    private func perform(_ action: SyncEngine.Action) throws {
        switch action {
        case .writeSplit(let split):
            try documents.write(split)
        case .removeSplitFile(let id):
            _ = try documents.removeSplit(id: id)
        case .writeWorkout(let run):
            try documents.write(run)
            link.journal?.record(.fileWritten, run: "\(run.id)")
        case .removeWorkoutFile(let id, let startedAt):
            _ = try documents.removeWorkout(id: id, startedAt: startedAt)
        case .writeTombstone(let stub):
            try documents.write(stub)
            perform(engine.handle(.tombstoneWritten(stub.id, now: .current)))
        case .pushContext(let context, let force):
            // Stamped before the frame goes out: the push is what causes it.
            let built = link.journal?.stamp()
            do {
                try link.updateApplicationContext(DocumentCoder.encodeCompact(context), force: force)
                _ = engine.handle(.pushQueued(generation: link.status().contextGenerationSent ?? 0))
                // No generation here: inside a link notification the endpoint assigns it only after
                // this returns. The context frame that follows carries it.
                link.journal?.record(.push, detail: force ? "forced" : nil, at: built)
            } catch {
                logger.warning("push not sent", ["reason": error.description], component: "push")
                perform(engine.handle(.pushFailed(reason: error.description, now: .current)))
            }
        case .loadRuns(let wanted):
            var loaded: [WorkoutDocument] = []
            var unreadable: [DocumentID] = []
            for (id, startedAt) in wanted.sorted(by: { $0.key < $1.key }) {
                do {
                    loaded.append(try documents.loadWorkout(id: id, startedAt: startedAt))
                } catch {
                    logger.warning(
                        "could not load a run", ["run": "\(id)", "reason": "\(error)"], component: "documents")
                    unreadable.append(id)
                }
            }
            perform(engine.handle(.runsLoaded(loaded, unreadable: unreadable, now: .current)))
        case .launchWatchApp(let runID):
            launchesSent += 1
            link.launch(DocumentCoder.encodeCompact(WorkoutLaunchRequest(runID: runID)))
        case .persistSettings(let settings):
            try AtomicFile.write(DocumentCoder.encodeForDisk(settings), to: settingsPath)
        case .persistEpoch(let epoch):
            try AtomicFile.write(DocumentCoder.encodeForDisk(PhoneEpochRecord(epoch)), to: epochPath)
        case .log(let line):
            logger.info(line, component: "sync")
        }
    }
}
