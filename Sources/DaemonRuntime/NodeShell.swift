import AdminCommands
import DaemonConfiguration
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import POSIX
import Synchronization
import Trace
import WorkoutModel

/// The shell both daemons share: owns the node — with its link engine inside (`LinkedNode`) — on the
/// event loop, feeds it one event at a time in the order they came (an event an action produces, or
/// bytes that arrive while actions run, waits its turn: nothing re-enters the node), stamps each with
/// the clocks, reads what the node asks for, and carries out the actions: the link's through the
/// endpoint (frames, dials, timers, the outboxes), logs, the journal, admin replies, timers, the
/// clock and live-version files, systemd, exit. The daemon adds its own store: `storeWrite` and
/// `performStore`. Durable writes (the store's and the link's state) go to one write queue, never
/// waited for on the loop; an action after a write waits until it has landed, except a query's reply
/// and a heartbeat (docs/PROTOCOL.md, "The order of writes"). A failed durable action stops
/// everything after it and is reported to the node, which exits.
package final class NodeShell<Node: ShelledNode>: @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    package private(set) var node: LinkedNode<Node>
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
    var queue: [LinkedNode<Node>.Event] = []
    var draining = false
    /// The node left steps waiting for reads: `.resume` is its next event.
    private var resumeNext = false
    /// The node's end of turn waits for the writes in flight to land.
    var turnEndWaiting = false
    /// The link's events that wait for the intake's writes in flight (`LinkEventHold`), and since
    /// when the write queue has been busy.
    var hold = LinkEventHold()
    var busySince = ContinuousClock.now
    /// The link's events ready for the node, `linkBacklog[linkHead...]`, fed after the other events.
    var linkBacklog: [LinkEngine.Event] = []
    private var linkHead = 0
    /// A later turn will go on with the backlog.
    private var continuing = false
    var watchdogTimer: TimerID?
    /// A failed durable action, fed to the node before any other waiting event.
    var failure: Node.Event?
    /// Where every durable write runs, off the loop, in order.
    let writes = DispatchQueue(label: "durable-writes")
    /// Durable writes sent to `writes`, and landed, so far (numbered in the order sent).
    var writesSent: UInt64 = 0
    var writesLanded: UInt64 = 0
    /// Actions waiting for the writes sent before them to land, in order.
    var waiting: [(after: UInt64, action: LinkedNode<Node>.Action)] = []
    /// Set at the first failed write: the writes queued after it never begin.
    let writeFailed = Atomic<Bool>(false)

    /// The daemon's durable store writes: the work for `action`, to run on the write queue (nil when
    /// `action` is not one); `performStore` gets the rest.
    package var storeWrite: (Node.Action) -> (@Sendable () throws -> Void)? = { _ in nil }

    /// Reads the documents the node asked for (the daemon's store).
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
        self.node = LinkedNode(node, link: link.engine)
        self.loop = loop
        self.link = link
        self.logger = logger
        self.clockFile = clockFile
        self.stateDirectory = stateDirectory
        self.notifier = notifier
        link.drive(
            LinkDriver(
                event: { [unowned self] in linkArrived($0) },
                appendRefused: { [unowned self] in
                    postAfterHeld(.appendRefused(sequence: $0, complication: $1, reason: $2))
                },
                fileNotQueued: { [unowned self] in postAfterHeld(.fileNotQueued(sequence: $0, reason: $1)) }))
        link.log = { line in logger.info(line, component: "link") }
        link.warn = { line in logger.warning(line, component: "link") }
        for note in link.state.recoveryNotes { logger.warning(note, component: "link") }
    }

    /// Feeds `event` (after the ones already waiting); on the loop.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func post(_ event: Node.Event) {
        post(.inner(event))
    }

    private func post(_ event: LinkedNode<Node>.Event) {
        loop.preconditionInLoop()
        queue.append(event)
        drain()
    }

    /// A link event: fed now, or held while the intake's writes are in flight (`LinkEventHold`).
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    private func linkArrived(_ event: LinkEngine.Event) {
        let idle = writesLanded == writesSent || writeFailed.load(ordering: .acquiring)
        linkBacklog += hold.arrived(event, writesBusyFor: idle ? nil : ContinuousClock.now - busySince)
        pauseReadingIfBehind()
        if !continuing { drain() }
    }

    /// An outbox's outcome, after the link events held before it.
    private func postAfterHeld(_ event: LinkedNode<Node>.Event) {
        linkBacklog += hold.release()
        // In the backlog's order: after every link event before it.
        let (backlog, head) = (linkBacklog, linkHead)
        queue += backlog[head...].map { .link($0) }
        linkBacklog = []
        linkHead = 0
        post(event)
    }

    func pauseReadingIfBehind() {
        link.setReadingPaused(
            waiting.count > Self.maximumWaiting || hold.isFull || linkBacklog.count - linkHead > Self.maximumBacklog)
    }

    /// How many link events may wait in the backlog before the link stops reading.
    static var maximumBacklog: Int { 64 }

    /// Feeds the waiting events unless that is already under way: a failure first, then a `.resume`,
    /// the other events in order, and the link's events after them, `turnBudget` at a time (the rest
    /// in a later turn, so a drain of thousands of transfers leaves room for admin requests and other
    /// connections); then, once all is handled and every write has landed, a waiting end of turn.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func drain() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        let start = ContinuousClock.now
        var next = 0
        while true {
            let event: LinkedNode<Node>.Event
            if let failed = failure {
                // A failure is the node's next event, before anything that waited.
                failure = nil
                event = .inner(failed)
            } else if resumeNext {
                resumeNext = false
                event = .resume
            } else if next < queue.count {
                event = queue[next]
                next += 1
            } else if linkHead < linkBacklog.count {
                guard ContinuousClock.now - start < Self.turnBudget else {
                    continueNextTurn()
                    break
                }
                event = .link(nextLinkSlice())
            } else if turnEndWaiting, writesLanded == writesSent, hold.isEmpty {
                turnEndWaiting = false
                event = .inner(Node.reported(.turnEnded))
            } else {
                break
            }
            run(event)
            if next > 1024 {
                queue.removeFirst(next)
                next = 0
            }
        }
        queue.removeFirst(next)
        linkBacklog.removeFirst(linkHead)
        linkHead = 0
        pauseReadingIfBehind()
    }

    /// How long one loop turn may spend on the link's events before the rest waits for a later turn.
    static var turnBudget: Duration { .milliseconds(3) }

    /// Bytes are fed at most this many at a time (the engine takes a frame split anywhere): the
    /// transfers one slice carries are merged in one step, which the turn budget cannot split.
    static var maximumSliceBytes: Int { 16 << 10 }

    /// The backlog's next event, bytes a slice at a time (the rest stays first in the backlog).
    private func nextLinkSlice() -> LinkEngine.Event {
        let event = linkBacklog[linkHead]
        guard case .bytesReceived(let connection, let bytes, let now) = event, bytes.count > Self.maximumSliceBytes
        else {
            linkHead += 1
            return event
        }
        linkBacklog[linkHead] = .bytesReceived(connection, Array(bytes[Self.maximumSliceBytes...]), now: now)
        return .bytesReceived(connection, Array(bytes[..<Self.maximumSliceBytes]), now: now)
    }

    private func continueNextTurn() {
        guard !continuing else { return }
        continuing = true
        loop.execute { [unowned self] in
            continuing = false
            drain()
        }
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
        post(.inner(make(request, facts)))
    }

    /// What the shell knows that a status reply shows.
    package var facts: ShellFacts {
        ShellFacts(
            link: node.link.status, uptimeSeconds: Int((ContinuousClock.now - startedAt).components.seconds),
            journalCounts: link.journal?.counts ?? [:], listenPort: listenPort, starts: link.state.starts,
            fsyncLatency: LatencyRecorder.fsync.snapshot)
    }

    /// Tells systemd the daemon is ready (with `status`), then keeps its watchdog fed while it runs.
    package func notifyReady(_ status: String) {
        try? notifier.ready(status: status)
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    private func run(_ event: LinkedNode<Node>.Event) {
        hold.feeding(event)
        var reads = Reads()
        var actions: [LinkedNode<Node>.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: .current, linkNow: link.now, reads: reads)
                break
            } catch {
                // What the node reads must include every write sent before.
                writes.sync {}
                let more = read(error)
                reads.documents.merge(more.documents) { _, new in new }
                if error.outstandingTransfers {
                    reads.outstandingTransfers = link.outstandingTransfers(engine: node.link)
                }
                if error.outstandingFiles { reads.outstandingFiles = node.link.outstandingFiles }
                reads.samples.merge(more.samples) { _, new in new }
                for id in error.samples.keys where reads.samples[id] == nil { reads.samples[id] = .some(nil) }
                // Whatever the store did not answer is unreadable: the node must not ask forever.
                for id in error.documents.keys where reads.documents[id] == nil {
                    reads.documents[id] = .failure(ReadFailure("not readable"))
                }
            }
        }
        let query = if case .inner(let inner) = event { Node.isQuery(inner) } else { false }
        for action in actions {
            if let write = durableWrite(action) {
                send(write)
                hold.sent(writesSent)
            } else if case .resume = action {
                resumeNext = true
            } else if writeFailed.load(ordering: .acquiring) {
                // After a failed write only the way out is left (the writes are skipped): at once.
                carryOut(action)
            } else if query && action.answersWithoutWaiting || waiting.isEmpty && writesLanded == writesSent
                || passesWrites(action)
            {
                // A query's reply may show what is not on disk yet: it acknowledges no edit.
                guard carryOut(action) else { return }
            } else {
                waiting.append((after: writesSent, action))
            }
        }
        pauseReadingIfBehind()
    }

    /// How many actions may wait for writes before the link stops reading (TCP slows the peer).
    static var maximumWaiting: Int { 4096 }

    /// Heartbeats promise nothing about what is on disk: a ping answered, one sent, the next wake-up
    /// go out at once, unless a seal waits (a frame sent unsealed on a sealed link closes it). The
    /// engine's latest wake-up supersedes any waiting.
    private func passesWrites(_ action: LinkedNode<Node>.Action) -> Bool {
        // A closure, not `\.action`: a key path in this generic class is built anew at each call.
        guard action.passesWrites(waiting: waiting.lazy.map { $0.action }) else { return false }
        if action.isWakeUp { waiting.removeAll { $0.action.isWakeUp } }
        return true
    }

    /// Carries out one action on the loop; false (and the failure fed next) when it failed.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    @discardableResult
    func carryOut(_ action: LinkedNode<Node>.Action) -> Bool {
        do {
            switch action {
            case .inner(let action):
                if let shared = Node.nodeAction(action) {
                    try perform(shared)
                } else {
                    try performStore(action)
                }
            case .link(let action, let run):
                link.carryOut(driven: action, run: run)
            case .messageAttempt(let id, let run):
                link.journalAttempt(id, run: run)
            case .appendsRenumbered(let complication):
                link.appendsRenumbered(complication: complication)
            case .resume:
                resumeNext = true
            }
            return true
        } catch {
            failed(error)
            return false
        }
    }

    /// Nothing after a failed durable write may run (an acknowledgement least of all): what waits is
    /// dropped, writes not yet begun are skipped, and the node hears of it next, before anything else.
    func failed(_ error: any Error) {
        writeFailed.store(true, ordering: .releasing)
        waiting.removeAll()
        failure = Node.reported(.durableWriteFailed(reason: "\(error)"))
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func report(_ report: ShellReport) {
        post(Node.reported(report))
    }

    /// Reports the end of turn once every event in hand is handled and the writes have landed (`drain`).
    func endTurnWhenCaughtUp() {
        turnEndWaiting = true
        drain()
    }
}
