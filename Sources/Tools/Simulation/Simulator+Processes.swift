import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// Starting each process from what its disk kept, and carrying out its node's store actions on
/// the simulated disk.
extension Simulator {

    func bootPhone() {
        world.record(.phone, "boot")
        // An older copy another device put back that the last life never saw is all the file holds:
        // the phone's newer copy died with it (docs/SIMULATION.md).
        for id in phone.store.olderCopies { checker.fileReplacedUnseen(id) }
        phone.store.olderCopies = []
        // Replies to an earlier life's requests never come.
        pendingComplications = [:]
        phone.openDisk()
        var engine = SyncEngine(
            settings: phone.store.settings, policy: policy, epoch: phone.store.epoch,
            stateEpoch: phone.store.stateEpoch)
        engine.clock = HybridLogicalClock(origin: .phone, highWater: phone.disk.clock)
        // Messages numbered per boot, as the daemons number them per start (`MessageLedger`).
        let node = PhoneNode(
            engine: engine, live: LiveDriver(now: phone.wallNow, persistedVersion: phone.disk.liveVersion),
            complicationsPerDay: options.complicationsPerDay, complicationBudget: phone.store.complicationBudget,
            life: Int(phone.life + 1))
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

    /// `skippedCacheFiles`: what the cache scan at start-up skipped (a script's damaged files).
    func bootWatch(skippedCacheFiles: [String] = []) {
        world.record(.watch, "boot")
        watch.openDisk()
        let files = watch.store
        let engine = WatchEngine(
            cache: WatchCache(
                restoringWorkouts: files.runs.keys.sorted().compactMap { files.runs[$0] },
                splits: files.splits.keys.sorted().compactMap { files.splits[$0] }),
            session: files.session,
            queued: watch.disk.outbox.pending.compactMap {
                try? DocumentCoder.decode(WatchToPhoneMessage.self, from: $0.payload)
            },
            clockHighWater: watch.disk.clock, phoneEpochRecord: files.epoch)
        let node = WatchNode(
            engine: engine, live: LiveDriver(now: watch.wallNow, persistedVersion: watch.disk.liveVersion),
            complication: files.complication, life: Int(watch.life + 1))
        watch.boot(node, configuration: LinkConfiguration(role: .watch)) { host in
            let received = host.disk.receivedContext
            host.post(
                .started(
                    lastContext: received?.payload, sender: received.map { "\($0.sender)" },
                    skippedCacheFiles: skippedCacheFiles)
            )
        }
    }

}

/// A simulated process's own files, as its host's store port.
protocol SimStore {
    associatedtype Node: ShelledNode
    /// Carries out one of the node's store actions (it may feed events back with `post`).
    static func perform(_ host: SimHost<Node, Self>, _ action: Node.Action)
    /// Reads what the node asked for.
    static func read(_ host: SimHost<Node, Self>, _ needs: NeedsReads) -> Reads
}

extension PhoneFiles: SimStore {
    typealias Node = PhoneNode

    static func read(_ host: SimHost<PhoneNode, PhoneFiles>, _ needs: NeedsReads) -> Reads {
        var reads = Reads()
        for id in needs.documents.keys {
            reads.documents[id] = host.store.runs[id].map { .success($0) } ?? .failure(ReadFailure("no such file"))
        }
        return reads
    }

    static func perform(_ host: SimHost<PhoneNode, PhoneFiles>, _ action: PhoneNode.Action) {
        switch action {
        case .store(.writeSplit(let split)): host.store.splits[split.id] = split
        case .store(.removeSplitFile(let id)): host.store.splits[id] = nil
        case .store(.writeWorkout(let run)):
            host.store.olderCopies.remove(run.id)
            if let old = host.store.runs[run.id], old != run { host.store.previousRuns[run.id] = old }
            host.store.runs[run.id] = run
            host.world.schedule(after: host.world.milliseconds(0...2_000), .echo(run, life: host.life))
        case .store(.removeWorkoutFile(let id, _)):
            host.store.olderCopies.remove(id)
            host.store.runs[id] = nil
            host.store.previousRuns[id] = nil
        // The run's file made visible: the store above is the durable state, which `writeWorkout` set.
        case .store(.publishWorkout): break
        case .store(.writeTombstone(let stub)): host.store.tombstones[stub.id] = stub
        case .store(.persistSettings(let settings)): host.store.settings = settings
        case .store(.persistEpoch(let epoch)):
            #if SIMULATION_MUTATION_STATE_EPOCH
                // (`scripts/simulate --mutations`: the shell keeps the epoch in the state directory, as
                // phoned did before: a reinstall with every document intact starts a new epoch.)
                host.store.stateEpoch = epoch
            #else
                host.store.epoch = epoch
                host.store.stateEpoch = epoch
            #endif
        case .store(.persistComplicationBudget(let budget)): host.store.complicationBudget = budget
        case .store(.writeSamples), .store(.removeSamples), .store(.moveSamples):
            // No exports in the workload yet (docs/SIMULATION.md).
            break
        case .loadRuns(let wanted):
            var reads = Reads()
            for id in wanted.keys {
                reads.documents[id] = host.store.runs[id].map { .success($0) } ?? .failure(ReadFailure("no such file"))
            }
            host.post(.runsLoaded(reads))
        case .rescan:
            // As phoned's rescan: every document offered again, in the gather's order, then the end.
            let files = host.store
            for id in files.tombstones.keys.sorted() {
                host.post(.externalChange(.documentChanged(.tombstone(files.tombstones[id]!))))
            }
            for id in files.splits.keys.sorted() {
                host.post(.externalChange(.documentChanged(.split(files.splits[id]!))))
            }
            for id in files.runs.keys.sorted() {
                host.post(.externalChange(.documentChanged(.workout(files.runs[id]!))))
            }
            host.post(.rescanFinished(.success([])))
        case .node:
            break
        }
    }

}

extension WatchFiles: SimStore {
    typealias Node = WatchNode

    static func read(_ host: SimHost<WatchNode, WatchFiles>, _ needs: NeedsReads) -> Reads {
        Reads(
            outstandingTransfers: host.disk.outbox.pending.map {
                OutstandingTransfer(sequence: $0.sequence, bytes: $0.payload.count, ageSeconds: 0, sent: false)
            })
    }

    static func perform(_ host: SimHost<WatchNode, WatchFiles>, _ action: WatchNode.Action) {
        switch action {
        case .store(.persistWorkout(let run)): host.store.runs[run.id] = run
        // The run's plain file: the store above is the durable state, which `persistWorkout` set.
        case .store(.publishWorkout): break
        case .store(.deleteWorkout(let id)): host.store.runs[id] = nil
        case .store(.persistSplit(let split)): host.store.splits[split.id] = split
        case .store(.deleteSplit(let id)): host.store.splits[id] = nil
        case .store(.persistPhoneEpoch(let record)): host.store.epoch = record
        case .store(.persistSession(let record)): host.store.session = record
        case .store(.persistComplication(let complication)):
            host.store.complication = complication
            host.store.complicationWrites += 1
        case .node: break
        }
    }
}
