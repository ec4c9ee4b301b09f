import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// The workload: person operations on both sides, sent as the admin CLIs send them.
extension Simulator {

    func phonectl(_ command: PhoneCommand) -> AdminResponse? {
        guard let request = postToPhone(command) else { return nil }
        let reply = phone.replies.removeValue(forKey: request)
        world.record(.phone, "admin \(command) → \(reply?.status.rawValue ?? "none") \(reply?.message ?? "")")
        crashAfterAcknowledging(.phone, reply)
        return reply
    }

    func watchctl(_ command: WatchCommand) -> AdminResponse? {
        guard let request = postToWatch(command) else { return nil }
        let reply = watch.replies.removeValue(forKey: request)
        world.record(.watch, "admin \(command) → \(reply?.status.rawValue ?? "none") \(reply?.message ?? "")")
        crashAfterAcknowledging(.watch, reply)
        return reply
    }

    /// Hands phoned an admin request and lets it settle; its reply, if given, waits in `phone.replies`.
    func postToPhone(_ command: PhoneCommand) -> AdminRequestID? {
        guard phone.isUp, let facts = phoneFacts else { return nil }
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        var bytes: [UInt8] = []
        while bytes.count < 16 { withUnsafeBytes(of: world.random.next()) { bytes += $0 } }
        phone.post(.admin(request, command, freshID: DocumentID(bytes: bytes), facts: facts))
        phone.settle(request)
        return request
    }

    /// Hands watchd an admin request and lets it settle; its reply, if given, waits in `watch.replies`.
    func postToWatch(_ command: WatchCommand) -> AdminRequestID? {
        guard watch.isUp, let facts = watchFacts else { return nil }
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        watch.post(.admin(request, command, facts: facts))
        watch.settle(request)
        return request
    }

    /// One acknowledged request in fifty meets a crash right after its reply, before the writes
    /// still in flight land: what the reply acknowledged must already be on disk.
    private func crashAfterAcknowledging(_ side: Side, _ reply: AdminResponse?) {
        guard options.faults, world.now < options.activity, reply?.status == .ok, world.chance(0.02) else { return }
        world.schedule(after: .zero, .step(.crashNow(side)))
    }

    // MARK: The workload

    func operate() {
        operations += 1
        harvestComplicationReplies()
        harvestDataReplies()
        harvestWaits()
        if world.chance(0.55) { operatePhone() } else { operateWatch() }
    }

    /// `complication push`: answered once the transfer is on disk (a group commit later), so the
    /// reply is collected afterwards (`harvestComplicationReplies`).
    private func pushComplication() {
        complications += 1
        let text = "c\(complications)"
        if let reply = phonectl(.pushComplication(text: text)) {
            if reply.status == .ok { checker.complicationAcknowledged(text) }
        } else {
            pendingComplications[AdminRequestID(lastRequest)] = text
        }
    }

    /// The complication pushes answered since: each acknowledged one must reach the watch.
    func harvestComplicationReplies() {
        for (request, text) in pendingComplications.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let reply = phone.replies.removeValue(forKey: request) else { continue }
            pendingComplications[request] = nil
            if reply.status == .ok { checker.complicationAcknowledged(text) }
        }
    }

    private func operatePhone() {
        guard let node = phone.node else { return }
        // The person quits the phone app now and then and opens it again later (a message from the
        // watch wakes it in the background meanwhile); its verbs are refused while it is not running.
        if !node.inner.app.isRunning {
            _ = phonectl(world.chance(0.3) ? .app(.launch) : .push)
            return
        }
        if world.chance(0.03) {
            _ = phonectl(.app(.terminate))
            return
        }
        let engine = node.inner.engine
        if !engine.splits.isEmpty, world.chance(0.15) {
            operatePhoneRarely(engine)
            return
        }
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
            // The reply names the new run (another may turn active in the same turn: a watch edit
            // reopening an ended one).
            if let reply = phonectl(.start(split: split, endingOthers: world.chance(0.2))), reply.status == .ok,
                let started = reply.text.flatMap({ DocumentID($0) })
            {
                recordedStart(of: started)
            }
            return
        }
        if roll >= 97 {
            pushComplication()
            return
        }
        guard let runID = world.pick(active), let run = engine.run(runID) else { return }
        switch roll {
        case 12..<57:
            setOperation(on: run, side: .phone, undo: world.chance(0.2))
        case 57..<60:
            sendData(from: .phone)
        case 60..<66:
            _ = phonectl(world.chance(0.5) ? .pause(run: runID) : .resume(run: runID))
        case 66..<72:
            let clockBefore = wall(.phone)
            if phonectl(.end(run: runID))?.status == .ok {
                recordedEnd(of: runID, by: .phone, wasCompleted: false, clockBefore: clockBefore)
            }
        case 72..<77:
            if phonectl(.discard(run: runID))?.status == .ok { checker.tombstoned.insert(runID) }
        case 77..<82:
            _ = phonectl(.lockWorkout(id: runID))
        case 82..<90:
            _ = phonectl(.unlockWorkout)
        case 90..<94:
            let clockBefore = wall(.phone)
            if phonectl(.set(.skip(run: runID, exercise: world.pick(1...run.logs.count))))?.status == .ok {
                recordedEnd(of: runID, by: .phone, wasCompleted: run.status == .completed, clockBefore: clockBefore)
            }
        case 94..<96:
            let command = liveCommand(on: run)
            if phonectl(.live(command))?.status == .ok, case .advance = command { checker.liveAdvanced(run.id) }
        default:
            _ = phonectl(.push)
        }
        if let tombstones = phone.node?.inner.engine.tombstones.keys { checker.tombstoned.formUnion(tombstones) }
    }

    private func operateWatch() {
        guard let node = watch.node else { return }
        // The person quits the watch app now and then and opens it again a few operations later (or
        // the phone's launch request does); meanwhile the app's verbs are refused, and what the phone
        // sends waits on the watch (the last heal launches it).
        if !node.inner.isAppRunning {
            if world.chance(0.3) {
                _ = watchctl(.app(.launch))
            } else if world.chance(0.2), let run = world.pick(node.inner.engine.cache.workouts.keys.sorted()) {
                _ = watchctl(.finish(run: run))
            }
            return
        }
        if world.chance(0.05) {
            _ = watchctl(.app(.terminate))
            return
        }
        let cache = node.inner.engine.cache
        let active = cache.workouts.values.filter(\.status.isActive).map(\.id).sorted()
        // One watch operation in ten edits a run that has ended (a set completed late, or undone):
        // such runs leave the push by the window or the cap while the edit may be in flight.
        if world.chance(0.1), let ended = world.pick(cache.workouts.keys.filter { !active.contains($0) }.sorted()),
            let run = cache.workouts[ended]
        {
            let acknowledged = setOperation(on: run, side: .watch, undo: world.chance(0.5))
            if acknowledged, options.faults, world.now < options.activity, world.chance(0.5) { capPassesNow() }
            return
        }
        guard let runID = world.pick(active), let run = cache.workouts[runID] else { return }
        if world.chance(0.05), !run.logs.isEmpty {
            _ = watchctl(.set(.reopen(run: runID, exercise: world.pick(1...run.logs.count))))
            return
        }
        switch world.pick(0...99) {
        case 0..<67:
            setOperation(on: run, side: .watch, undo: world.chance(0.2))
            // Asked right after an edit, a wait has something to wait for.
            if world.chance(0.1) { waitForSync() }
        case 67..<70:
            sendData(from: .watch)
        case 70..<78:
            _ = watchctl(world.chance(0.5) ? .pause(run: runID) : .resume(run: runID))
        case 78..<80:
            changeWatchState()
        case 80..<86:
            let clockBefore = wall(.watch)
            if watchctl(.set(.skip(run: runID, exercise: world.pick(1...run.logs.count))))?.status == .ok {
                recordedEnd(of: runID, by: .watch, wasCompleted: run.status == .completed, clockBefore: clockBefore)
            }
        case 86..<90:
            _ = watchctl(.startSession(run: runID))
        case 90..<95:
            let command = liveCommand(on: run)
            if watchctl(.live(command))?.status == .ok, case .advance = command { checker.liveAdvanced(run.id) }
        case 95..<97:
            waitForSync()
        case 97..<99 where !watch.disk.outbox.pending.isEmpty:
            cancelQueuedTransfer()
        default:
            _ = watchctl(.sync)
        }
    }

    /// As the watch's edit of an ended run leaves, the person starts and ends as many runs on the
    /// phone as its recent cap holds, so the phone's next push leaves the edited run out while the
    /// edit is in flight: the window of the Seams issue's item 6, a round trip wide, which the cap
    /// or the window passing by themselves rarely meet.
    private func capPassesNow() {
        guard let split = world.pick(phone.node?.inner.engine.splits.keys.sorted() ?? []) else { return }
        world.record(.phone, "the recent cap passes")
        for _ in 0..<policy.recentLimit {
            let clockBefore = wall(.phone)
            guard let reply = phonectl(.start(split: split, endingOthers: false)), reply.status == .ok,
                let started = reply.text.flatMap({ DocumentID($0) })
            else { return }
            recordedStart(of: started)
            if phonectl(.end(run: started))?.status == .ok {
                recordedEnd(of: started, by: .phone, wasCompleted: false, clockBefore: clockBefore)
            }
        }
    }

    /// One set edit of an active run on the watch, now.
    func watchEdits() {
        guard let cache = watch.node?.inner.engine.cache,
            let runID = world.pick(cache.workouts.values.filter(\.status.isActive).map(\.id).sorted()),
            let run = cache.workouts[runID]
        else { return }
        setOperation(on: run, side: .watch, undo: false)
    }

    /// The watch is unpaired or paired again, its app removed or installed again, its complication
    /// taken off the face or put back (the last heal restores all three).
    private func changeWatchState() {
        guard let state = watch.link?.status.watchState else { return }
        switch world.pick(0...2) {
        case 0: _ = watchctl(.pair(!state.isPaired))
        case 1: _ = watchctl(.installApp(!state.isWatchAppInstalled))
        default: _ = watchctl(.enableComplication(!state.isComplicationEnabled))
        }
    }

    /// The phone's less frequent operations: splits edited, deleted and locked, an exercise
    /// reopened, settings changed, the history cleared, and documents another device wrote into the
    /// directory.
    private func operatePhoneRarely(_ engine: SyncEngine) {
        let splits = engine.splits.keys.sorted()
        guard let split = world.pick(splits) else { return }
        switch world.pick(0...99) {
        case 0..<15:
            let exercises =
                world.chance(0.5)
                ? nil
                : [
                    ExerciseTemplate(
                        name: "R\(operations)", equipment: "", targetSets: world.pick(1...3), targetReps: 8,
                        targetWeight: 20)
                ]
            _ = phonectl(.editSplit(id: split, name: world.chance(0.5) ? "E\(operations)" : nil, exercises: exercises))
        case 15..<22 where splits.count > 1:
            _ = phonectl(.deleteSplit(id: split))
        case 22..<40:
            let active = engine.index.activeIDs.sorted()
            guard let runID = world.pick(active), let run = engine.run(runID), !run.logs.isEmpty else { return }
            _ = phonectl(.set(.reopen(run: runID, exercise: world.pick(1...run.logs.count))))
        case 40..<50:
            _ = phonectl(
                .setSettings(
                    rest: world.pick(0...180), countdown: world.pick(0...10),
                    unit: world.chance(0.5) ? .kilograms : .pounds))
        case 50..<55:
            _ = phonectl(world.chance(0.5) ? .lockSplit(id: split) : .unlockSplit)
        case 55..<58:
            _ = phonectl(.clearHistory)
        case 58..<75:
            externalSplitEdit(split)
        case 75..<85:
            handEditRun()
        case 85..<92:
            externalOlderCopy()
        default:
            externalRunEdit()
        }
        if let tombstones = phone.node?.inner.engine.tombstones.keys { checker.tombstoned.formUnion(tombstones) }
    }

    /// Another device renames a split in the phone's directory (a newer `updatedAt`), or a person
    /// does by hand (the same `updatedAt`); the watcher reports it.
    private func externalSplitEdit(_ id: DocumentID) {
        guard phone.isUp, var split = phone.store.splits[id] else { return }
        split.name = "X\(operations)"
        let byHand = world.chance(0.3)
        if !byHand { split.updatedAt = max(split.updatedAt, phone.wallNow).advanced(by: .milliseconds(1)) }
        world.record(.phone, "\(byHand ? "hand" : "external") edit of split \(id)")
        phone.store.splits[id] = split
        phone.post(.externalChange(.documentChanged(.split(split))))
    }

    /// Another device completes a set of a run in the phone's directory, stamped by its own hybrid
    /// logical clock (the phone's wall clock give or take a minute, past every stamp in the file it
    /// read); the watcher reports it 0–2 s later. That set is left out of the lost-edit check (which
    /// of two devices' edits wins is their stamps' business); the run's other sets are not.
    private func externalRunEdit() {
        guard phone.isUp, let id = world.pick(phone.store.runs.keys.sorted()), var run = phone.store.runs[id],
            run.status.isActive, let logIndex = world.pick(Array(run.logs.indices)),
            let setIndex = world.pick(Array(run.logs[logIndex].sets.indices))
        else { return }
        var clock = HybridLogicalClock(origin: .phone, highWater: run.version)
        let stamp = clock.stamp(at: phone.wallNow.advanced(by: .seconds(world.pick(-60...60))))
        guard
            (try? run.completeSet(
                logID: run.logs[logIndex].id, setIndex: setIndex, reps: world.pick(1...12), weight: 30, at: stamp))
                != nil
        else { return }
        world.record(.phone, "external edit of run \(id)")
        checker.externallyEdited(id, log: run.logs[logIndex].id, set: setIndex)
        phone.store.runs[id] = run
        world.schedule(after: world.milliseconds(0...2_000), .echo(run, life: phone.life))
    }

    /// A person edits a run's file by hand: a done set's reps change and its stamp stays as it was
    /// (the phone takes such an edit as a new one of its own).
    private func handEditRun() {
        guard phone.isUp, let id = world.pick(phone.store.runs.keys.sorted()), var run = phone.store.runs[id] else {
            return
        }
        let done = run.logs.indices.flatMap { log in
            run.logs[log].sets.indices.filter { run.logs[log].sets[$0].isDone }.map { (log, $0) }
        }
        guard let (log, set) = world.pick(done) else { return }
        run.logs[log].sets[set].reps = (run.logs[log].sets[set].reps ?? 0) % 12 + 1
        world.record(.phone, "hand edit of run \(id)")
        checker.externallyEdited(id, log: run.logs[log].id, set: set)
        phone.store.runs[id] = run
        world.schedule(after: world.milliseconds(0...2_000), .echo(run, life: phone.life))
    }

    /// Another device's sync puts back an older copy of a run (one the phone wrote before its last
    /// write of it), stamps and all: the phone must merge it, keep its newer edits and write them
    /// back, so every acknowledged edit survives (the run stays in the lost-edit check). Only runs in
    /// the phone's working set: of a run the phone only summarises, the file is the only copy, and
    /// another writer's older one is all there is (docs/SIMULATION.md).
    private func externalOlderCopy() {
        guard phone.isUp, let engine = phone.node?.inner.engine else { return }
        let candidates = phone.store.previousRuns.keys.filter { engine.run($0) != nil }.sorted()
        guard let id = world.pick(candidates), let older = phone.store.previousRuns[id] else { return }
        world.record(.phone, "another device puts back an older copy of run \(id) (version \(older.version))")
        phone.store.runs[id] = older
        phone.store.olderCopies.insert(id)
        world.schedule(after: world.milliseconds(0...2_000), .echo(older, life: phone.life))
    }

    /// `watchctl queue cancel`: one of the watch's queued transfers, cancelled before it is delivered.
    /// The run is no longer held to its acknowledged edits from the moment the person asks: the link
    /// answers once it has handled the cancel, which may be after a slow write, or never if watchd
    /// dies first, while the cancel may have taken effect.
    private func cancelQueuedTransfer() {
        guard watch.isUp, watch.link != nil, let queued = world.pick(watch.disk.outbox.pending) else { return }
        if case .workoutUpdate(let run, _) = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: queued.payload) {
            checker.transferCancelled(run.id)
        }
        _ = watchctl(.cancelTransfer(sequence: queued.sequence))
    }

    /// A live-flow verb on `run`: mostly advancing, sometimes opening or closing.
    private func liveCommand(on run: WorkoutDocument) -> LiveCommand {
        switch world.pick(0...9) {
        case 0...2: .open(run: run.id, exercise: run.logs.isEmpty ? nil : world.pick(1...run.logs.count))
        case 3...8: .advance(run: run.id, reps: nil, weight: nil)
        default: .close(run: run.id)
        }
    }

    /// Completes or undoes one set; an acknowledged one is remembered for the final check. Returns
    /// whether it was acknowledged.
    @discardableResult
    private func setOperation(on run: WorkoutDocument, side: Side, undo: Bool) -> Bool {
        guard !run.logs.isEmpty else { return false }
        let exercise = world.pick(1...run.logs.count)
        let log = run.logs[exercise - 1]
        guard !log.sets.isEmpty else { return false }
        let set = world.pick(1...log.sets.count)
        let reps = world.pick(1...12)
        let weight = Double(world.pick(0...20)) * 2.5
        let command: SetCommand =
            undo
            ? .undo(run: run.id, exercise: exercise, set: set)
            : .complete(run: run.id, exercise: exercise, set: set, reps: reps, weight: weight)
        let wasCompleted = run.status == .completed
        let clockBefore = wall(side)
        let reply = side == .phone ? phonectl(.set(command)) : watchctl(.set(command))
        let edit = SetEdit(run: run.id, log: log.id, set: set - 1, done: !undo, reps: reps, weight: weight, side: side)
        switch reply?.status {
        case .ok:
            checker.acknowledged(edit, wall: clockBefore)
            recordedTimesAfter(edit, wasCompleted: wasCompleted, clockBefore: clockBefore)
            return true
        // A failed write after the watch's message went out: the phone may have the edit, as its reply says.
        case .error where reply?.message?.contains(WatchNode.editMayHaveReachedPhone) == true: checker.unsure(edit)
        default: break
        }
        return false
    }
}
