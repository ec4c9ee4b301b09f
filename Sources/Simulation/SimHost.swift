import AdminCommands
import LinkProtocol
import Nodes
import WorkoutModel

/// What survives a crash of one simulated process: the link's state directory. (The node's own
/// store is the host's `Store`.) Every write here but the outbox's is an atomic replace with fsync,
/// so it is whole or absent at a crash, and complete once its action is; the outbox's appends are
/// synced by a group commit that lands later (`SimOutbox`); a context slot written without a
/// flush survives a crash of the process, and a power loss may take it back to the last flushed.
struct LinkDisk {
    var knownPeer: InstanceID?
    var contextSlot: ContextSlot?
    /// The last slot written with a flush: a power loss may take the disk back to it.
    var flushedContextSlot: ContextSlot?
    /// A clean stop marked the slot as the last one made; the next boot takes the mark away.
    var stoppedCleanly = false
    var receivedContext: ReceivedContext?
    var transferMarks: [InstanceID: UInt64] = [:]
    var outbox = SimOutbox()
    /// The phone's complication outbox (`transferCurrentComplicationUserInfo`).
    var complicationOutbox = SimOutbox()
    var clock: Stamp?
    var liveVersion: Int?
    var watchState: WatchState?
}

/// One simulated daemon: its node, with the link engine inside (`LinkedNode`), run exactly as
/// `NodeShell` runs it — one event at a time, actions in order, writes on a write queue — against the
/// simulated network, disk and clock. `Store` is the node's own files (phone: the document
/// directory; watch: the cache).
final class SimHost<Node: ShelledNode, Store> {
    let side: Side
    var instance: InstanceID
    var queueID: InstanceID
    /// The complication outbox's queue (the phone's; nil on the watch): follows `queueID`.
    var complicationQueueID: InstanceID? {
        side == .phone ? InstanceID(bytes: [0xC0] + queueID.bytes.dropFirst()) : nil
    }
    var store: Store
    var disk = LinkDisk()
    private(set) var node: LinkedNode<Node>?
    /// The link engine, inside the node.
    var link: LinkEngine? { node?.link }
    /// When this process started (its monotonic origin), and its wall clock's offset from true time.
    private var bootedAt: Duration = .zero
    var clockOffset: Duration = .zero
    /// Each boot gets a new generation: events scheduled for an earlier life are dropped.
    private(set) var life: UInt64 = 0
    private var work: [Work] = []
    private var working = false
    /// The node left steps waiting for reads: `.resume` is its next event.
    var resumeNext = false
    /// The node's end of turn waits for the writes in flight to land.
    var turnEndWaiting = false
    /// The link's events that wait for the intake's writes in flight, as `NodeShell` holds them, and
    /// since when the write queue has been busy.
    var hold = LinkEventHold()
    var busySince: Duration = .zero
    /// The shell's write queue (`NodeShell`): durable writes sent and not landed yet, in order; the
    /// actions waiting for the writes sent before them; and how many were sent and landed.
    var writesInFlight: [LinkedNode<Node>.Action] = []
    var waitingActions: [(after: UInt64, action: LinkedNode<Node>.Action)] = []
    var writesSent: UInt64 = 0
    var writesLanded: UInt64 = 0
    /// Which of the node's own actions are durable writes (the store's).
    var isStoreWrite: (Node.Action) -> Bool = { _ in false }
    /// Set while the workload's admin request is handled: its writes, and those before them, land at
    /// once (a fast disk), so the workload reads the reply when its call returns, as it was written to.
    var writesLandAtOnce = false
    var hasWritesInFlight: Bool { !writesInFlight.isEmpty }
    /// Each connection's seal once its handshake is over (`LinkEndpoint` keeps the same).
    var seals: [Int: FrameSeal] = [:]
    /// The armed timers: a timer fires only if it is still the one armed under its name.
    var armed: [NodeTimer: UInt64] = [:]
    /// Each armed timer's wall-clock deadline, the wait it was armed with, and when (simulated time).
    var armedAt: [NodeTimer: (at: Timestamp, armedFor: Duration, since: Duration)] = [:]
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
    /// Told of every notification the link engine raises (the node takes it as its next step).
    var onNotified: (LinkNotification) -> Void = { _ in }
    /// Told of every event just before the node takes it (the checks read what it held then), and
    /// once it has (faults aimed at what it just did).
    var onEventTaking: (LinkedNode<Node>.Event) -> Void = { _ in }
    var onEventTaken: (LinkedNode<Node>.Event) -> Void = { _ in }
    /// A message frame went on the wire (the simulator may crash the sender while it is in flight).
    var onMessageSent: () -> Void = {}
    /// Told when the process exits by itself (the simulator restarts it).
    var onExit: (Int32) -> Void = { _ in }

    enum Work {
        case event(LinkedNode<Node>.Event)
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

    /// Kept beside `node`: asked before every step, and `node != nil` copied the whole node to answer.
    private(set) var isUp = false
    /// This process's wall clock now.
    var wallNow: Timestamp { world.epoch.advanced(by: world.now + clockOffset) }
    var linkNow: LinkInstant { LinkInstant(world.now - bootedAt) }

    // MARK: Life

    /// Starts the process from what its disk kept: `node` built by the caller, then the link.
    func boot(_ node: Node, configuration: LinkConfiguration, before: (SimHost) -> Void) {
        life += 1
        bootedAt = world.now
        seals = [:]
        armed = [:]
        work = []
        forgetShellWork()
        replies = [:]
        let link = LinkEngine(
            configuration: configuration, instance: instance, authenticator: SimAuthenticator(),
            restored: RestoredLinkState(
                knownPeer: disk.knownPeer, contextSlot: disk.contextSlot, receivedContext: disk.receivedContext,
                transferMarks: disk.transferMarks, outboxQueue: queueID, pendingTransfers: disk.outbox.pending,
                nextOutboxSequence: disk.outbox.nextSequence, watchState: disk.watchState,
                complicationQueue: complicationQueueID, pendingComplications: disk.complicationOutbox.pending,
                nextComplicationSequence: disk.complicationOutbox.nextSequence, contextSlotCurrent: disk.stoppedCleanly),
            seed: world.random.next())
        disk.stoppedCleanly = false
        self.node = LinkedNode(node, link: link)
        isUp = true
        before(self)
        handleLink(.started(now: linkNow))
    }

    /// Reads what the disk kept before a boot, as the real start-up does: the outbox opens (cutting a
    /// torn tail). An outbox the real open would refuse is a violation: only the tail is ever torn.
    func openDisk() {
        for (name, outbox) in [("outbox", \LinkDisk.outbox), ("complication outbox", \LinkDisk.complicationOutbox)] {
            do throws(TransferSegmentScan.Damage) {
                if let note = try disk[keyPath: outbox].open() { world.record(side, "\(name): \(note)") }
            } catch {
                outboxRefused =
                    "the \(side)'s \(name) does not open: damage at offset \(error.offset): \(error.reason)"
            }
        }
    }

    /// What the shell held in memory (a burst cut short, writes not landed, what waits for them).
    private func forgetShellWork() {
        resumeNext = false
        turnEndWaiting = false
        hold = LinkEventHold()
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
        isUp = false
        work = []
        forgetShellWork()
        syncScheduled = false
        world.network.hostDied(side)
        if powerLoss, disk.contextSlot != disk.flushedContextSlot, world.chance(0.5) {
            world.record(side, "the context slot written without a flush was lost")
            disk.contextSlot = disk.flushedContextSlot
        }
        for (name, outbox) in [("outbox", \LinkDisk.outbox), ("complication outbox", \LinkDisk.complicationOutbox)] {
            let unsynced = disk[keyPath: outbox].unsyncedByteCount
            guard unsynced > 0 else { continue }
            let kept = powerLoss ? world.pick(0...unsynced) : world.chance(0.5) ? unsynced : 0
            disk[keyPath: outbox].lose(keepingUnsynced: kept)
            world.record(side, "\(name): \(kept) of \(unsynced) unsynced bytes reached the disk")
        }
    }

    /// The group commit's fdatasync landed: the records it holds are persisted.
    func outboxSynced(life: UInt64) {
        guard life == self.life, isUp else { return }
        syncScheduled = false
        for record in disk.outbox.sync() {
            handleLink(.transferPersisted(sequence: record.sequence, payload: record.payload))
        }
        for record in disk.complicationOutbox.sync() {
            handleLink(.complicationPersisted(sequence: record.sequence, payload: record.payload))
        }
    }

    // MARK: Events in

    func post(_ event: Node.Event) {
        post(.inner(event))
    }

    func post(_ event: LinkedNode<Node>.Event) {
        guard isUp else { return }
        work.append(.event(event))
        drain()
    }

    /// A link event: fed now, or held while the intake's writes are in flight (`LinkEventHold`).
    func handleLink(_ event: LinkEngine.Event) {
        guard isUp else { return }
        for event in hold.arrived(event, writesBusyFor: hasWritesInFlight ? world.now - busySince : nil) {
            post(.link(event))
        }
    }

    /// An outbox's outcome, after the link events held before it.
    func postAfterHeld(_ event: LinkedNode<Node>.Event) {
        for held in hold.release() { post(.link(held)) }
        post(event)
    }

    /// Feeds a link event stamped now.
    func linkEvent(_ make: (LinkInstant) -> LinkEngine.Event) { handleLink(make(linkNow)) }

    private func drain() {
        guard !working else { return }
        working = true
        defer { working = false }
        var next = 0
        while next < work.count || resumeNext, isUp, runaway == nil {
            let item: Work
            if resumeNext {
                resumeNext = false
                item = .event(.resume)
            } else {
                item = work[next]
                next += 1
            }
            if next > 20_000 {
                runaway = "unbounded: one event led to more than 20,000 follow-ups on the \(side); last: \(item)"
                world.record(side, String(runaway?.prefix(400) ?? ""))
            }
            switch item {
            case .event(let event): run(event)
            case .writeLanded: landWrite()
            }
        }
        work.removeAll()
    }

    private func run(_ event: LinkedNode<Node>.Event) {
        hold.feeding(event)
        onEventTaking(event)
        // The node is moved out while it handles the event, not copied: with a second reference held
        // here, its first write to each dictionary and array (the phone's working set, the watch's
        // cache) copied the whole collection, as the daemons' shells never do.
        guard var node = node.take() else { return }
        var reads = Reads()
        var actions: [LinkedNode<Node>.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: wallNow, linkNow: linkNow, reads: reads)
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
        onEventTaken(event)
        let query = if case .inner(let inner) = event { Node.isQuery(inner) } else { false }
        if world.queuesWrites { return queue(actions, query: query) }
        for action in actions {
            guard isUp else { return }
            if failNextWrite, isFallible(action) {
                failWrite()
                return
            }
            carryOutNow(action)
        }
    }

    /// Whether a failed write may strike this action: the clock's file or the store's writes.
    private func isFallible(_ action: LinkedNode<Node>.Action) -> Bool {
        guard case .inner(let inner) = action else { return false }
        guard let shared = Node.nodeAction(inner) else { return true }
        return Self.isDurable(shared)
    }

    private static func isDurable(_ action: NodeAction) -> Bool {
        if case .persistClock = action { return true }
        return false
    }

    /// The write fails: the rest of the list is not carried out, and the node hears of it next.
    func failWrite() {
        failNextWrite = false
        world.record(side, "durable write fails (EIO)")
        run(.inner(Node.reported(.durableWriteFailed(reason: "EIO (simulated)"))))
        if isUp { keptRunningAfterFailure = "the \(side) kept running after a failed durable write" }
    }

    /// The write queue's oldest write lands (`landWrite`, in SimHost+Writes).
    func writeLanded(life: UInt64) {
        guard life == self.life, isUp else { return }
        work.append(.writeLanded)
        drain()
    }

}

/// The two processes.
enum Side: String, Sendable {
    case phone
    case watch

    var other: Side { self == .phone ? .watch : .phone }
}
