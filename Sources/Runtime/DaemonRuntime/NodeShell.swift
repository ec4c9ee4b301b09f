import AdminCommands
import DaemonConfiguration
import DurableFiles
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import POSIX
import Synchronization
import Trace
import WorkoutModel

/// What a daemon gives its shell: its own store and services (passed at `init`).
package protocol DaemonPorts<Node>: AnyObject {
    associatedtype Node: ShelledNode
    /// The durable store write `action` stands for, to run on the write queue (`ShelledNode.isStoreWrite`).
    func storeWrite(_ action: Node.Action) -> @Sendable () throws -> Void
    /// Reads the documents the node asked for.
    func read(_ needs: NeedsReads) -> Reads
    /// Carries out one of the node's other store actions (it may feed events back with `post`).
    func performStore(_ action: Node.Action) throws
    /// Stops the daemon's own services (the admin socket, phoned's watcher).
    func closeServices()
}

/// The shell both daemons share: the event loop's host of the node's runner (`NodeRunner`, which
/// decides the order of everything). It stamps events with the clocks, reads what the node asks
/// for, and carries out the actions: the link's through the endpoint (frames, dials, timers, the
/// outboxes), logs, the journal, admin replies, timers, the clock and live-version files, systemd,
/// exit. The daemon adds its own store and services (`DaemonPorts`). Durable writes (the store's
/// and the link's state) run on one write queue off the loop, in order (docs/PROTOCOL.md, "The order
/// of writes").
package final class NodeShell<Node: ShelledNode>: RunnerPorts, @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    package private(set) var runner: NodeRunner<Node>!
    package let loop: EventLoop
    package let link: LinkEndpoint
    package let logger: Logger
    let clockFile: ClockFile
    let stateDirectory: String
    let notifier: SystemdNotifier
    private let startedAt = ContinuousClock.now
    var timers: [NodeTimer: TimerID] = [:]
    var responders: [AdminRequestID: AdminResponder] = [:]
    private var lastRequest: UInt64 = 0
    var watchdogTimer: TimerID?
    /// Where every durable write runs, off the loop, in order.
    let writes = DispatchQueue(label: "durable-writes")
    /// Set at the first failed write: the writes queued after it never begin.
    let writeFailed = Atomic<Bool>(false)
    /// Turns cut short, by why (logged now and then, not each time).
    private var diagnostics = TurnDiagnosticTally()

    /// The daemon: its store and its services.
    unowned let daemon: any DaemonPorts<Node>
    /// phoned's listening port, for status.
    package var listenPort = 0
    /// What `<state>/received-files` may take (`receivedFilesQuotaBytes`).
    let receivedFilesQuotaBytes: Int
    /// The directories the daemon writes, named (`documents directory`), asked at each admin
    /// request whether their file system is read-only.
    let writtenDirectories: [(name: String, path: String)]
    /// The directories what the link brings is written to (`NodeShell+Intake`).
    var intake: IntakeDirectories

    package init(
        node: Node, daemon: any DaemonPorts<Node>, loop: EventLoop, link: LinkEndpoint, logger: Logger,
        clockFile: ClockFile, stateDirectory: String, receivedFilesQuotaBytes: Int, notifier: SystemdNotifier,
        otherWrittenDirectories: [(name: String, path: String)],
        otherIntakeDirectories: [(name: String, path: String)]
    ) {
        self.daemon = daemon
        writtenDirectories = [("state directory", stateDirectory)] + otherWrittenDirectories
        intake = IntakeDirectories([("state directory", stateDirectory)] + otherIntakeDirectories)
        self.receivedFilesQuotaBytes = receivedFilesQuotaBytes
        self.loop = loop
        self.link = link
        self.logger = logger
        self.clockFile = clockFile
        self.stateDirectory = stateDirectory
        self.notifier = notifier
        runner = NodeRunner(LinkedNode(node, link: link.engine), ports: self)
        driveLink()
        link.log = { line in logger.info(line, component: "link") }
        link.warn = { line in logger.warning(line, component: "link") }
        for note in link.state.recoveryNotes { logger.warning(note, component: "link") }
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    private func driveLink() {
        link.drive(
            LinkDriver(
                event: { [unowned self] in
                    if case .bytesReceived = $0 { checkIntakeWritable() }
                    runner.linkArrived($0)
                },
                appendRefused: { [unowned self] in
                    runner.postAfterHeld(.appendRefused(sequence: $0, complication: $1, reason: $2))
                },
                fileNotQueued: { [unowned self] in runner.postAfterHeld(.fileNotQueued(sequence: $0, reason: $1)) }))
    }

    /// The node, with its link engine.
    package var node: LinkedNode<Node> { runner.node }

    /// Feeds `event` (after the ones already waiting); on the loop.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func post(_ event: Node.Event) {
        loop.preconditionInLoop()
        runner.post(.inner(event))
    }

    /// Serves one admin request: numbers it and hands the node the event `make` builds with the
    /// facts a status shows; the node's reply goes to `respond`.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func admin(
        respond: AdminResponder, _ make: (AdminRequestID, ShellFacts) -> Node.Event
    ) {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        responders[request] = respond
        post(make(request, facts))
    }

    /// Logs why `admin` stopped accepting clients (near or out of descriptors, out of memory), once
    /// per run of pauses: they wait in the socket's backlog, and a CLI that waits too long says so.
    package func logAcceptFailures<Command>(of admin: AdminServer<Command>?) {
        admin?.onAcceptPaused = { [logger] error in
            logger.warning(
                "cannot accept an admin client",
                ["reason": "\(error)", "then": "clients wait in the backlog; tried again every 100 ms"],
                component: "admin")
        }
    }

    /// What the shell knows that a status reply shows.
    package var facts: ShellFacts {
        ShellFacts(
            link: node.linkStatus, uptimeSeconds: Int((ContinuousClock.now - startedAt).components.seconds),
            journalCounts: link.journal?.counts ?? [:], listenPort: listenPort, starts: link.state.starts,
            fsyncLatency: LatencyRecorder.fsync.snapshot,
            readOnlyDirectories: IntakeDirectories.readOnly(writtenDirectories))
    }

    /// Tells systemd the daemon is ready (with `status`), then keeps its watchdog fed while it runs.
    package func notifyReady(_ status: String) {
        try? notifier.ready(status: status)
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func report(_ report: ShellReport) {
        post(Node.reported(report))
    }

    // MARK: The runner's ports

    package var wallNow: Timestamp { .current }
    package var linkNow: LinkInstant { link.now }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func read(_ needs: NeedsReads, link engine: LinkEngine) -> Reads {
        // What the node reads must include every write begun before.
        writes.sync {}
        var reads = daemon.read(needs)
        if needs.outstandingTransfers { reads.outstandingTransfers = link.outstandingTransfers(engine: engine) }
        return reads
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func scheduleTurn() {
        loop.execute { [unowned self] in runner.turn() }
    }

    package func setReadingPaused(_ paused: Bool) {
        link.setReadingPaused(paused)
    }

    package func diagnose(_ diagnostic: TurnDiagnostic) {
        guard let times = diagnostics.count(diagnostic) else { return }
        switch diagnostic {
        case .budgetSpent: logger.debug("turn cut short", ["reason": "\(diagnostic)", "times": "\(times)"])
        case .readsRepeated: logger.warning("turn cut short", ["reason": "\(diagnostic)", "times": "\(times)"])
        }
    }
}
