import AdminCommands
import DaemonConfiguration
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import POSIX
import Trace
import WorkoutModel

/// The shell both daemons share: owns the node on the event loop, feeds it one event at a time in
/// the order they came (an event an action produces, or a link notification that arrives while
/// actions run, waits its turn: nothing re-enters the node), stamps each with the wall clock,
/// reads what the node asks for, and carries out the shared actions — the link's verbs, logs, the
/// journal, admin replies, timers, the clock and live-version files, systemd, exit. The daemon adds
/// its own store: `read` and `performStore`. A failed durable action stops the rest of its list and
/// is reported to the node, which exits.
package final class NodeShell<Node: ShelledNode>: @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    package private(set) var node: Node
    package let loop: EventLoop
    package let link: LinkEndpoint
    package let logger: Logger
    var clockFile: ClockFile
    let stateDirectory: String
    let notifier: SystemdNotifier
    private let startedAt = ContinuousClock.now
    var timers: [NodeTimer: TimerID] = [:]
    var responders: [AdminRequestID: AdminResponder] = [:]
    private var lastRequest: UInt64 = 0
    private var queue: [Node.Event] = []
    private var draining = false
    var watchdogTimer: TimerID?
    /// A failed durable action, fed to the node before any other waiting event.
    private var failure: Node.Event?

    /// Reads the documents or listings the node asked for (the daemon's store).
    package var read: (NeedsReads) -> Reads = { _ in Reads() }
    /// Carries out one of the node's own actions (its store's writes); throws when a durable one failed.
    package var performStore: @Sendable (Node.Action) throws -> Void = { _ in }
    /// Stops the daemon's own services (the admin socket, phoned's watcher).
    package var closeServices: () -> Void = {}
    /// phoned's listening port, for status.
    package var listenPort = 0

    package init(
        node: Node, loop: EventLoop, link: LinkEndpoint, logger: Logger, clockFile: ClockFile, stateDirectory: String,
        notifier: SystemdNotifier
    ) {
        self.node = node
        self.loop = loop
        self.link = link
        self.logger = logger
        self.clockFile = clockFile
        self.stateDirectory = stateDirectory
        self.notifier = notifier
    }

    /// Feeds `event` (after the ones already waiting); on the loop.
    package func post(_ event: Node.Event) {
        loop.preconditionInLoop()
        queue.append(event)
        drain()
    }

    /// Feeds the waiting events (a failure first) unless that is already under way.
    private func drain() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        var next = 0
        while true {
            let event: Node.Event
            if let failed = failure {
                // A failure is the node's next event, before anything that waited.
                failure = nil
                event = failed
            } else if next < queue.count {
                event = queue[next]
                next += 1
            } else {
                break
            }
            run(event)
            if next > 1024 {
                queue.removeFirst(next)
                next = 0
            }
        }
        queue.removeAll(keepingCapacity: true)
    }

    /// Serves one admin request: numbers it and hands the node the event `make` builds with the
    /// facts a status shows; the node's reply goes to `respond`.
    package func admin(
        respond: AdminResponder, _ make: (AdminRequestID, ShellFacts) -> Node.Event
    ) {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        responders[request] = respond
        post(make(request, facts))
    }

    /// What the shell knows that a status reply shows.
    package var facts: ShellFacts {
        ShellFacts(
            link: link.status(), uptimeSeconds: Int((ContinuousClock.now - startedAt).components.seconds),
            journalCounts: link.journal?.counts ?? [:], listenPort: listenPort, starts: link.state.starts,
            fsyncLatency: LatencyRecorder.fsync.snapshot)
    }

    /// Tells systemd the daemon is ready (with `status`), then keeps its watchdog fed while it runs.
    package func notifyReady(_ status: String) {
        try? notifier.ready(status: status)
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
    }

    private func run(_ event: Node.Event) {
        var reads = Reads()
        var actions: [Node.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: .current, reads: reads)
                break
            } catch {
                let more = read(error)
                reads.documents.merge(more.documents) { _, new in new }
                if let listing = more.outstandingTransfers { reads.outstandingTransfers = listing }
                if error.outstandingFiles { reads.outstandingFiles = link.outstandingFileTransfers() }
                reads.samples.merge(more.samples) { _, new in new }
                for id in error.samples.keys where reads.samples[id] == nil { reads.samples[id] = .some(nil) }
                // Whatever the store did not answer is unreadable: the node must not ask forever.
                for id in error.documents.keys where reads.documents[id] == nil {
                    reads.documents[id] = .failure(ReadFailure("not readable"))
                }
                if error.outstandingTransfers, reads.outstandingTransfers == nil { reads.outstandingTransfers = [] }
            }
        }
        for action in actions {
            do {
                if let shared = Node.nodeAction(action) {
                    try perform(shared)
                } else {
                    try performStore(action)
                }
            } catch {
                // Nothing after a failed durable write may run (an acknowledgement least of all).
                failure = Node.reported(.durableWriteFailed(reason: "\(error)"))
                return
            }
        }
    }

    func report(_ report: ShellReport) {
        post(Node.reported(report))
    }
}
