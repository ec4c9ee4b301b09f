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

/// The shell both daemons share: owns the node on the event loop, feeds it one event at a time in
/// the order they came (an event an action produces, or a link notification that arrives while
/// actions run, waits its turn: nothing re-enters the node), stamps each with the wall clock,
/// reads what the node asks for, and carries out the shared actions — the link's verbs, logs, the
/// journal, admin replies, timers, the clock and live-version files, systemd, exit. The daemon adds
/// its own store: `read`, `storeWrite` and `performStore`. Durable writes go to the link's write
/// queue (`LinkEndpoint.writes`), never waited for on the loop; an action after a write waits until
/// it has landed, except a query's reply (docs/PROTOCOL.md, "The order of writes"). A failed
/// durable action stops everything after it and is reported to the node, which exits.
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
    /// Where every durable write runs, off the loop, in order (shared with `link`).
    let writes: DispatchQueue
    /// Durable writes sent to `writes`, and landed, so far (numbered in the order sent).
    private var writesSent: UInt64 = 0
    private var writesLanded: UInt64 = 0
    /// Actions waiting for the writes sent before them to land, in order.
    private var waiting: [(after: UInt64, action: Node.Action)] = []
    /// Set at the first failed write: the writes queued after it never begin.
    private let writeFailed = Atomic<Bool>(false)

    /// The daemon's durable store writes: the work for `action`, to run on the write queue (nil when
    /// `action` is not one); `performStore` gets the rest.
    package var storeWrite: (Node.Action) -> (@Sendable () throws -> Void)? = { _ in nil }

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
        // One write queue for the daemon: the link's state writes and the node's, in one order.
        writes = link.writes ?? DispatchQueue(label: "durable-writes")
        link.writes = writes
        link.log = { line in logger.info(line, component: "link") }
        link.warn = { line in logger.warning(line, component: "link") }
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
                // What the node reads must include every write sent before.
                writes.sync {}
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
            if let write = durableWrite(action) {
                send(write)
            } else if writeFailed.load(ordering: .acquiring) {
                // After a failed write only the way out is left (the writes are skipped): at once.
                carryOut(action)
            } else if Node.isQuery(event) && Node.nodeAction(action)?.answersWithoutWaiting == true
                || waiting.isEmpty && writesLanded == writesSent
            {
                // A query's reply may show what is not on disk yet: it acknowledges no edit.
                guard carryOut(action) else { return }
            } else {
                waiting.append((after: writesSent, action))
            }
        }
    }

    /// Carries out one action on the loop; false (and the failure fed next) when it failed.
    @discardableResult
    private func carryOut(_ action: Node.Action) -> Bool {
        do {
            if let shared = Node.nodeAction(action) {
                try perform(shared)
            } else {
                try performStore(action)
            }
            return true
        } catch {
            failed(error)
            return false
        }
    }

    /// Nothing after a failed durable write may run (an acknowledgement least of all): what waits is
    /// dropped, writes not yet begun are skipped, and the node hears of it next, before anything else.
    private func failed(_ error: any Error) {
        writeFailed.store(true, ordering: .releasing)
        waiting.removeAll()
        failure = Node.reported(.durableWriteFailed(reason: "\(error)"))
    }

    /// The durable write `action` stands for, to run on the write queue; nil for any other action.
    private func durableWrite(_ action: Node.Action) -> (@Sendable () throws -> Void)? {
        guard let shared = Node.nodeAction(action) else { return storeWrite(action) }
        guard shared.isDurableWrite else { return nil }
        switch shared {
        case .persistClock(let stamp):
            return clockFile.write(stamp)
        case .persistLiveVersion(let version):
            let (path, logger) = ("\(stateDirectory)/live-version", logger)
            return {
                do {
                    try AtomicFile.write(Array("\(version)".utf8), to: path)
                } catch {
                    logger.warning("live version not persisted", ["reason": "\(error)"], component: "live")
                }
            }
        case .link(.keepReceivedFile(let key, let name)):
            let (source, directory) = (link.inboxPath(for: key), "\(stateDirectory)/received-files")
            return {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try AtomicFile.moveDurably(source, to: "\(directory)/\(name)")
            }
        default:
            preconditionFailure("\(shared) is a durable write with no work for the write queue")
        }
    }

    /// Runs `write` after the writes sent before it; the actions waiting for it follow once it lands.
    private func send(_ write: @escaping @Sendable () throws -> Void) {
        writesSent += 1
        let number = writesSent
        writes.async { [self] in
            guard !writeFailed.load(ordering: .acquiring) else { return }
            let result = Result { try write() }
            loop.execute { [self] in landed(number, result) }
        }
    }

    private func landed(_ number: UInt64, _ result: Result<Void, any Error>) {
        guard !writeFailed.load(ordering: .acquiring) else { return }
        writesLanded = number
        if case .failure(let error) = result {
            failed(error)
            drain()
            return
        }
        // As in `drain`: what these actions raise waits until they are all carried out.
        draining = true
        while let first = waiting.first, first.after <= writesLanded {
            waiting.removeFirst()
            guard carryOut(first.action) else { break }
        }
        draining = false
        drain()
    }

    func report(_ report: ShellReport) {
        post(Node.reported(report))
    }
}
