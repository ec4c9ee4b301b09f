import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// What one seed's run found.
package struct SimulationResult: Sendable {
    package var seed: UInt64
    /// Scheduled events handled, and virtual time simulated.
    package var steps: Int
    package var simulated: Duration
    package var operations: Int
    package var faults: Int
    /// FNV-1a of the run's record: equal for equal seeds, or the run is not deterministic (the
    /// offset basis alone when the record is not written, `recordTrace`).
    package var traceHash: UInt64
    package var violations: [String]
    /// The run's record, when asked for (`--trace`).
    package var trace: [String]?
}

/// What a run simulates: its length and which faults it may inject.
package struct SimulationOptions: Sendable {
    /// Virtual time of workload and faults before the quiet period.
    package var activity: Duration = .seconds(20)
    /// Virtual time with every fault healed and both processes up, before the final checks.
    package var quiet: Duration = .seconds(20)
    package var faults = true
    package var keepTrace = false
    /// Whether the record is written at all (hashed into `traceHash`, kept with `keepTrace`): a batch,
    /// which reads neither, leaves it out (describing every admin command and log line was a tenth
    /// of a seed's work).
    package var recordTrace = true
    /// Whether durable writes land later, on a write queue, as in the daemons (the name is that of the
    /// turn slicing the model came with, since gone). Off only for seeds pinned before the model
    /// existed.
    package var slicesTurns = true
    /// The phone's complication budget a day: small, so a seed sends complications both ways.
    package var complicationsPerDay = 3

    package init(
        activity: Duration = .seconds(20), quiet: Duration = .seconds(20), faults: Bool = true, keepTrace: Bool = false,
        recordTrace: Bool = true, slicesTurns: Bool = true
    ) {
        self.slicesTurns = slicesTurns
        self.activity = activity
        self.quiet = quiet
        self.faults = faults
        self.keepTrace = keepTrace
        self.recordTrace = recordTrace
    }
}

/// The phone's document directory and state files, as the simulated disk keeps them.
struct PhoneFiles {
    // The document directory.
    var runs: [DocumentID: WorkoutDocument] = [:]
    var splits: [DocumentID: SplitDocument] = [:]
    var tombstones: [DocumentID: Tombstone] = [:]
    /// The epoch file, which lives with the documents it guards.
    var epoch: Timestamp?
    /// Each run's copy before its last write: what another device's late sync may put back.
    var previousRuns: [DocumentID: WorkoutDocument] = [:]
    /// Runs whose file holds such an older copy the phone has not written over yet: until it has,
    /// the file lacks what the phone acknowledged (`externalOlderCopy`).
    var olderCopies: Set<DocumentID> = []
    // The state directory.
    var settings: Settings?
    /// The state directory's `epoch.json`: the last epoch this phone started (or, for an installation
    /// upgraded from a version that kept the epoch only there, that one).
    var stateEpoch: Timestamp?
    var complicationBudget = ComplicationBudget()

    /// The state directory alone: what survives a wiped document directory.
    var stateOnly: PhoneFiles {
        PhoneFiles(settings: settings, stateEpoch: stateEpoch, complicationBudget: complicationBudget)
    }

    /// The document directory alone: what survives a lost state directory (a reinstall).
    var documentsOnly: PhoneFiles {
        PhoneFiles(
            runs: runs, splits: splits, tombstones: tombstones, epoch: epoch, previousRuns: previousRuns,
            olderCopies: olderCopies)
    }
}

/// The watch's cache directory.
struct WatchFiles {
    var runs: [DocumentID: WorkoutDocument] = [:]
    var splits: [DocumentID: SplitDocument] = [:]
    var session: SessionRecord?
    var epoch: PhoneEpochRecord?
    var complication: ComplicationPayload?
    /// How many times the complication file was written (a script reads it).
    var complicationWrites = 0
}

/// Both daemons' real nodes and link engines under one seed: a workload of person operations on
/// both sides, network faults, crashes at action boundaries with restarts from what the disk kept,
/// skewed clocks, and the invariant checks (docs/SIMULATION.md).
package final class Simulator {
    package let seed: UInt64
    let options: SimulationOptions
    let world: World
    let phone: SimHost<PhoneNode, PhoneFiles>
    let watch: SimHost<WatchNode, WatchFiles>
    var checker = Checker()
    var lastRequest: UInt64 = 0
    var operations = 0
    /// Complications pushed, and the pushes whose reply has not come yet (by request).
    var complications = 0
    var pendingComplications: [AdminRequestID: String] = [:]
    /// Data messages sent (`Simulator+DataMessages`): how many, the payloads each side sent, the
    /// sends whose reply has not come yet, and what their checks found.
    var dataSent = 0
    var sentPayloads: [Side: Set<[UInt8]>] = [:]
    var pendingData: [AdminRequestID: PendingData] = [:]
    var dataViolations: [String] = []
    /// The watch's `wait` requests not answered yet (`Simulator+SyncWaits`).
    var pendingWaits: [AdminRequestID: PendingWait] = [:]
    var faults = 0
    var resets = 0
    /// What the recorded-time checks found (`Simulator+RecordedTimes`).
    var timeViolations: [String] = []
    /// What the watch app had taken (contexts, complications, the last file) when it stopped
    /// running: nothing may change it until it launches again.
    private var takenWhenStopped: (contexts: Int, complications: Int, file: String?)?
    /// The phone app's likewise: the watch updates it ingested, the last file.
    private var phoneTookWhenStopped: (ingested: Int, file: String?)?
    /// How many times the final checks waited for a push still on its way (at most 10).
    var quiesceDeferrals = 0
    /// The phone's push policy for this seed.
    var policy = PushPolicy.standard
    /// The phone's latest backup, and the backup of the phone instance the last reset replaced.
    var phoneBackup: PhoneBackup?
    var retiredBackup: PhoneBackup?
    /// The watch's latest backup, taken with the phone's (restored only while that phone is current).
    var watchBackup: WatchBackup?
    /// A reset or a wipe replaced the phone, and the watch has had no push since (`watchLinked`).
    var phoneReplaced = false
    /// What the watch held as a push arrived, until its node takes it (`watchStepTaken`).
    var watchBeforeContext: WatchBeforeContext?
    /// The runs active on the side as it took the last admin request, and those of them the request
    /// completed (`recordedEnd`).
    var activeAtAdmin: Set<DocumentID> = []
    var completedByAdmin: Set<DocumentID> = []
    private var violations: [String] = []
    /// What `afterStep` found while a script advanced time (`Simulator+Script`).
    var scriptViolations: [String] = []

    /// A run that needs more events than this is stuck in a loop (invariant 8).
    static let maximumSteps = 300_000

    package init(seed: UInt64, options: SimulationOptions = SimulationOptions()) {
        self.seed = seed
        self.options = options
        let world = World(
            seed: seed, keepLines: options.keepTrace, recording: options.recordTrace || options.keepTrace,
            slicesTurns: options.slicesTurns)
        self.world = world
        phone = SimHost(
            side: .phone, instance: Self.instance(1), queueID: Self.instance(3), store: PhoneFiles(), world: world)
        watch = SimHost(
            side: .watch, instance: Self.instance(2), queueID: Self.instance(4), store: WatchFiles(), world: world)
        // Half the seeds run a side with a smaller turn budget than the daemons' (2 events or more),
        // and half with a shorter backlog before it stops reading: turns end, and reading pauses, at
        // more places than the daemons' figures reach with the workload's small bursts.
        for host in [phone, watch] as [any SimBudgeted] {
            if world.chance(0.5) { host.budget.events = world.pick(2...host.budget.events) }
            if world.chance(0.5) { host.budget.backlog = world.pick(0...host.budget.backlog) }
        }
        world.network.phoneListening = { [unowned phone] in phone.isUp }
        // A process that exits (after a failed write) is started again, as systemd would.
        phone.onExit = { [unowned world] _ in
            world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
        }
        watch.onExit = { [unowned world] _ in
            world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.watch)))
        }
        // One watch message in twenty meets a crash of the watch while it is in flight (the Seams
        // issue: a run the push left out must keep an edit whose message died with watchd).
        watch.onMessageSent = { [unowned self] in
            guard options.faults, world.now < options.activity, world.chance(0.05) else { return }
            world.schedule(after: world.milliseconds(0...15), .step(.crashNow(.watch)))
        }
        // The runs an admin request completed, read as the node takes it and right after: what the
        // same call feeds before or after it (a transfer batch whose writes landed) may complete a
        // run too, and that end is not the request's (seed 6991).
        phone.onEventTaking = { [unowned self] event in
            if case .inner(.admin) = event { activeAtAdmin = Set(phone.node?.inner.engine.index.activeIDs ?? []) }
        }
        phone.onEventTaken = { [unowned self] event in
            checkNothingReachesAStoppedPhoneApp()
            guard case .inner(.admin) = event, let engine = phone.node?.inner.engine else { return }
            completedByAdmin = activeAtAdmin.filter { engine.index[$0].map(RunIndex.isCompleted) ?? false }
        }
        watch.onEventTaking = { [unowned self] event in
            if case .inner(.admin) = event {
                activeAtAdmin = Set(
                    watch.node?.inner.engine.cache.workouts.values.filter(\.status.isActive).map(\.id) ?? [])
            }
        }
        watch.onEventTaken = { [unowned self] event in
            checkNothingReachesAStoppedApp()
            if case .inner(.admin) = event, let cache = watch.node?.inner.engine.cache {
                completedByAdmin = activeAtAdmin.filter { cache.workouts[$0]?.status == .completed }
            }
            if watchBeforeContext != nil { watchStepTaken() }
        }
        phone.onCommitStarted = { [unowned self] milliseconds in commitStarted(.phone, milliseconds) }
        watch.onCommitStarted = { [unowned self] milliseconds in commitStarted(.watch, milliseconds) }
        watch.onNotified = { [unowned self] notification in
            if case .userInfoReceived(_, let payload) = notification,
                let complication = try? DocumentCoder.decode(ComplicationPayload.self, from: payload)
            {
                checker.complicationReceived(complication)
            }
            if case .contextReceived = notification { contextArriving() }
            if case .linkEstablished = notification { watchLinked() }
        }
        world.network.lifeOf = { [unowned phone, unowned watch] side in side == .phone ? phone.life : watch.life }
        // Clocks: each process's wall clock is off by up to a day, either way (within an hour in
        // most seeds).
        let skew = world.chance(0.2) ? 86_400 : 3_600
        phone.clockOffset = .seconds(world.pick(-skew...skew))
        watch.clockOffset = .seconds(world.pick(-skew...skew))
        // A short recent window and a small cap, so runs leave the push (and the working set) while
        // edits of them are in flight, and come back to it through loads.
        policy = PushPolicy(recentLimit: world.pick(1...4), recentWindow: .seconds(world.pick(5...120)))
        // One installation in three was upgraded from a version that kept the epoch in its state.
        if world.chance(0.33) { phone.store.stateEpoch = world.epoch.advanced(by: .seconds(-world.pick(60...86_400))) }
    }

    static func instance(_ byte: UInt8) -> InstanceID {
        // 16 bytes always make an InstanceID.
        InstanceID(bytes: Array(repeating: byte, count: 16))!
    }

    /// Runs the seed to the end: activity, then quiet, then the final checks.
    package func run() -> SimulationResult {
        bootPhone()
        bootWatch()
        world.schedule(after: .milliseconds(50), .step(.operate))
        if options.faults { world.schedule(after: world.milliseconds(500...3_000), .step(.fault)) }
        world.schedule(after: options.activity, .step(.heal))
        world.schedule(after: options.activity + options.quiet, .step(.quiesce))
        var quiesced = false
        while !quiesced, violations.isEmpty, let event = world.next() {
            quiesced = handle(event)
            if let found = checker.afterStep(phone: phone, watch: watch) { violations.append(found) }
            violations += timeViolations
            timeViolations = []
            if let runaway = phone.runaway ?? watch.runaway { violations.append(runaway) }
            if let failure = phone.keptRunningAfterFailure ?? watch.keptRunningAfterFailure {
                violations.append(failure)
            }
            if let refused = phone.outboxRefused ?? watch.outboxRefused { violations.append(refused) }
            if let refused = phone.outOfOrderAppend ?? watch.outOfOrderAppend { violations.append(refused) }
            for host in [phone.appliedTwice.map { ("phone", $0) }, watch.appliedTwice.map { ("watch", $0) }] {
                guard let (side, key) = host else { continue }
                violations.append("transfer \(key) was delivered to the \(side) again after it acknowledged it")
            }
            if world.steps > Self.maximumSteps {
                violations.append("unbounded: more than \(Self.maximumSteps) events in \(world.now) simulated")
            }
        }
        harvestComplicationReplies()
        harvestDataReplies()
        harvestWaits()
        if violations.isEmpty { violations = dataViolations + unansweredData() }
        // An older copy still in place of a run the phone only summarises is all there is of it.
        for id in phone.store.olderCopies where phone.node?.inner.engine.run(id) == nil {
            checker.fileReplacedUnseen(id)
        }
        if violations.isEmpty { violations = checker.atQuiescence(phone: phone, watch: watch) }
        for violation in violations { world.record(nil, "VIOLATION \(violation)") }
        return SimulationResult(
            seed: seed, steps: world.steps, simulated: world.now, operations: operations, faults: faults,
            traceHash: world.traceHash, violations: violations, trace: world.lines)
    }

    /// Handles one scheduled event; true at the final quiescence point.
    func handle(_ event: World.Scheduled) -> Bool {
        if options.keepTrace { world.record(nil, "event \(Self.describe(event))") }
        switch event {
        case .deliver(let id, let side, let bytes):
            guard world.network.isOpen(id, at: side) else { return false }
            host(side) { $0.linkEvent { .bytesReceived(ConnectionID(id), bytes, now: $0) } }
        case .opened(let id, let side):
            guard world.network.isOpen(id, at: side) else { return false }
            var nonce: [UInt8] = []
            while nonce.count < LinkFrame.nonceByteCount { withUnsafeBytes(of: world.random.next()) { nonce += $0 } }
            let source = side == .phone ? "10.231.0.2" : nil
            world.network.announce(id, to: side)
            host(side) { $0.linkEvent { .connectionOpened(ConnectionID(id), nonce: nonce, now: $0, source: source) } }
        case .closed(let id, let side):
            let current = world.network.isCurrent(id, at: side)
            if world.network.closeArrived(id, at: side) {
                host(side) { $0.linkEvent { .connectionClosed(ConnectionID(id), now: $0) } }
            } else if side == .watch, current {
                // Closed before the dial completed: the dial fails.
                host(side) { $0.linkEvent { .dialFailed(reason: "connection refused", now: $0) } }
            }
        case .dialFailed(let side, let reason, let life):
            guard (side == .phone ? phone.life : watch.life) == life else { return false }
            host(side) { $0.linkEvent { .dialFailed(reason: reason, now: $0) } }
        case .hostTimer(let side, let timer, let token):
            host(side) { $0.timerFired(timer, token: token) }
        case .linkTick(let side, let life):
            host(side) { $0.linkTick(life: life) }
        case .turn(let side, let life):
            host(side) { $0.turn(life: life) }
        case .readingResumed(let side, let life):
            host(side) { $0.readingResumed(life: life) }
        case .writeLanded(let side, let life, let number):
            host(side) { $0.writeLanded(life: life, number: number) }
        case .outboxSynced(let side, let life):
            host(side) { $0.outboxSynced(life: life) }
        case .echo(let run, let life):
            guard phone.life == life else { return false }
            // Another device's older copy reaching a phone that holds only the run's summary: the
            // file is all there is of the run (docs/SIMULATION.md).
            if phone.isUp, phone.store.olderCopies.contains(run.id), phone.node?.inner.engine.run(run.id) == nil {
                checker.fileReplacedUnseen(run.id)
            }
            phone.post(.externalChange(.documentChanged(.workout(run))))
        case .step(.watchEdits):
            if world.now < options.activity { watchEdits() }
        case .step(.operate):
            if world.now < options.activity {
                operate()
                world.schedule(after: world.milliseconds(100...700), .step(.operate))
            }
        case .step(.fault):
            if world.now < options.activity {
                fault()
                world.schedule(after: world.milliseconds(1_000...6_000), .step(.fault))
            }
        case .step(.heal):
            world.record(nil, "heal everything")
            world.network.heal()
            if world.now >= options.activity {
                phone.failNextWrite = false
                watch.failNextWrite = false
            }
            if !phone.isUp { bootPhone() }
            if !watch.isUp { bootWatch() }
            if watch.node?.inner.isAppRunning == false { _ = watchctl(.app(.launch)) }
            if phone.node?.inner.app.isRunning == false { _ = phonectl(.app(.launch)) }
            if watch.isUp, let reply = watchctl(.wrist(up: true)) { _ = reply }
            if world.now >= options.activity, let state = watch.link?.status.watchState, state != .installed {
                if !state.isPaired { _ = watchctl(.pair(true)) }
                if !state.isWatchAppInstalled { _ = watchctl(.installApp(true)) }
                if !state.isComplicationEnabled { _ = watchctl(.enableComplication(true)) }
            }
        case .step(.crashDuringCommit(let side)):
            let unsynced = side == .phone ? phone.disk.outbox.unsyncedByteCount : watch.disk.outbox.unsyncedByteCount
            if unsynced > 0, side == .phone ? phone.isUp : watch.isUp {
                faults += 1
                crash(side)
            }
        case .step(.restart(let side)):
            if side == .phone, !phone.isUp { bootPhone() }
            if side == .watch, !watch.isUp { bootWatch() }
        case .step(.crashNow(let side)):
            if world.now < options.activity, side == .phone ? phone.isUp : watch.isUp {
                faults += 1
                crash(side)
            }
        case .step(.cutLink):
            if world.now < options.activity {
                world.record(nil, "the link is cut")
                world.network.reset()
            }
        case .step(.quiesce):
            // The recent window moves during the quiet time too: a push the phone made in the last
            // two seconds (or a tick due now) is still on its way, so the checks wait for it.
            let lastPush = phone.node?.inner.engine.lastPushAt
            let due = phone.node?.inner.engine.nextDeadline.map { $0 <= phone.wallNow.advanced(by: .seconds(2)) }
            if quiesceDeferrals < 10,
                due == true || lastPush.map({ $0.duration(to: phone.wallNow) < .seconds(2) }) == true
            {
                quiesceDeferrals += 1
                world.schedule(after: .seconds(2), .step(.quiesce))
                return false
            }
            return true
        }
        return false
    }

    /// One short line per scheduled event, for `--trace` (payloads by size only).
    private static func describe(_ event: World.Scheduled) -> String {
        switch event {
        case .deliver(let id, let side, let bytes): "deliver #\(id) → \(side) \(bytes.count) bytes"
        case .opened(let id, let side): "opened #\(id) at \(side)"
        case .closed(let id, let side): "closed #\(id) at \(side)"
        case .dialFailed(let side, let reason, _): "dial failed at \(side): \(reason)"
        case .hostTimer(let side, let timer, _): "timer \(timer) at \(side)"
        case .linkTick(let side, _): "link tick at \(side)"
        case .turn(let side, _): "turn at \(side)"
        case .readingResumed(let side, _): "reading resumed at \(side)"
        case .writeLanded(let side, _, let number): "write \(number) lands at \(side)"
        case .outboxSynced(let side, _): "outbox synced at \(side)"
        case .echo(let run, _): "watcher echo of \(run.id) version \(run.version)"
        case .step(let step): "step \(step)"
        }
    }

    private func host(_ side: Side, _ body: (any SimHostProtocol) -> Void) {
        switch side {
        case .phone: body(phone)
        case .watch: body(watch)
        }
    }

}

/// What the simulator needs of either host, whatever its node.
protocol SimHostProtocol: AnyObject {
    func linkEvent(_ make: (LinkInstant) -> LinkEngine.Event)
    func timerFired(_ timer: NodeTimer, token: UInt64)
    func linkTick(life: UInt64)
    func turn(life: UInt64)
    func readingResumed(life: UInt64)
    func writeLanded(life: UInt64, number: UInt64)
    func outboxSynced(life: UInt64)
}

extension SimHost: SimHostProtocol {}

/// Either host's runner budget.
protocol SimBudgeted: AnyObject {
    var budget: RunnerBudget { get set }
}

extension SimHost: SimBudgeted {}

extension Simulator {
    /// Nothing the link brings reaches the watch app while it is not running (it waits on the device
    /// for the next launch).
    func checkNothingReachesAStoppedApp() {
        guard let app = watch.node?.inner, !app.isAppRunning else {
            takenWhenStopped = nil
            return
        }
        let taken = (
            contexts: app.appliedContexts + app.skippedContexts, complications: app.complicationsReceived,
            file: app.fileTransfers.received.last?.transfer
        )
        if let before = takenWhenStopped, before != taken {
            timeViolations.append("the watch app took \(taken) from the link while it was not running (had \(before))")
        }
        takenWhenStopped = taken
    }

    /// The same for the phone app (a message from the watch launches it first).
    func checkNothingReachesAStoppedPhoneApp() {
        guard let app = phone.node?.inner, !app.app.isRunning else {
            phoneTookWhenStopped = nil
            return
        }
        let taken = (
            ingested: app.engine.ingestCounts.values.reduce(0, +), file: app.fileTransfers.received.last?.transfer
        )
        if let before = phoneTookWhenStopped, before != taken {
            timeViolations.append("the phone app took \(taken) from the link while it was not running (had \(before))")
        }
        phoneTookWhenStopped = taken
    }
}
