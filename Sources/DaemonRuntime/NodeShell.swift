import AdminCommands
import DaemonConfiguration
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import Trace
import WorkoutModel

/// The shell both daemons share: owns the node on the event loop, feeds it one event at a time in
/// the order they came (an event an action produces, or a link notification that arrives while
/// actions run, waits its turn: nothing re-enters the node), stamps each with the wall clock,
/// reads what the node asks for, and carries out the shared actions — the link's verbs, logs, the
/// journal, admin replies, timers, the clock and live-version files, systemd, exit. The daemon adds
/// its own store: `read` and `performStore`. A failed durable action stops the rest of its list and
/// is reported to the node, which exits.
///
/// The node's store writes (documents, cache files) run on an I/O thread, so the loop never waits on
/// their fsyncs: heartbeats, admin requests and new events are served meanwhile. Actions keep their
/// order — whatever follows a write (an acknowledgement, a push) waits until the write is done, and
/// so does every later action list — except a list of nothing but replies, logs and journal entries
/// (a `status`), which touches no state a write could change and runs at once. Before the store is
/// read for the node, every waiting action is carried out, so a read sees every earlier write.
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
    /// Actions not carried out yet, in order: the first waits for the write on the I/O thread.
    private var waiting: [Node.Action] = []
    private var waitingStart = 0
    /// The store writes handed to the I/O thread and not reported back yet.
    private var writing: IOWrite?
    /// A failed durable action, fed to the node before any other waiting event.
    private var failure: Node.Event?
    private let io = DispatchQueue(label: "node-store-io")

    /// Reads the documents or listings the node asked for (the daemon's store).
    package var read: (NeedsReads) -> Reads = { _ in Reads() }
    /// Carries out one of the node's own actions (its store's writes); throws when a durable one failed.
    /// Called on the I/O thread for the actions `Node.isStoreWrite` names, on the loop for the rest.
    package var performStore: @Sendable (Node.Action) throws -> Void = { _ in }
    /// A test-only pause before each round of store writes on the I/O thread (a slow disk), from
    /// `WATCHSYNC_TEST_STORE_DELAY_MS`.
    package var storeDelaySeconds: Double =
        ProcessInfo.processInfo.environment["WATCHSYNC_TEST_STORE_DELAY_MS"].flatMap { Double($0) }.map { $0 / 1000 }
        ?? 0
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
                // A read must see every write decided before it.
                guard finishWaiting() else { return }
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
        if writing != nil || waitingStart < waiting.count, actions.allSatisfy(Self.touchesNoState) {
            for case .some(let shared) in actions.map(Node.nodeAction) { try? perform(shared) }
            return
        }
        waiting.append(contentsOf: actions)
        carryOutWaiting()
    }

    /// Replies, logs and journal entries: they may run ahead of a write in progress.
    private static func touchesNoState(_ action: Node.Action) -> Bool {
        switch Node.nodeAction(action) {
        case .reply, .replyTrace, .log, .journal: true
        default: false
        }
    }

    /// Carries out the waiting actions in order on the loop until the next store writes, which go to
    /// the I/O thread together (the actions after them wait for them).
    private func carryOutWaiting() {
        while writing == nil, waitingStart < waiting.count {
            let action = waiting[waitingStart]
            if Node.isStoreWrite(action) {
                var writes: [Node.Action] = []
                while waitingStart < waiting.count, Node.isStoreWrite(waiting[waitingStart]) {
                    writes.append(waiting[waitingStart])
                    waitingStart += 1
                }
                let write = IOWrite()
                writing = write
                io.async { [performStore, storeDelaySeconds, loop, writes] in
                    if storeDelaySeconds > 0 { Thread.sleep(forTimeInterval: storeDelaySeconds) }
                    write.finish(Result { for action in writes { try performStore(action) } })
                    loop.execute { [weak self] in self?.written(write) }
                }
                return
            }
            waitingStart += 1
            do {
                if let shared = Node.nodeAction(action) { try perform(shared) } else { try performStore(action) }
            } catch {
                failed(error)
                return
            }
        }
        if waitingStart == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingStart = 0
        }
    }

    /// The I/O thread is done with `write` (or a read already waited for it).
    private func written(_ write: IOWrite) {
        guard writing === write, let result = write.result else { return }
        writing = nil
        if case .failure(let error) = result {
            failed(error)
        } else {
            carryOutWaiting()
        }
        if failure != nil { drain() }
    }

    /// Carries out every waiting action now, waiting on the loop for the writes; false when a
    /// durable one failed (the failure is the node's next event).
    private func finishWaiting() -> Bool {
        while true {
            if let write = writing {
                io.sync {}
                written(write)
                if failure != nil { return false }
            }
            guard writing == nil, waitingStart < waiting.count else { return failure == nil }
            carryOutWaiting()
        }
    }

    /// Nothing after a failed durable action may run (an acknowledgement least of all).
    private func failed(_ error: any Error) {
        waiting.removeAll()
        waitingStart = 0
        failure = Node.reported(.durableWriteFailed(reason: "\(error)"))
    }

    func report(_ report: ShellReport) {
        post(Node.reported(report))
    }
}

/// One round of store writes on the I/O thread, and how it ended.
private final class IOWrite: @unchecked Sendable {
    // @unchecked: `result` is written on the I/O thread before the loop is told, or read after `io.sync`.
    private(set) var result: Result<Void, any Error>?
    func finish(_ result: Result<Void, any Error>) { self.result = result }
}
