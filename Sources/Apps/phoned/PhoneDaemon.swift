import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import LinkRuntime
import Nodes
import POSIX
import PhoneStore
import SyncEngine
import WorkoutModel

/// `phoned`'s shell: turns the document directory, its watcher, the link and the admin socket into
/// `PhoneNode` events, and the node's store actions into files. Every decision is the node's.
///
/// Start-up order: the state directory (instance ID, settings), the initial gather of the whole
/// document directory (nothing can be pushed before it finishes: the link is not even listening
/// yet), the link, the watcher, the admin socket, then the readiness line and `READY=1`.
final class PhoneDaemon: LaunchedDaemon, DaemonPorts, @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    let configuration: PhonedConfiguration
    let loop: EventLoop
    let documents: DocumentDirectory
    private(set) var shell: NodeShell<PhoneNode>!
    /// The state directory and the link's file store, where some store writes land.
    private let state: String
    private let files: FileTransferStore
    var watcher: DirectoryWatcher?
    var admin: AdminServer<PhoneCommand>?
    /// The run index being written after the start, which a graceful stop lets finish.
    var indexWriter: SystemThread?

    init(configuration: PhonedConfiguration, logger: Logger) throws {
        self.configuration = configuration
        let state = configuration.stateDirectory
        self.state = state
        loop = try EventLoop(name: "phoned")
        // The document directory's parents may not exist yet on a fresh machine (DocumentDirectory
        // creates one level only, so a typo in a deep path is not silently materialised elsewhere).
        try FileManager.default.createDirectory(
            atPath: (configuration.documentsDirectory as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        documents = try DocumentDirectory(
            root: configuration.documentsDirectory, pendingRecord: "\(state)/pending-documents",
            spares: "\(state)/spare-documents")
        if documents.droppedPendingRecord {
            logger.warning(
                "pending documents dropped: the document directory has neither documents nor an epoch file (wiped)",
                ["record": "\(state)/pending-documents"])
        }
        if let damage = documents.pendingDamage {
            logger.warning("pending documents not read; replaced at the next write", ["reason": damage])
        }
        var link = configuration.link.configuration(role: .phone)
        link.maximumUnauthenticatedConnections = configuration.maximumPendingHandshakes
        link.maximumUnauthenticatedConnectionsPerAddress = configuration.maximumPendingHandshakesPerAddress
        let endpoint = try LinkEndpoint.forDaemon(
            configuration: link, stateDirectory: state, pairingKeyFile: configuration.pairingKeyFile,
            address: .listen(host: configuration.listen.host, port: configuration.listen.port), loop: loop,
            journalMaximumBytes: configuration.link.journalMaximumBytes)
        let policy = PushPolicy(
            recentLimit: configuration.recentRunsLimit, recentWindow: configuration.recentRunsWindow,
            maximumBytes: link.maximumContextBytes)
        var engine = SyncEngine(
            settings: try StateFiles.readState(Settings.self, "\(state)/settings.json"), policy: policy,
            epoch: try documents.readEpoch(),
            stateEpoch: try StateFiles.readState(PhoneEpochRecord.self, "\(state)/epoch.json")?.epoch)
        let clockFile = ClockFile(stateDirectory: state)
        engine.clock = HybridLogicalClock(origin: .phone, highWater: try clockFile.read())
        let node = PhoneNode(
            engine: engine,
            live: LiveDriver(now: .current, persistedVersion: try StateFiles.liveVersion(stateDirectory: state)),
            complicationsPerDay: configuration.complicationTransfersPerDay,
            complicationBudget: try StateFiles.readState(ComplicationBudget.self, "\(state)/complication-budget.json")
                ?? ComplicationBudget(), life: endpoint.state.starts)
        files = endpoint.state.files
        shell = NodeShell(
            node: node, daemon: self, loop: loop, link: endpoint, logger: logger, clockFile: clockFile,
            stateDirectory: state, receivedFilesQuotaBytes: configuration.link.receivedFilesQuotaBytes,
            notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment),
            otherWrittenDirectories: [("documents directory", configuration.documentsDirectory)],
            // The watch's edits wait in the state directory while the documents directory is read-only.
            otherIntakeDirectories: [])
    }

    // MARK: The shell's ports

    typealias Node = PhoneNode

    func storeWrite(_ action: PhoneNode.Action) -> @Sendable () throws -> Void {
        guard case .store(let write) = action else { preconditionFailure("\(action) is not a store write") }
        return { [documents, state, files] in
            try documents.perform(write, stateDirectory: state, inboxPath: files.inboxPath)
        }
    }

    func read(_ needs: NeedsReads) -> Reads { documents.read(needs) }

    func performStore(_ action: PhoneNode.Action) {
        switch action {
        case .loadRuns(let wanted):
            shell.post(.runsLoaded(documents.read(NeedsReads(documents: wanted))))
        case .rescan:
            rescan()
        case .store, .node:
            break  // store writes go to the write queue (`storeWrite`); the shell does the rest
        }
    }

    func closeServices() {
        admin?.close()
        watcher?.stop()
    }

    /// Runs the start-up sequence on the loop; returns the readiness line.
    func start() throws -> String {
        loop.preconditionInLoop()
        let link = shell.link
        // The watcher starts before the scan so nothing that lands during it is missed; its reports
        // queue on this loop and are handled after the gather (a document seen twice is equal by
        // value and ignored).
        let loop = self.loop
        let post: @Sendable (PhoneNode.Event) -> Void = { [unowned self] event in
            loop.execute { self.shell.post(event) }
        }
        watcher = try DirectoryWatcher(
            directory: documents, onChange: { post(.externalChange($0)) },
            onSkipped: { post(.fileSkipped(PhoneNode.SkippedFile($0))) },
            onNotice: { post(.watcherNoticed($0.description, rescan: $0.needsRescan)) },
            onSettled: { post(.fileSettled(path: $0)) })
        shell.post(.started(lastContext: shell.node.link.currentContextSlot?.payload))
        let progress = ScanProgress { [shell] in shell.post(.gatherProgress(scanned: $0, elapsedSeconds: $1)) }
        let (report, writeIndex) = try documents.gather(
            indexAt: "\(configuration.stateDirectory)/\(RunIndexFile.name)", progress: progress, shell.post)
        shell.post(.gatherFinished(report.description, skipped: report.skipped.map(PhoneNode.SkippedFile.init)))
        // Written on a thread of its own: a start is not made slower by recording the next one.
        indexWriter = RunIndexFile.writeInBackground(writeIndex, loop: loop, post: shell.post)
        shell.listenPort = Int(try link.start() ?? 0)
        shell.post(.linkStarted(activated: shell.node.link.isActivated))
        admin = try AdminServer(loop: loop, path: configuration.adminSocket) { [unowned self] command, respond in
            guard let bytes = try? SecureRandom.bytes(count: 16) else { return respond(.error("no random bytes")) }
            shell.admin(respond: respond) { .admin($0, command, freshID: DocumentID(bytes: bytes), facts: $1) }
        }
        shell.logAcceptFailures(of: admin)
        let engine = shell.node.inner.engine
        shell.notifyReady("linked: no; documents: \(engine.splits.count) splits, \(engine.index.count) runs")
        return
            "phoned ready port=\(shell.listenPort) admin=\(configuration.adminSocket) instance=\(link.state.instance)"
    }

    func stop(signal: String) {
        indexWriter?.join()
        indexWriter = nil
        shell.post(.shutdownRequested(signal: signal))
    }

    /// The node asked for a full scan (the watcher lost track): every document is offered again.
    private func rescan() {
        do {
            let report = try documents.scan { shell.post(.externalChange(.documentChanged($0))) }
            shell.post(.rescanFinished(.success(report.skipped.map(PhoneNode.SkippedFile.init))))
        } catch {
            shell.post(.rescanFinished(.failure(ReadFailure(error.description))))
        }
    }
}
