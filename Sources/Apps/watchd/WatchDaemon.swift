import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import Foundation
import LinkRuntime
import Nodes
import POSIX
import WatchEngine
import WatchStore
import WorkoutModel

/// `watchd`'s shell: turns the link and the admin socket into `WatchNode` events, and the node's
/// store actions into cache files. Every decision is the node's.
///
/// Start-up order: the cache and session record from disk, the eager re-apply of the last received
/// context (the session coordinator reconciles right there, so a run that ended while watchd was
/// down ends its session now), then the link (dialling the phone), the admin socket, the readiness
/// line and `READY=1`.
final class WatchDaemon: LaunchedDaemon, DaemonPorts, @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    let configuration: WatchdConfiguration
    let loop: EventLoop
    let cache: WatchCacheDirectory
    private(set) var shell: NodeShell<WatchNode>!
    var admin: AdminServer<WatchCommand>?
    private let skippedCacheFiles: [String]

    init(configuration: WatchdConfiguration, logger: Logger) throws {
        self.configuration = configuration
        let state = configuration.stateDirectory
        loop = try EventLoop(name: "watchd")
        cache = try WatchCacheDirectory(root: configuration.cacheDirectory)
        var link = configuration.link.configuration(role: .watch)
        link.maximumRedialDelay = configuration.redialMaximum
        let endpoint = try LinkEndpoint.forDaemon(
            configuration: link, stateDirectory: state, pairingKeyFile: configuration.pairingKeyFile,
            address: .dial(host: configuration.phoneAddress.host, port: configuration.phoneAddress.port), loop: loop,
            journalMaximumBytes: configuration.link.journalMaximumBytes)
        let contents = try cache.load()
        skippedCacheFiles = contents.skipped.map { "\($0.path): \($0.reason)" }
        let clockFile = ClockFile(stateDirectory: state)
        let engine = WatchEngine(
            cache: WatchCache(restoringWorkouts: contents.workouts, splits: contents.splits), session: contents.session,
            queued: endpoint.state.outbox.pending().compactMap {
                try? DocumentCoder.decode(WatchToPhoneMessage.self, from: $0.payload)
            },
            clockHighWater: try clockFile.read(), phoneEpochRecord: contents.phoneEpoch)
        let node = WatchNode(
            engine: engine,
            live: LiveDriver(now: .current, persistedVersion: try StateFiles.liveVersion(stateDirectory: state)),
            clockOffset: configuration.clockOffset, complication: contents.complication, life: endpoint.state.starts)
        shell = NodeShell(
            node: node, daemon: self, loop: loop, link: endpoint, logger: logger, clockFile: clockFile,
            stateDirectory: state, receivedFilesQuotaBytes: configuration.link.receivedFilesQuotaBytes,
            notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment),
            otherWrittenDirectories: [("cache directory", configuration.cacheDirectory)],
            otherIntakeDirectories: [("cache directory", configuration.cacheDirectory)])
    }

    // MARK: The shell's ports

    typealias Node = WatchNode

    func storeWrite(_ action: WatchNode.Action) -> @Sendable () throws -> Void {
        { [cache] in try cache.perform(action) }
    }

    /// The node reads nothing of the cache's (it holds it all).
    func read(_ needs: NeedsReads) -> Reads { Reads() }

    /// Every store action of the watch's is a durable write (`storeWrite`).
    func performStore(_ action: WatchNode.Action) {}

    func closeServices() { admin?.close() }

    /// Runs the start-up sequence on the loop; returns the readiness line.
    func start() throws -> String {
        loop.preconditionInLoop()
        let link = shell.link
        let received = try link.state.readReceivedContext()
        shell.post(
            .started(
                lastContext: received?.payload, sender: received.map { "\($0.sender)" },
                skippedCacheFiles: skippedCacheFiles))
        try link.start()
        admin = try AdminServer(loop: loop, path: configuration.adminSocket) { [unowned self] command, respond in
            shell.admin(respond: respond) { .admin($0, command, facts: $1) }
        }
        shell.logAcceptFailures(of: admin)
        shell.notifyReady("cache: \(shell.node.inner.engine.cache.workouts.count) runs")
        return
            "watchd ready phone=\(configuration.phoneAddress) admin=\(configuration.adminSocket) instance=\(link.state.instance)"
    }

    func stop(signal: String) {
        shell.post(.shutdownRequested(signal: signal))
    }
}

extension WatchCacheDirectory {
    /// The node's own actions: the cache's files.
    func perform(_ action: WatchNode.Action) throws {
        switch action {
        case .store(.persistWorkout(let run)): try write(run)
        case .store(.publishWorkout(let id)): publish(id)
        case .store(.deleteWorkout(let id)): try removeWorkout(id)
        case .store(.persistSplit(let split)): try write(split)
        case .store(.deleteSplit(let id)): try removeSplit(id)
        case .store(.persistPhoneEpoch(let record)): try write(record)
        case .store(.persistSession(let record)): try write(record)
        case .store(.persistComplication(let complication)): try write(complication)
        case .node: break
        }
    }
}
