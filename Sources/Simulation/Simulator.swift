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
    /// FNV-1a of the run's record: equal for equal seeds, or the run is not deterministic.
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

    package init(
        activity: Duration = .seconds(20), quiet: Duration = .seconds(20), faults: Bool = true, keepTrace: Bool = false
    ) {
        self.activity = activity
        self.quiet = quiet
        self.faults = faults
        self.keepTrace = keepTrace
    }
}

/// The phone's document directory and state files, as the simulated disk keeps them.
struct PhoneFiles {
    var runs: [DocumentID: WorkoutDocument] = [:]
    var splits: [DocumentID: SplitDocument] = [:]
    var tombstones: [DocumentID: Tombstone] = [:]
    var settings: Settings?
    var epoch: Timestamp?
}

/// The watch's cache directory.
struct WatchFiles {
    var runs: [DocumentID: WorkoutDocument] = [:]
    var splits: [DocumentID: SplitDocument] = [:]
    var session: SessionRecord?
    var epoch: PhoneEpochRecord?
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
    private var lastRequest: UInt64 = 0
    private var operations = 0
    private var faults = 0
    private var resets = 0
    private var violations: [String] = []

    /// A run that needs more events than this is stuck in a loop (invariant 8).
    static let maximumSteps = 300_000

    package init(seed: UInt64, options: SimulationOptions = SimulationOptions()) {
        self.seed = seed
        self.options = options
        let world = World(seed: seed, keepLines: options.keepTrace)
        self.world = world
        phone = SimHost(
            side: .phone, instance: Self.instance(1), queueID: Self.instance(3), store: PhoneFiles(), world: world)
        watch = SimHost(
            side: .watch, instance: Self.instance(2), queueID: Self.instance(4), store: WatchFiles(), world: world)
        phone.performStore = { host, action in Self.performPhone(host, action) }
        phone.read = { host, needs in
            var reads = Reads()
            for id in needs.documents.keys {
                reads.documents[id] = host.store.runs[id].map { .success($0) } ?? .failure(ReadFailure("no such file"))
            }
            return reads
        }
        watch.performStore = { host, action in Self.performWatch(host, action) }
        watch.read = { host, _ in
            Reads(
                outstandingTransfers: host.disk.pending.map {
                    OutstandingTransfer(sequence: $0.sequence, bytes: $0.payload.count, ageSeconds: 0, sent: false)
                })
        }
        world.network.phoneListening = { [unowned phone] in phone.isUp }
        // A process that exits (after a failed write) is started again, as systemd would.
        phone.onExit = { [unowned world] _ in
            world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
        }
        watch.onExit = { [unowned world] _ in
            world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.watch)))
        }
        world.network.lifeOf = { [unowned phone, unowned watch] side in side == .phone ? phone.life : watch.life }
        // Clocks: each process's wall clock is off by up to two hours, either way.
        phone.clockOffset = .seconds(world.pick(-7_200...7_200))
        watch.clockOffset = .seconds(world.pick(-7_200...7_200))
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
            if let runaway = phone.runaway ?? watch.runaway { violations.append(runaway) }
            if let failure = phone.keptRunningAfterFailure ?? watch.keptRunningAfterFailure {
                violations.append(failure)
            }
            if let key = phone.appliedTwice {
                violations.append("transfer \(key) was delivered to the phone again after it acknowledged it")
            }
            if world.steps > Self.maximumSteps {
                violations.append("unbounded: more than \(Self.maximumSteps) events in \(world.now) simulated")
            }
        }
        if violations.isEmpty { violations = checker.atQuiescence(phone: phone, watch: watch) }
        for violation in violations { world.record(nil, "VIOLATION \(violation)") }
        return SimulationResult(
            seed: seed, steps: world.steps, simulated: world.now, operations: operations, faults: faults,
            traceHash: world.traceHash, violations: violations, trace: world.lines)
    }

    /// Handles one scheduled event; true at the final quiescence point.
    private func handle(_ event: World.Scheduled) -> Bool {
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
        case .endOfTurn(let side, let life):
            host(side) { $0.endOfTurn(life: life) }
        case .echo(let run, let life):
            guard phone.life == life else { return false }
            phone.post(.externalChange(.documentChanged(.workout(run))))
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
            if watch.isUp, let reply = watchctl(.wrist(up: true)) { _ = reply }
        case .step(.restart(let side)):
            if side == .phone, !phone.isUp { bootPhone() }
            if side == .watch, !watch.isUp { bootWatch() }
        case .step(.quiesce):
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
        case .endOfTurn(let side, _): "end of turn at \(side)"
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

    // MARK: Processes

    func bootPhone() {
        world.record(.phone, "boot")
        var engine = SyncEngine(settings: phone.store.settings, policy: .standard, epoch: phone.store.epoch)
        engine.clock = HybridLogicalClock(origin: .phone, highWater: phone.disk.clock)
        let node = PhoneNode(
            engine: engine, live: LiveDriver(now: phone.wallNow, persistedVersion: phone.disk.liveVersion))
        phone.boot(node, configuration: LinkConfiguration(role: .phone)) { host in
            host.post(.started(lastContext: host.disk.contextSlot?.payload))
            let files = host.store
            for id in files.tombstones.keys.sorted() { host.post(.documentScanned(.tombstone(files.tombstones[id]!))) }
            for id in files.splits.keys.sorted() { host.post(.documentScanned(.split(files.splits[id]!))) }
            for id in files.runs.keys.sorted() { host.post(.documentScanned(.workout(files.runs[id]!))) }
            host.post(.gatherFinished("\(files.runs.count) runs", skipped: []))
        }
        phone.post(.linkStarted(activated: phone.link?.isActivated ?? false))
    }

    func bootWatch() {
        world.record(.watch, "boot")
        let files = watch.store
        let engine = WatchEngine(
            cache: WatchCache(
                restoringWorkouts: files.runs.keys.sorted().compactMap { files.runs[$0] },
                splits: files.splits.keys.sorted().compactMap { files.splits[$0] }),
            session: files.session,
            queued: watch.disk.pending.compactMap {
                try? DocumentCoder.decode(WatchToPhoneMessage.self, from: $0.payload)
            },
            clockHighWater: watch.disk.clock, phoneEpochRecord: files.epoch)
        let node = WatchNode(
            engine: engine, live: LiveDriver(now: watch.wallNow, persistedVersion: watch.disk.liveVersion))
        watch.boot(node, configuration: LinkConfiguration(role: .watch)) { host in
            host.post(.started(lastContext: host.disk.receivedContext?.payload, skippedCacheFiles: []))
        }
    }

    private static func performPhone(_ host: SimHost<PhoneNode, PhoneFiles>, _ action: PhoneNode.Action) {
        switch action {
        case .store(.writeSplit(let split)): host.store.splits[split.id] = split
        case .store(.removeSplitFile(let id)): host.store.splits[id] = nil
        case .store(.writeWorkout(let run)):
            host.store.runs[run.id] = run
            host.world.schedule(after: host.world.milliseconds(0...2_000), .echo(run, life: host.life))
        case .store(.removeWorkoutFile(let id, _)): host.store.runs[id] = nil
        case .store(.writeTombstone(let stub)): host.store.tombstones[stub.id] = stub
        case .store(.persistSettings(let settings)): host.store.settings = settings
        case .store(.persistEpoch(let epoch)): host.store.epoch = epoch
        case .store(.persistComplicationBudget), .store(.writeSamples), .store(.removeSamples), .store(.moveSamples):
            // No exports or complications in the workload yet (docs/SIMULATION.md).
            break
        case .loadRuns(let wanted):
            var reads = Reads()
            for id in wanted.keys {
                reads.documents[id] = host.store.runs[id].map { .success($0) } ?? .failure(ReadFailure("no such file"))
            }
            host.post(.runsLoaded(reads))
        case .rescan:
            host.post(.rescanFinished(.success([])))
        case .node:
            break
        }
    }

    private static func performWatch(_ host: SimHost<WatchNode, WatchFiles>, _ action: WatchNode.Action) {
        switch action {
        case .store(.persistWorkout(let run)): host.store.runs[run.id] = run
        case .store(.deleteWorkout(let id)): host.store.runs[id] = nil
        case .store(.persistSplit(let split)): host.store.splits[split.id] = split
        case .store(.deleteSplit(let id)): host.store.splits[id] = nil
        case .store(.persistPhoneEpoch(let record)): host.store.epoch = record
        case .store(.persistSession(let record)): host.store.session = record
        case .store(.persistComplication): break
        case .node: break
        }
    }

    // MARK: Faults

    private func fault() {
        faults += 1
        switch world.pick(0...13) {
        case 12:
            // A wall clock steps (NTP, a person): up to an hour either way, while running.
            let side: Side = world.chance(0.5) ? .phone : .watch
            let step = Duration.seconds(world.pick(-3_600...3_600))
            world.record(side, "clock steps \(step)")
            if side == .phone { phone.clockOffset += step } else { watch.clockOffset += step }
        case 13 where world.chance(0.3):
            resetPhone()
        case 0...2:
            world.network.startBlackhole()
            world.schedule(after: world.milliseconds(300...6_000), .step(.heal))
        case 10:
            world.network.startDropping(towards: world.chance(0.5) ? .phone : .watch)
            world.schedule(after: world.milliseconds(300...6_000), .step(.heal))
        case 11:
            let side: Side = world.chance(0.5) ? .phone : .watch
            world.record(side, "the next durable write will fail")
            if side == .phone { phone.failNextWrite = true } else { watch.failNextWrite = true }
        case 3:
            world.network.reset()
        case 4, 5:
            world.record(.phone, "crash")
            phone.crash()
            world.schedule(after: world.milliseconds(100...3_000), .step(.restart(.phone)))
        case 6, 7:
            world.record(.watch, "crash")
            watch.crash()
            world.schedule(after: world.milliseconds(100...3_000), .step(.restart(.watch)))
        default:
            _ = watchctl(.wrist(up: world.chance(0.5)))
        }
    }

    /// The phone is wiped (seed 002's reset): a new instance with an empty document directory and
    /// state. Everything acknowledged before is superseded; the watch must follow the new phone
    /// wholesale.
    private func resetPhone() {
        world.record(.phone, "reset: wiped, new instance")
        phone.crash()
        resets += 1
        checker.phoneReset(runsBefore: Set(phone.store.runs.keys).union(watch.store.runs.keys))
        phone.instance = Self.instance(UInt8(10 + resets % 200))
        phone.queueID = Self.instance(UInt8(210 + resets % 40))
        phone.store = PhoneFiles()
        phone.disk = LinkDisk()
        world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
    }

    // MARK: Admin requests

    func phonectl(_ command: PhoneCommand) -> AdminResponse? {
        guard phone.isUp, let link = phone.link else { return nil }
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        var bytes: [UInt8] = []
        while bytes.count < 16 { withUnsafeBytes(of: world.random.next()) { bytes += $0 } }
        phone.post(.admin(request, command, freshID: DocumentID(bytes: bytes), facts: facts(phone.instance, link)))
        let reply = phone.replies.removeValue(forKey: request)
        world.record(.phone, "admin \(command) → \(reply?.status.rawValue ?? "none") \(reply?.message ?? "")")
        return reply
    }

    func watchctl(_ command: WatchCommand) -> AdminResponse? {
        guard watch.isUp, let link = watch.link else { return nil }
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        watch.post(.admin(request, command, facts: facts(watch.instance, link)))
        let reply = watch.replies.removeValue(forKey: request)
        world.record(.watch, "admin \(command) → \(reply?.status.rawValue ?? "none") \(reply?.message ?? "")")
        return reply
    }

    private func facts(_ instance: InstanceID, _ link: LinkEngine) -> ShellFacts {
        ShellFacts(
            link: LinkStatus(
                role: link.configuration.role, instance: instance, activated: link.isActivated,
                reachable: link.isReachable, linked: link.isLinked, peer: link.peerInstance,
                watchAppForeground: link.watchAppForeground, contextGenerationSent: link.currentContextSlot?.generation,
                contextGenerationAcknowledged: link.currentContextSlot?.acknowledgedGeneration,
                contextGenerationReceived: link.lastReceivedContext?.generation,
                contextSender: link.lastReceivedContext?.sender, outboxDepth: link.outstandingTransfers.count,
                handshakingConnections: 0),
            uptimeSeconds: 0, journalCounts: [:])
    }

    // MARK: The workload

    private func operate() {
        operations += 1
        if world.chance(0.55) { operatePhone() } else { operateWatch() }
    }

    private func operatePhone() {
        guard let engine = phone.node?.engine else { return }
        let active = engine.index.activeIDs.sorted()
        let roll = world.pick(0...99)
        if engine.splits.isEmpty || roll < 4 {
            let exercises = (0..<world.pick(1...3)).map { index in
                ExerciseTemplate(
                    name: "E\(index)", equipment: "barbell", targetSets: world.pick(1...3), targetReps: 5,
                    targetWeight: Double(world.pick(0...10) * 5))
            }
            _ = phonectl(.createSplit(name: "S\(operations)", exercises: exercises))
            return
        }
        if active.count < 2 || roll < 12, let split = world.pick(engine.splits.keys.sorted()) {
            _ = phonectl(.start(split: split, endingOthers: world.chance(0.2)))
            return
        }
        guard let runID = world.pick(active), let run = engine.run(runID) else { return }
        switch roll {
        case 12..<60:
            setOperation(on: run, side: .phone, undo: world.chance(0.2))
        case 60..<66:
            _ = phonectl(world.chance(0.5) ? .pause(run: runID) : .resume(run: runID))
        case 66..<72:
            _ = phonectl(.end(run: runID))
        case 72..<77:
            if phonectl(.discard(run: runID))?.status == .ok { checker.tombstoned.insert(runID) }
        case 77..<82:
            _ = phonectl(.lockWorkout(id: runID))
        case 82..<90:
            _ = phonectl(.unlockWorkout)
        case 90..<94:
            _ = phonectl(.set(.skip(run: runID, exercise: world.pick(1...run.logs.count))))
        case 94..<98:
            let command = liveCommand(on: run)
            if phonectl(.live(command))?.status == .ok, case .advance = command { checker.liveAdvanced(run.id) }
        default:
            _ = phonectl(.push)
        }
        if let tombstones = phone.node?.engine.tombstones.keys { checker.tombstoned.formUnion(tombstones) }
    }

    private func operateWatch() {
        guard let cache = watch.node?.engine.cache else { return }
        let active = cache.workouts.values.filter(\.status.isActive).map(\.id).sorted()
        guard let runID = world.pick(active), let run = cache.workouts[runID] else { return }
        switch world.pick(0...99) {
        case 0..<70:
            setOperation(on: run, side: .watch, undo: world.chance(0.2))
        case 70..<80:
            _ = watchctl(world.chance(0.5) ? .pause(run: runID) : .resume(run: runID))
        case 80..<86:
            _ = watchctl(.set(.skip(run: runID, exercise: world.pick(1...run.logs.count))))
        case 86..<90:
            _ = watchctl(.startSession(run: runID))
        case 90..<97:
            let command = liveCommand(on: run)
            if watchctl(.live(command))?.status == .ok, case .advance = command { checker.liveAdvanced(run.id) }
        default:
            _ = watchctl(.sync)
        }
    }

    /// A live-flow verb on `run`: mostly advancing, sometimes opening or closing.
    private func liveCommand(on run: WorkoutDocument) -> LiveCommand {
        switch world.pick(0...9) {
        case 0...2: .open(run: run.id, exercise: run.logs.isEmpty ? nil : world.pick(1...run.logs.count))
        case 3...8: .advance(run: run.id, reps: nil, weight: nil)
        default: .close(run: run.id)
        }
    }

    /// Completes or undoes one set; an acknowledged one is remembered for the final check.
    private func setOperation(on run: WorkoutDocument, side: Side, undo: Bool) {
        guard !run.logs.isEmpty else { return }
        let exercise = world.pick(1...run.logs.count)
        let log = run.logs[exercise - 1]
        guard !log.sets.isEmpty else { return }
        let set = world.pick(1...log.sets.count)
        let reps = world.pick(1...12)
        let weight = Double(world.pick(0...20)) * 2.5
        let command: SetCommand =
            undo
            ? .undo(run: run.id, exercise: exercise, set: set)
            : .complete(run: run.id, exercise: exercise, set: set, reps: reps, weight: weight)
        let reply = side == .phone ? phonectl(.set(command)) : watchctl(.set(command))
        guard reply?.status == .ok else { return }
        checker.acknowledged(
            SetEdit(run: run.id, log: log.id, set: set - 1, done: !undo, reps: reps, weight: weight, side: side))
    }
}

/// What the simulator needs of either host, whatever its node.
protocol SimHostProtocol: AnyObject {
    func linkEvent(_ make: (LinkInstant) -> LinkEngine.Event)
    func timerFired(_ timer: NodeTimer, token: UInt64)
    func linkTick(life: UInt64)
    func endOfTurn(life: UInt64)
}

extension SimHost: SimHostProtocol {}
