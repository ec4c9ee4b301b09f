import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// A script instead of the seeded workload: both real nodes and their link engines, handshake,
/// frames and acknowledgements as bytes over the simulated network, each side's files in maps, and
/// simulated time that moves only when the script advances it. The seeds' scenarios, and every test
/// that needs both nodes, are played this way in SimulationTests.
extension Simulator {
    /// Both processes booted with the daemons' push policy and linked (unless `linked` is false: the
    /// network is black-holed from the start); nothing happens unless the script asks.
    package static func scripted(seed: UInt64 = 1, complicationsPerDay: Int = 3, linked: Bool = true) -> Simulator {
        var options = SimulationOptions(faults: false)
        options.complicationsPerDay = complicationsPerDay
        let simulator = Simulator(seed: seed, options: options)
        simulator.policy = .standard
        if !linked { simulator.partition() }
        simulator.bootPhone()
        simulator.bootWatch()
        simulator.advance(by: .seconds(3))
        return simulator
    }

    /// Handles every event due within `duration` of simulated time, in order.
    package func advance(by duration: Duration) {
        let until = world.now + duration
        while let at = world.nextAt, at <= until, let event = world.next() {
            _ = handle(event)
            if let found = checker.afterStep(phone: phone, watch: watch) { scriptViolations.append(found) }
        }
        world.now = max(world.now, until)
    }

    /// `phonectl COMMAND`, answered at once, then a second of simulated time for what it set off.
    @discardableResult
    package func phone(_ command: PhoneCommand, settle: Duration = .seconds(1)) -> AdminResponse? {
        let reply = phonectl(command)
        advance(by: settle)
        return reply
    }

    /// `watchctl COMMAND`, answered at once, then a second of simulated time for what it set off.
    @discardableResult
    package func watch(_ command: WatchCommand, settle: Duration = .seconds(1)) -> AdminResponse? {
        let reply = watchctl(command)
        advance(by: settle)
        return reply
    }

    /// `phonectl COMMAND` whose reply may come later (a data send, a complication push), for `reply(to:)`.
    package func phoneRequest(_ command: PhoneCommand) -> AdminRequestID? { postToPhone(command) }

    /// `watchctl COMMAND` whose reply may come later (a data send, `wait`), for `reply(to:)`.
    package func watchRequest(_ command: WatchCommand) -> AdminRequestID? { postToWatch(command) }

    /// The reply to `request` once its daemon gave it, taken (asked again: nil).
    package func reply(to request: AdminRequestID) -> AdminResponse? {
        phone.replies.removeValue(forKey: request) ?? watch.replies.removeValue(forKey: request)
    }

    /// The phone's link engine queues `payload` as a userInfo transfer to the watch, one its node never made.
    package func transferFromPhone(_ payload: [UInt8]) {
        phone.post(LinkedNode<PhoneNode>.Event.link(.transferRequested(payload: payload)))
    }

    /// phoned's wall clock steps by `step` (a person or NTP sets it); simulated time does not move.
    package func stepPhoneClock(by step: Duration) { phone.clockOffset += step }

    /// Every packet between the two is lost until `heal()`; each side notices by its heartbeats.
    package func partition() { world.network.startBlackhole() }

    package func heal() { world.network.heal() }

    /// phoned is killed (`kill -9`); what it wrote and synced survives.
    package func killPhone() { phone.crash() }

    /// watchd is killed (`kill -9`); what it wrote and synced survives.
    package func killWatch() { watch.crash() }

    /// phoned starts again from what its disk kept.
    package func restartPhone() { bootPhone() }

    /// watchd starts again from what its disk kept; its cache scan skipped `skippedCacheFiles`.
    package func restartWatch(skippedCacheFiles: [String] = []) { bootWatch(skippedCacheFiles: skippedCacheFiles) }

    package var phoneRuns: [DocumentID: WorkoutDocument] { phone.store.runs }
    package var phoneTombstones: [DocumentID: Tombstone] { phone.store.tombstones }
    package var watchRuns: [DocumentID: WorkoutDocument] { watch.store.runs }
    package var watchSession: SessionState? { watch.node?.inner.engine.session }
    package var watchOutbox: Int { watch.disk.outbox.pending.count }
    package var phoneIngest: [SyncEngine.IngestOutcome: Int] { phone.node?.inner.engine.ingestCounts ?? [:] }

    /// phoned's node as it is now (a copy a test may feed events of its own); nil while phoned is down.
    package var phoneNode: PhoneNode? { phone.node?.inner }
    /// watchd's node as it is now (a copy a test may feed events of its own); nil while watchd is down.
    package var watchNode: WatchNode? { watch.node?.inner }
    /// phoned's wall clock now (simulated time plus its clock's offset).
    package var phoneClock: Timestamp { phone.wallNow }
    /// watchd's wall clock now (simulated time plus its clock's offset).
    package var watchClock: Timestamp { watch.wallNow }
    /// What phoned's shell tells its node with an admin request; nil while phoned is down.
    package var phoneFacts: ShellFacts? {
        phone.runner.map { ShellFacts(link: $0.node.linkStatus, uptimeSeconds: 0, journalCounts: [:]) }
    }
    /// What watchd's shell tells its node with an admin request; nil while watchd is down.
    package var watchFacts: ShellFacts? {
        watch.runner.map { ShellFacts(link: $0.node.linkStatus, uptimeSeconds: 0, journalCounts: [:]) }
    }
    /// When phoned's `timer` is armed to fire, on its wall clock; nil when it is not armed.
    package func phoneTimer(_ timer: NodeTimer) -> Timestamp? {
        phone.armed[timer] == nil ? nil : phone.armedAt[timer]?.at
    }
    /// When watchd's `timer` is armed to fire, on its wall clock; nil when it is not armed.
    package func watchTimer(_ timer: NodeTimer) -> Timestamp? {
        watch.armed[timer] == nil ? nil : watch.armedAt[timer]?.at
    }
    /// The transfers in watchd's outbox, oldest first, each with the key the phone receives it under.
    package var watchQueuedTransfers: [(key: TransferKey, payload: [UInt8])] {
        watch.disk.outbox.pending.map { (TransferKey(queue: watch.queueID, sequence: $0.sequence), $0.payload) }
    }
    /// How many times watchd wrote its complication file.
    package var watchComplicationWrites: Int { watch.store.complicationWrites }
    /// How many times each process has booted (a kill, or an exit the simulator restarts, adds one).
    package var starts: (phone: UInt64, watch: UInt64) { (phone.life, watch.life) }

    /// The invariants the soak checks at its end (the watch holds the phone's push, queues drained,
    /// no session for an ended run), and any broken after a step of the script.
    package func invariants() -> [String] {
        scriptViolations + checker.atQuiescence(phone: phone, watch: watch)
    }
}
