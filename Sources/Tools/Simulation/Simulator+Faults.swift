import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// The faults a seed injects: network, disk, processes, clocks, a phone reset, a wiped document
/// directory, a lost state directory and a restored backup (of the phone, or of the watch).
extension Simulator {
    /// One fault drawn from the seed (a backup of the phone may be taken first); a fault that must end
    /// schedules its heal or restart.
    func fault() {
        faults += 1
        // The person backs the phone up now and then (the latest backup is kept), and the watch's
        // state with it (a watch is backed up to its phone).
        if world.chance(0.3) {
            phoneBackup = PhoneBackup(
                instance: phone.instance, queueID: phone.queueID, store: phone.store, disk: phone.disk,
                editCounts: checker.editCounts)
            watchBackup = WatchBackup(
                phone: phone.instance, store: watch.store, disk: watch.disk, editCounts: checker.editCounts)
        }
        switch world.pick(0...13) {
        case 12:
            // A wall clock steps (NTP, a person): up to an hour either way, while running.
            let side: Side = world.chance(0.5) ? .phone : .watch
            let step = Duration.seconds(world.pick(-3_600...3_600))
            world.record(side, "clock steps \(step)")
            if side == .phone { phone.clockOffset += step } else { watch.clockOffset += step }
        case 13 where retiredBackup != nil && world.chance(0.5):
            restorePhoneBackup()
        case 13 where watchBackup.map(isCurrentWatch) == true && world.chance(0.3):
            restoreWatchBackup()
        case 13 where phoneBackup.map(isCurrentPhone) == true && world.chance(0.3):
            restorePhoneState()
        case 13 where world.chance(0.3):
            resetPhone()
        case 13 where world.chance(0.3):
            wipeDocuments()
        case 13 where world.chance(0.3):
            reinstallPhone()
        case 0...2:
            world.network.startBlackhole()
            world.schedule(after: world.milliseconds(300...6_000), .step(.heal))
        case 10:
            world.network.startDropping(towards: world.chance(0.5) ? .phone : .watch)
            world.schedule(after: world.milliseconds(300...6_000), .step(.heal))
        case 9 where world.chance(0.5):
            // The directory watcher lost track (an inotify queue overflow): phoned rescans.
            world.record(.phone, "the directory watcher overflows")
            phone.post(.watcherNoticed("inotify queue overflowed", rescan: true))
        case 11:
            let side: Side = world.chance(0.5) ? .phone : .watch
            world.record(side, "the next durable write will fail")
            if side == .phone { phone.failNextWrite = true } else { watch.failNextWrite = true }
        case 3:
            world.network.reset()
        case 4, 5:
            crash(.phone)
        case 6, 7:
            crash(.watch)
        default:
            _ = watchctl(.wrist(up: world.chance(0.5)))
        }
    }

    /// A push that changes what the watch holds, arriving while watch messages are in flight, meets
    /// a fault at once: the link is cut after a new epoch's push (an edit's message then fails under
    /// the new epoch: the Seams issue's item 3), or the watch crashes after a push that leaves out a
    /// run it has an undelivered edit of (item 6). Those windows are a round trip wide, too narrow
    /// for faults drawn blind. Called before the watch node takes the push: what it held is noted
    /// here and compared once it has (`watchStepTaken`).
    func contextArriving() {
        defer { phoneReplaced = false }
        guard options.faults, world.now < options.activity, let engine = watch.node?.inner.engine,
            !engine.messagesInFlight.isEmpty
        else { return }
        let inFlight = engine.messagesInFlight.values.compactMap {
            if case .workoutUpdate(let run, _) = $0 { run.id } else { nil }
        }
        watchBeforeContext = WatchBeforeContext(
            epoch: engine.phoneEpoch, lastApplied: engine.lastApplied,
            undelivered: Set(engine.cache.undeliveredEdits.keys), updatesInFlight: Set(inFlight))
    }

    /// The watch node has taken a step since `contextArriving` saw a push coming: once the push is
    /// applied (a new report or epoch; the node may take it some steps later), a fault may follow.
    func watchStepTaken() {
        guard let before = watchBeforeContext, let engine = watch.node?.inner.engine,
            engine.lastApplied != before.lastApplied || engine.phoneEpoch != before.epoch
        else { return }
        watchBeforeContext = nil
        guard world.now < options.activity, let context = engine.lastContext else { return }
        let carried = Set(context.workouts.map(\.id))
        let leftOut = before.undelivered.filter { !carried.contains($0) }
        if engine.phoneEpoch != before.epoch, !before.updatesInFlight.isEmpty || world.chance(0.5) {
            world.record(.watch, "a new epoch's push with messages in flight: the link is cut")
            world.schedule(after: world.milliseconds(0...3), .step(.cutLink))
        } else if !leftOut.isEmpty, !leftOut.isDisjoint(with: before.updatesInFlight) || world.chance(0.3) {
            // Once the push's cache writes have landed; the link goes down with the watch, so the
            // message's bytes die with it.
            let delay = world.milliseconds(3...6)
            world.record(.watch, "a push left out a run with an undelivered edit: the watch goes down")
            world.schedule(after: delay, .step(.crashNow(.watch)))
            world.schedule(after: delay, .step(.cutLink))
        }
    }

    /// The watch links to a phone a reset or a wipe replaced: it edits at once, so its message (an
    /// edit of the old phone's run) may be in flight when the new epoch's push arrives.
    func watchLinked() {
        guard phoneReplaced, options.faults, world.now < options.activity else { return }
        world.schedule(after: world.milliseconds(0...3), .step(.watchEdits))
    }

    /// One group commit in ten meets a crash or a power loss before its fdatasync lands, so the torn
    /// last append is exercised: a crash fault alone would rarely land in those milliseconds.
    func commitStarted(_ side: Side, _ milliseconds: Int) {
        guard options.faults, world.now < options.activity, world.chance(0.1) else { return }
        world.schedule(after: world.milliseconds(0...(milliseconds - 1)), .step(.crashDuringCommit(side)))
    }

    /// A process crashes, or (one time in two) its machine loses power, which also loses what it
    /// wrote and did not sync; it restarts 0.1–3 s later.
    func crash(_ side: Side) {
        let powerLoss = world.chance(0.5)
        world.record(side, powerLoss ? "power loss" : "crash")
        if side == .phone { phone.crash(powerLoss: powerLoss) } else { watch.crash(powerLoss: powerLoss) }
        world.schedule(after: world.milliseconds(100...3_000), .step(.restart(side)))
    }

    /// The runs of the phone about to be replaced: its files, the watch's cache, and the last context
    /// the watch's link received, which a watch restarted after a failed cache write applies again
    /// (seed 3019620: it then edited a run of the old phone that no file held).
    private func runsBeforeReplacement() -> Set<DocumentID> {
        var runs = Set(phone.store.runs.keys).union(watch.store.runs.keys)
        for payload in [watch.disk.receivedContext?.payload, phone.disk.contextSlot?.payload].compactMap({ $0 }) {
            if let context = try? DocumentCoder.decode(ApplicationContext.self, from: payload) {
                runs.formUnion(context.workouts.map(\.id))
            }
        }
        return runs
    }

    /// The phone is wiped (seed 002's reset): a new instance with an empty document directory and
    /// state. Everything acknowledged before is superseded; the watch must follow the new phone
    /// wholesale.
    func resetPhone() {
        world.record(.phone, "reset: wiped, new instance")
        phone.crash()
        phoneReplaced = true
        resets += 1
        // Answers given before the wipe are superseded with the rest.
        harvestComplicationReplies()
        checker.phoneReset(runsBefore: runsBeforeReplacement())
        // The wiped phone's latest backup (or its state now, backed up before the wipe) may come back.
        retiredBackup =
            phoneBackup.flatMap { $0.instance == phone.instance ? $0 : nil }
            ?? PhoneBackup(
                instance: phone.instance, queueID: phone.queueID, store: phone.store, disk: phone.disk,
                editCounts: checker.editCounts)
        phoneBackup = nil
        phone.instance = Self.instance(UInt8(10 + resets % 200))
        phone.queueID = Self.instance(UInt8(210 + resets % 40))
        phone.store = PhoneFiles()
        phone.disk = LinkDisk()
        // A new receiver: the wiped phone never saw what the old one acknowledged, and a transfer
        // whose acknowledgement was still in flight is rightly delivered to it (seed 1001896).
        phone.acknowledged = [:]
        world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
    }

    /// The phone's document directory is wiped while its state directory (settings, link state)
    /// survives: a new epoch, whatever the settings say. What was acknowledged before is superseded,
    /// and nothing of the wiped runs may come back (the watch's edits of them are vetoed).
    func wipeDocuments() {
        world.record(.phone, "document directory wiped (settings and link state kept)")
        phone.crash()
        phoneReplaced = true
        harvestComplicationReplies()
        checker.phoneReset(runsBefore: runsBeforeReplacement(), sameInstance: true)
        phone.store = phone.store.stateOnly
        restartReplacedPhone()
    }

    /// The phone's state directory is lost (a reinstall) and every document is still there: a new
    /// instance, a new link state, the same epoch. Nothing acknowledged is superseded: the watch's
    /// queued edits must reach the reinstalled phone and be merged.
    func reinstallPhone() {
        world.record(.phone, "state directory lost (documents kept): reinstalled as a new instance")
        phone.crash()
        resets += 1
        harvestComplicationReplies()
        checker.phoneStateLost()
        phone.instance = Self.instance(UInt8(10 + resets % 200))
        phone.queueID = Self.instance(UInt8(210 + resets % 40))
        phone.store = phone.store.documentsOnly
        phone.disk = LinkDisk()
        phone.acknowledged = [:]
        restartReplacedPhone()
    }

    /// Restarts the phone a reset or a wipe replaced; one time in two the link is cut soon after it
    /// is back, so a watch message sent to it (an edit of the old state, forwarded at activation)
    /// may fail after the new state's push arrived (the Seams issue's item 3).
    private func restartReplacedPhone() {
        let restart = world.milliseconds(100...2_000)
        world.schedule(after: restart, .step(.restart(.phone)))
        if world.chance(0.5) { world.schedule(after: restart + world.milliseconds(50...1_500), .step(.cutLink)) }
    }

    /// The person restores the watch's state (its cache and link state, same queue) from the
    /// phone's latest backup of it: the watch's outbox numbers its next transfers again from where
    /// the backup stood, past ones the phone has applied (`QueueMark`), and its edits acknowledged
    /// since the backup that had not reached the phone are gone with the restore.
    func restoreWatchBackup() {
        guard let backup = watchBackup else { return }
        world.record(.watch, "restored from an older backup")
        watch.crash()
        checker.stateRestored(.watch, editCountsAtBackup: backup.editCounts, lostClock: watch.disk.clock?.time)
        watch.store = backup.store
        watch.disk = backup.disk
        // Its restored marks never applied what it acknowledged after the backup: a transfer whose
        // acknowledgement was still on its way is rightly applied again.
        watch.acknowledged = [:]
        let restart = world.milliseconds(100...2_000)
        world.schedule(after: restart, .step(.restart(.watch)))
        // One time in two the watch is used away from its phone for a while after the restore, so
        // its edits go by the queue under the sequences the backup numbers again.
        if world.chance(0.5) {
            world.network.startBlackhole()
            world.schedule(after: restart + world.milliseconds(1_000...6_000), .step(.heal))
        }
    }

    /// Whether `backup` is of the watch as it is now: paired with this phone, following the same
    /// phone epoch (a watch restored to an epoch it has since left would follow it again until the
    /// next push, which the checker's invariant 6 does not model).
    private func isCurrentWatch(_ backup: WatchBackup) -> Bool {
        backup.phone == phone.instance && backup.store.epoch == watch.store.epoch
    }

    /// Whether `backup` is of the phone as it is now: its instance, with its documents' epoch.
    private func isCurrentPhone(_ backup: PhoneBackup) -> Bool {
        backup.instance == phone.instance && backup.store.epoch == phone.store.epoch
    }

    /// The person restores the phone's state directory (not its documents) from its latest backup:
    /// its link state (context generations, outboxes, transfer marks, clock) and settings go back
    /// while the watch kept going. The watch holds newer context generations of the same phone and
    /// has applied transfers the restored outboxes number again (docs/PROTOCOL.md, "Queue marks").
    func restorePhoneState() {
        guard let backup = phoneBackup else { return }
        world.record(.phone, "state directory restored from an older backup (documents kept)")
        phone.crash()
        // Answers given before the restore: what they acknowledged the restore may take back.
        harvestComplicationReplies()
        checker.stateRestored(.phone, editCountsAtBackup: backup.editCounts, lostClock: phone.disk.clock?.time)
        var store = phone.store.documentsOnly
        store.settings = backup.store.settings
        store.stateEpoch = backup.store.stateEpoch
        store.complicationBudget = backup.store.complicationBudget
        phone.store = store
        phone.disk = backup.disk
        // The restored marks never applied what was acknowledged after the backup: the watch's
        // transfers in flight then are rightly applied again.
        phone.acknowledged = [:]
        world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
    }

    /// The person restores the phone a reset replaced from its older backup: the old instance comes
    /// back with its old documents, epoch and link state. The watch retired that instance when it
    /// followed the new one, so it must never follow it again (invariant 6).
    func restorePhoneBackup() {
        guard let backup = retiredBackup else { return }
        retiredBackup = nil
        world.record(.phone, "restored from an older backup: instance \(backup.instance) again")
        phone.crash()
        harvestComplicationReplies()
        checker.phoneRestored(runsBefore: runsBeforeReplacement(), instance: backup.instance)
        phone.instance = backup.instance
        phone.queueID = backup.queueID
        phone.store = backup.store
        phone.disk = backup.disk
        // The restored state never applied what was acknowledged after its backup.
        phone.acknowledged = [:]
        world.schedule(after: world.milliseconds(100...2_000), .step(.restart(.phone)))
    }
}

/// What the watch held as a push arrived (`Simulator.contextArriving`).
struct WatchBeforeContext {
    var epoch: Timestamp?
    var lastApplied: ContextApplyReport?
    var undelivered: Set<DocumentID>
    /// The runs whose workout update was in flight.
    var updatesInFlight: Set<DocumentID>
}

/// The watch's state at a backup (taken with the phone's): the phone instance it was paired with,
/// its files, and how many edits each set had acknowledged then.
struct WatchBackup {
    var phone: InstanceID
    var store: WatchFiles
    var disk: LinkDisk
    var editCounts: [Checker.SetKey: Int]
}

/// The phone's state at a backup: its instance, its files, and how many edits each set had
/// acknowledged then.
struct PhoneBackup {
    var instance: InstanceID
    var queueID: InstanceID
    var store: PhoneFiles
    var disk: LinkDisk
    var editCounts: [Checker.SetKey: Int]
}
