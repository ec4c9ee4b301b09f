import AdminCommands
import LinkProtocol
import Nodes
import WorkoutModel

/// What survives a crash of one simulated process: the link's state directory. (The node's own
/// store is the host's `Store`.) Every write here but the outbox's is an atomic replace with fsync,
/// so it is whole or absent at a crash, and complete once its action is; the outbox's appends are
/// synced by a group commit that lands later (`SimOutbox`).
struct LinkDisk {
    var knownPeer: InstanceID?
    var contextSlot: ContextSlot?
    var receivedContext: ReceivedContext?
    var transferMarks: [InstanceID: UInt64] = [:]
    var outbox = SimOutbox()
    var clock: Stamp?
    var liveVersion: Int?
    var watchState: WatchState?
}

/// One simulated daemon: its node and link engine run exactly as `NodeShell` and `LinkEndpoint` run
/// them — one event at a time, actions in order, notifications queued as node events — against the
/// simulated network, disk and clock. `Store` is the node's own files (phone: the document
/// directory; watch: the cache).
final class SimHost<Node: ShelledNode, Store> {
    let side: Side
    var instance: InstanceID
    var queueID: InstanceID
    var store: Store
    var disk = LinkDisk()
    private(set) var node: Node?
    private(set) var link: LinkEngine?
    /// When this process started (its monotonic origin), and its wall clock's offset from true time.
    private var bootedAt: Duration = .zero
    var clockOffset: Duration = .zero
    /// Each boot gets a new generation: events scheduled for an earlier life are dropped.
    private(set) var life: UInt64 = 0
    private var work: [Work] = []
    private var working = false
    /// The rest of a link action list cut by the turn budget, the link events that came meanwhile
    /// (they wait behind it, as in `LinkEndpoint`), and whether an end of turn waits for both.
    private var linkActionsLeft: ArraySlice<LinkEngine.Action> = []
    private var linkBacklog: [LinkEngine.Event] = []
    var turnEndWaiting = false
    /// The shell's write queue (`NodeShell`): durable writes sent and not landed yet, in order; the
    /// actions waiting for the writes sent before them; and how many were sent and landed.
    var writesInFlight: [Node.Action] = []
    var waitingActions: [(after: UInt64, action: Node.Action)] = []
    var writesSent: UInt64 = 0
    var writesLanded: UInt64 = 0
    /// Which of the node's own actions are durable writes (the store's).
    var isStoreWrite: (Node.Action) -> Bool = { _ in false }
    /// Set while the workload's admin request is handled: its writes, and those before them, land at
    /// once (a fast disk), so the workload reads the reply when its call returns, as it was written to.
    var writesLandAtOnce = false
    var hasWritesInFlight: Bool { !writesInFlight.isEmpty }
    var linkIsBehind: Bool { !linkActionsLeft.isEmpty || !linkBacklog.isEmpty }
    /// Each connection's seal once its handshake is over (`LinkEndpoint` keeps the same).
    var seals: [Int: FrameSeal] = [:]
    /// The armed timers: a timer fires only if it is still the one armed under its name.
    var armed: [NodeTimer: UInt64] = [:]
    var replies: [AdminRequestID: AdminResponse] = [:]
    /// Set when one event led to an endless chain of work (invariant 8).
    private(set) var runaway: String?
    /// Transfers this side acknowledged as processed, over all its lives (invariant 2).
    var acknowledged: Set<TransferKey> = []
    /// A transfer delivered to the node again after it was acknowledged (invariant 2).
    var appliedTwice: TransferKey?
    /// The next durable write fails (EIO): the node must exit, never retry.
    var failNextWrite = false
    /// Set when a node kept running after a failed durable write.
    private(set) var keptRunningAfterFailure: String?
    /// Set when the outbox does not open at a boot.
    private(set) var outboxRefused: String?
    /// Set when the link engine numbered an append other than the one the outbox holds next.
    var outOfOrderAppend: String?
    /// Whether an `outboxSynced` is scheduled for the appends written since the last one.
    var syncScheduled = false
    /// Told when a group commit starts, with the milliseconds until its fdatasync lands (a fault may
    /// strike in between).
    var onCommitStarted: (Int) -> Void = { _ in }
    /// Told when the process exits by itself (the simulator restarts it).
    var onExit: (Int32) -> Void = { _ in }

    enum Work {
        case node(Node.Event)
        case link(LinkEngine.Event)
        case linkResumed
        case writeLanded
    }

    /// What the world provides: the time, scheduling, the network and the node's store.
    unowned let world: World
    /// Carries out one of the node's store actions (it may feed events back with `post`).
    var performStore: (SimHost, Node.Action) -> Void = { _, _ in }
    /// Reads what the node asked for.
    var read: (SimHost, NeedsReads) -> Reads = { _, _ in Reads() }

    init(side: Side, instance: InstanceID, queueID: InstanceID, store: Store, world: World) {
        self.side = side
        self.instance = instance
        self.queueID = queueID
        self.store = store
        self.world = world
    }

    var isUp: Bool { node != nil }
    /// This process's wall clock now.
    var wallNow: Timestamp { world.epoch.advanced(by: world.now + clockOffset) }
    var linkNow: LinkInstant { LinkInstant(world.now - bootedAt) }

    // MARK: Life

    /// Starts the process from what its disk kept: `node` built by the caller, then the link.
    func boot(_ node: Node, configuration: LinkConfiguration, before: (SimHost) -> Void) {
        life += 1
        bootedAt = world.now
        self.node = node
        seals = [:]
        armed = [:]
        work = []
        forgetShellWork()
        replies = [:]
        link = LinkEngine(
            configuration: configuration, instance: instance, authenticator: SimAuthenticator(),
            restored: RestoredLinkState(
                knownPeer: disk.knownPeer, contextSlot: disk.contextSlot, receivedContext: disk.receivedContext,
                transferMarks: disk.transferMarks, outboxQueue: queueID, pendingTransfers: disk.outbox.pending,
                nextOutboxSequence: disk.outbox.nextSequence, watchState: disk.watchState),
            seed: world.random.next())
        before(self)
        handleLink(.started(now: linkNow))
    }

    /// Reads what the disk kept before a boot, as the real start-up does: the outbox opens (cutting a
    /// torn tail). An outbox the real open would refuse is a violation: only the tail is ever torn.
    func openDisk() {
        do throws(TransferSegmentScan.Damage) {
            if let note = try disk.outbox.open() { world.record(side, "outbox: \(note)") }
        } catch {
            outboxRefused = "the \(side)'s outbox does not open: damage at offset \(error.offset): \(error.reason)"
        }
    }

    /// What the shell held in memory (a burst cut short, writes not landed, what waits for them).
    private func forgetShellWork() {
        linkActionsLeft = []
        linkBacklog = []
        turnEndWaiting = false
        writesInFlight = []
        waitingActions = []
        writesSent = 0
        writesLanded = 0
    }

    /// The process dies at an action boundary: memory is gone, the disk stays. The group commit in
    /// flight, if any, had written its records whole or not at all; a power loss (the machine went
    /// down) keeps any prefix of them, tearing the last record at any byte.
    func crash(powerLoss: Bool = false) {
        node = nil
        link = nil
        work = []
        forgetShellWork()
        syncScheduled = false
        world.network.hostDied(side)
        let unsynced = disk.outbox.unsyncedByteCount
        guard unsynced > 0 else { return }
        let kept = powerLoss ? world.pick(0...unsynced) : world.chance(0.5) ? unsynced : 0
        disk.outbox.lose(keepingUnsynced: kept)
        world.record(side, "outbox: \(kept) of \(unsynced) unsynced bytes reached the disk")
    }

    /// The group commit's fdatasync landed: the records it holds are persisted.
    func outboxSynced(life: UInt64) {
        guard life == self.life, isUp else { return }
        syncScheduled = false
        for record in disk.outbox.sync() {
            handleLink(.transferPersisted(sequence: record.sequence, payload: record.payload))
        }
    }

    // MARK: Events in

    func post(_ event: Node.Event) {
        guard isUp else { return }
        work.append(.node(event))
        drain()
    }

    func handleLink(_ event: LinkEngine.Event) {
        guard isUp else { return }
        work.append(.link(event))
        drain()
    }

    /// Feeds a link event stamped now.
    func linkEvent(_ make: (LinkInstant) -> LinkEngine.Event) { handleLink(make(linkNow)) }

    private func drain() {
        guard !working else { return }
        working = true
        defer { working = false }
        var next = 0
        while next < work.count, isUp, runaway == nil {
            let item = work[next]
            next += 1
            if next > 20_000 {
                runaway = "unbounded: one event led to more than 20,000 follow-ups on the \(side); last: \(item)"
                world.record(side, String(runaway?.prefix(400) ?? ""))
            }
            switch item {
            case .node(let event): runNode(event)
            case .link(let event): runLink(event)
            case .linkResumed: resumeLink()
            case .writeLanded: landWrite()
            }
        }
        work.removeAll()
    }

    private func runNode(_ event: Node.Event) {
        // The node is moved out while it handles the event, not copied: with a second reference held
        // here, its first write to each dictionary and array (the phone's working set, the watch's
        // cache) copied the whole collection, as the daemons' shells never do.
        guard var node = node.take() else { return }
        var reads = Reads()
        var actions: [Node.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: wallNow, reads: reads)
                break
            } catch {
                // What the node reads includes every write sent before (the shell waits for them).
                while !writesInFlight.isEmpty { performLanding(writesInFlight.removeFirst()) }
                let more = read(self, error)
                reads.documents.merge(more.documents) { _, new in new }
                for id in error.documents.keys where reads.documents[id] == nil {
                    reads.documents[id] = .failure(ReadFailure("not readable"))
                }
                reads.outstandingTransfers = more.outstandingTransfers ?? reads.outstandingTransfers ?? []
            }
        }
        self.node = node
        if world.queuesWrites { return queue(actions, query: Node.isQuery(event)) }
        for action in actions {
            guard isUp else { return }
            if let shared = Node.nodeAction(action) {
                if failNextWrite, Self.isDurable(shared) {
                    failWrite()
                    return
                }
                perform(shared)
            } else {
                if failNextWrite {
                    failWrite()
                    return
                }
                performStore(self, action)
            }
        }
    }

    private static func isDurable(_ action: NodeAction) -> Bool {
        if case .persistClock = action { return true }
        return false
    }

    /// The write fails: the rest of the list is not carried out, and the node hears of it next.
    func failWrite() {
        failNextWrite = false
        world.record(side, "durable write fails (EIO)")
        runNode(Node.reported(.durableWriteFailed(reason: "EIO (simulated)")))
        if isUp { keptRunningAfterFailure = "the \(side) kept running after a failed durable write" }
    }

    private func runLink(_ event: LinkEngine.Event) {
        guard !linkIsBehind else { return linkBacklog.append(event) }
        guard var link = link.take() else { return }
        let actions = link.handle(event)
        self.link = link
        carryOut(actions[...])
    }

    /// Carries out link actions in order; at a random point the rest waits for a later turn.
    private func carryOut(_ actions: ArraySlice<LinkEngine.Action>) {
        var left = actions
        while let action = left.popFirst() {
            guard isUp else { return }
            perform(action)
            if !left.isEmpty, let delay = world.turnCut() {
                linkActionsLeft = left
                world.schedule(after: delay, .linkResumed(side, life: life))
                return
            }
        }
    }

    /// The write queue's oldest write lands (`landWrite`, in SimHost+Writes).
    func writeLanded(life: UInt64) {
        guard life == self.life, isUp else { return }
        work.append(.writeLanded)
        drain()
    }

    func linkResumed(life: UInt64) {
        guard life == self.life, isUp else { return }
        work.append(.linkResumed)
        drain()
    }

    /// Carries out what the budget put off, then the events that waited, until cut again or done;
    /// a waiting end of turn comes once all is done (`LinkEndpoint.afterActionsInHand`).
    private func resumeLink() {
        let left = linkActionsLeft
        linkActionsLeft = []
        carryOut(left)
        while linkActionsLeft.isEmpty, !linkBacklog.isEmpty, isUp, var link = link.take() {
            let actions = link.handle(linkBacklog.removeFirst())
            self.link = link
            carryOut(actions[...])
        }
        if !linkIsBehind, turnEndWaiting {
            turnEndWaiting = false
            post(Node.reported(.turnEnded))
        }
    }

    /// Link verbs the node calls are handled at once, as `LinkEndpoint`'s are.
    func callLink(_ event: LinkEngine.Event) {
        guard var link = link.take() else { return }
        let actions = link.handle(event)
        self.link = link
        // After the actions of earlier calls, as `LinkEndpoint.handleAtOnce` orders them.
        guard linkActionsLeft.isEmpty else { return linkActionsLeft.append(contentsOf: actions) }
        for action in actions where isUp { perform(action) }
    }

}

/// The two processes.
enum Side: String, Sendable {
    case phone
    case watch

    var other: Side { self == .phone ? .watch : .phone }
}
