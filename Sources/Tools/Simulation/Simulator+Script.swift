import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// A script instead of the seeded workload: both real nodes and their link engines, handshake,
/// frames and acknowledgements as bytes over the simulated network, each side's files in maps, and
/// simulated time that moves only when the script advances it. The seeds' scenarios are played this
/// way in SimulationTests, below the channel-level `NodePair` of NodesTests.
extension Simulator {
    /// Both processes booted and linked; nothing happens unless the script asks.
    package static func scripted(seed: UInt64 = 1) -> Simulator {
        let simulator = Simulator(seed: seed, options: SimulationOptions(faults: false))
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

    /// Every packet between the two is lost until `heal()`; each side notices by its heartbeats.
    package func partition() { world.network.startBlackhole() }

    package func heal() { world.network.heal() }

    /// phoned is killed (`kill -9`); what it wrote and synced survives.
    package func killPhone() { phone.crash() }

    /// watchd is killed (`kill -9`); what it wrote and synced survives.
    package func killWatch() { watch.crash() }

    /// phoned starts again from what its disk kept.
    package func restartPhone() { bootPhone() }

    /// watchd starts again from what its disk kept.
    package func restartWatch() { bootWatch() }

    package var phoneRuns: [DocumentID: WorkoutDocument] { phone.store.runs }
    package var phoneTombstones: [DocumentID: Tombstone] { phone.store.tombstones }
    package var watchRuns: [DocumentID: WorkoutDocument] { watch.store.runs }
    package var watchSession: SessionState? { watch.node?.inner.engine.session }
    package var watchOutbox: Int { watch.disk.outbox.pending.count }
    package var phoneIngest: [SyncEngine.IngestOutcome: Int] { phone.node?.inner.engine.ingestCounts ?? [:] }

    /// The invariants the soak checks at its end (the watch holds the phone's push, queues drained,
    /// no session for an ended run), and any broken after a step of the script.
    package func invariants() -> [String] {
        scriptViolations + checker.atQuiescence(phone: phone, watch: watch)
    }
}
