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
    var transferMarks: [InstanceID: QueueMark] = [:]
    var outbox = SimOutbox()
    /// The phone's complication outbox (`transferCurrentComplicationUserInfo`).
    var complicationOutbox = SimOutbox()
    var clock: Stamp?
    var liveVersion: Int?
    var watchState: WatchState?
}

/// One simulated daemon: its node, with the link engine inside (`LinkedNode`), run by the same
/// `NodeRunner` the daemons run, against the simulated network, disk and clock: the host is the
/// runner's ports (`RunnerPorts`) and decides no order of its own. `Store` is the node's own files
/// (phone: the document directory; watch: the cache).
final class SimHost<Node, Store: SimStore>: RunnerPorts where Store.Node == Node {
    let side: Side
    var instance: InstanceID
    var queueID: InstanceID
    /// The complication outbox's queue (the phone's; nil on the watch): follows `queueID`.
    var complicationQueueID: InstanceID? {
        side == .phone ? InstanceID(bytes: [0xC0] + queueID.bytes.dropFirst()) : nil
    }
    var store: Store
    var disk = LinkDisk()
    /// The process's runner, with its node; nil while the process is down.
    private(set) var runner: NodeRunner<Node>?
    var node: LinkedNode<Node>? { runner?.node }
    /// The link engine, inside the node.
    var link: LinkEngine? { runner?.node.link }
    /// When this process started (its monotonic origin), and its wall clock's offset from true time.
    private var bootedAt: Duration = .zero
    var clockOffset: Duration = .zero
    /// Each boot gets a new generation: events scheduled for an earlier life are dropped.
    private(set) var life: UInt64 = 0
    /// The write queue: durable writes begun and not landed yet, in order, each with its number and
    /// whether a read already put it on the disk (its landing is still reported in turn).
    var writesInFlight: [(number: UInt64, action: LinkedNode<Node>.Action, onDisk: Bool)] = []
    /// The runner's turn budget: the daemons' events per turn, or fewer (a seed draws it), so turns
    /// end, and the loop's other work comes between, at more places.
    var budget = RunnerBudget()
    /// The write whose landing is scheduled.
    var scheduledLanding: UInt64?
    var hasWritesInFlight: Bool { !writesInFlight.isEmpty }
    /// The runner stopped reading the link: what arrives on a connection (bytes, a close) waits in
    /// the socket's buffer, in order, until a later turn after it reads again.
    private var readingPaused = false
    var unread: [LinkEngine.Event] = []
    /// Each connection's seal once its handshake is over (`LinkEndpoint` keeps the same).
    var seals: [Int: FrameSeal] = [:]
    /// The armed timers: a timer fires only if it is still the one armed under its name.
    var armed: [NodeTimer: UInt64] = [:]
    /// Each armed timer's wall-clock deadline, the wait it was armed with, and when (simulated time).
    var armedAt: [NodeTimer: (at: Timestamp, armedFor: Duration, since: Duration)] = [:]
    var replies: [AdminRequestID: AdminResponse] = [:]
    /// Set when one event led to an endless chain of work (invariant 8).
    private(set) var runaway: String?
    /// Transfers this side acknowledged as processed, over all its lives, with their contents'
    /// digests (invariant 2); and the digest of each delivered to the node.
    var acknowledged: [TransferKey: UInt64] = [:]
    var delivered: [TransferKey: UInt64] = [:]
    /// A transfer delivered to the node again after it was acknowledged (invariant 2).
    var appliedTwice: TransferKey?
    /// The next durable write fails (EIO): the node must exit, never retry.
    var failNextWrite = false
    /// Set when a node kept running after a failed durable write.
    var keptRunningAfterFailure: String?
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

    /// What the world provides: the time, scheduling, the network and the node's store.
    unowned let world: World

    init(side: Side, instance: InstanceID, queueID: InstanceID, store: Store, world: World) {
        self.side = side
        self.instance = instance
        self.queueID = queueID
        self.store = store
        self.world = world
    }

    /// Kept beside `runner`: asked before every step.
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
        forgetMemory()
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
        runner = NodeRunner(LinkedNode(node, link: link), ports: self, budget: budget)
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

    /// What the process held in memory: its runner, the writes not landed, the bytes not read.
    private func forgetMemory() {
        runner?.stop()
        runner = nil
        writesInFlight = []
        scheduledLanding = nil
        readingPaused = false
        unread = []
    }

    /// The process dies at an action boundary: memory is gone, the disk stays. The group commit in
    /// flight, if any, had written its records whole or not at all; a power loss (the machine went
    /// down) keeps any prefix of them, tearing the last record at any byte.
    func crash(powerLoss: Bool = false) {
        isUp = false
        forgetMemory()
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

    // MARK: Events in (each one a turn of the process's loop)

    func post(_ event: Node.Event) {
        post(.inner(event))
    }

    func post(_ event: LinkedNode<Node>.Event) {
        guard isUp, let runner else { return }
        runner.post(event)
        checkRunaway()
    }

    /// A link event; what arrives on a connection waits while the runner does not read.
    func handleLink(_ event: LinkEngine.Event) {
        guard isUp, let runner else { return }
        switch event {
        case .bytesReceived, .connectionClosed:
            guard !readingPaused, unread.isEmpty else { return unread.append(event) }
        default:
            break
        }
        runner.linkArrived(event)
        checkRunaway()
    }

    /// An outbox's outcome, after the link events held before it.
    func postAfterHeld(_ event: LinkedNode<Node>.Event) {
        runner?.postAfterHeld(event)
    }

    /// Feeds a link event stamped now.
    func linkEvent(_ make: (LinkInstant) -> LinkEngine.Event) { handleLink(make(linkNow)) }

    /// The turn the runner asked for (`scheduleTurn`).
    func turn(life: UInt64) {
        guard life == self.life, isUp, let runner else { return }
        runner.turn()
        checkRunaway()
    }

    /// The socket is read again: what waited in its buffer is fed, in order, until the runner
    /// stops reading again.
    func readingResumed(life: UInt64) {
        guard life == self.life, isUp else { return }
        while !readingPaused, isUp, !unread.isEmpty, let runner {
            runner.linkArrived(unread.removeFirst())
            checkRunaway()
        }
    }

    /// One event led to an endless chain of work, or one turn of the loop held up everything else
    /// (invariant 8): the node is stopped where it is.
    func checkRunaway(_ reason: @autoclosure () -> String? = nil) {
        guard let runner, runaway == nil else { return }
        let reason =
            reason()
            ?? (runner.fedSinceIdle > 20_000
                ? "more than 20,000 events fed without a pause"
                : runner.longestTurn > runner.budget.events + 1
                    ? "one turn fed \(runner.longestTurn) events: the loop's other work (admin, heartbeats, the watchdog) waited behind them"
                    : nil)
        guard let reason else { return }
        runaway = "unbounded on the \(side): \(reason)"
        world.record(side, String(runaway?.prefix(400) ?? ""))
        runner.stop()
    }

    // MARK: The runner's ports

    func scheduleTurn() {
        world.schedule(after: .zero, .turn(side, life: life))
    }

    func setReadingPaused(_ paused: Bool) {
        readingPaused = paused
        world.record(side, paused ? "reading paused" : "reading resumed")
        if !paused { world.schedule(after: .zero, .readingResumed(side, life: life)) }
    }

    func diagnose(_ diagnostic: TurnDiagnostic) {
        world.record(side, "\(diagnostic)")
        if case .readsRepeated = diagnostic { checkRunaway("\(diagnostic)") }
    }

    func feeding(_ event: LinkedNode<Node>.Event) { onEventTaking(event) }
    func fed(_ event: LinkedNode<Node>.Event) { onEventTaken(event) }
}

/// The two processes.
enum Side: String, Sendable {
    case phone
    case watch

    var other: Side { self == .phone ? .watch : .phone }
}
