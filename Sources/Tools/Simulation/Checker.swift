import LinkProtocol
import Nodes
import WatchEngine
import WorkoutModel

/// One acknowledged set edit (the CLI got "ok").
struct SetEdit: Equatable {
    var run: DocumentID
    var log: DocumentID
    var set: Int
    var done: Bool
    var reps: Int
    var weight: Double
    var side: Side
}

/// The invariants (docs/SIMULATION.md), checked after every step and at quiescence.
struct Checker {
    struct SetKey: Hashable {
        var run: DocumentID
        var log: DocumentID
        var set: Int
    }

    /// Every acknowledged set edit, per set, in the order they were acknowledged.
    private var edits: [SetKey: [SetEdit]] = [:]
    /// Runs the phone tombstoned (discard, clear-history): they must never come back.
    var tombstoned: Set<DocumentID> = []
    /// The last context generation the watch applied, per sender instance (invariant 6).
    private var appliedGenerations: [InstanceID: UInt64] = [:]

    /// `wall`: the editing side's wall clock as it edited.
    mutating func acknowledged(_ edit: SetEdit, wall: Timestamp) {
        guard !supersededRuns.contains(edit.run) else { return }
        let key = SetKey(run: edit.run, log: edit.log, set: edit.set)
        edits[key, default: []].append(edit)
        // A side restored from a backup lost its clock's high-water mark: with its wall clock behind
        // the stamps it gave before, its edit is stamped older than those (the hybrid clock's
        // limit, not a loss), so it may give way to them.
        let atBackup = restoreBaselines[edit.side]?[key] ?? 0
        if let lost = lostClocks[edit.side], wall < lost, edits[key]!.count - 1 > atBackup {
            restoredSets[key] = (atBackup, edits[key]!.count)
        }
    }

    /// Set edits answered with an error (a durable write that failed after the watch's message went
    /// out), each with how many edits its set had acknowledged then: it may or may not have been
    /// applied, so the phone may hold it in place of the acknowledged edits before it.
    private var unsureEdits: [SetKey: [(after: Int, edit: SetEdit)]] = [:]

    mutating func unsure(_ edit: SetEdit) {
        guard !supersededRuns.contains(edit.run) else { return }
        let key = SetKey(run: edit.run, log: edit.log, set: edit.set)
        unsureEdits[key, default: []].append((edits[key]?.count ?? 0, edit))
    }

    /// Runs whose sets this checker cannot follow, left out of the lost-edit check: a live flow
    /// advanced them (completing the set on screen is an edit of a set it does not track), or a
    /// person cancelled a queued transfer of them (that edit gives way to the phone's copy, and which
    /// acknowledged edits it carried is the watch's business).
    private var untrackedRuns: Set<DocumentID> = []

    mutating func liveAdvanced(_ run: DocumentID) { untrackedRuns.insert(run) }

    /// Complications the phone acknowledged (since it was last replaced), and every one that reached
    /// the watch, with the time it was sent (the watch shows the newest).
    private var acknowledgedComplications: Set<String> = []
    private var receivedComplications: [String: Timestamp] = [:]
    /// Complications that reached the watch before its state was restored from a backup, and not
    /// since: the restore took them back.
    private var takenBackComplications: Set<String> = []

    mutating func complicationAcknowledged(_ text: String) { acknowledgedComplications.insert(text) }

    mutating func complicationReceived(_ complication: ComplicationPayload) {
        receivedComplications[complication.text] = complication.order
        takenBackComplications.remove(complication.text)
    }

    mutating func transferCancelled(_ run: DocumentID) { untrackedRuns.insert(run) }

    /// Another device put an older copy of the run in place and the phone died before it saw it: at
    /// its start the file is all there is of the run, so which acknowledged edits survive is that
    /// copy's business.
    mutating func fileReplacedUnseen(_ run: DocumentID) { untrackedRuns.insert(run) }

    /// Sets another device (or a person with an editor) edited in the run's file: their stamps, not
    /// the order of acknowledgements, decide who wins them, so they are left out of the lost-edit
    /// check. The run's other sets stay in it.
    private var externalSets: Set<SetKey> = []

    mutating func externallyEdited(_ run: DocumentID, log: DocumentID, set: Int) {
        externalSets.insert(SetKey(run: run, log: log, set: set))
    }

    /// Runs of a phone state that a wipe or a reset replaced: under the new epoch they must never be
    /// in the phone's document directory again (the watch's edits of them are vetoed, never written).
    private var wipedRuns: Set<DocumentID> = []

    /// Runs from before a phone reset: the new phone never had them, so edits to them (made before
    /// the reset, or on the watch until the new phone's push prunes them) are superseded.
    private var supersededRuns: Set<DocumentID> = []

    /// The phone's state directory was lost (a reinstall) with its documents intact: the complications
    /// its outboxes held are gone with it; everything else acknowledged stands.
    mutating func phoneStateLost() {
        acknowledgedComplications = []
    }

    /// The phone was wiped: what was acknowledged before is superseded by the reset. A wipe of the
    /// document directory alone (`sameInstance`) keeps the phone instance, so a restored one the
    /// watch retired stays retired: the watch never follows it again (a gap of the design: a phone
    /// restored from a replaced instance's backup must be reset, not only wiped, to be followed).
    mutating func phoneReset(runsBefore: Set<DocumentID>, sameInstance: Bool = false) {
        let stillRestored = sameInstance && restoredPhone
        wipedRuns.formUnion(runsBefore)
        supersededRuns.formUnion(runsBefore)
        supersededRuns.formUnion(edits.keys.map(\.run))
        edits = [:]
        unsureEdits = [:]
        restoredSets = [:]
        // The wiped outboxes held them.
        acknowledgedComplications = []
        tombstoned = []
        restoredPhone = stillRestored
    }

    /// Sets whose phone copy may hold any edit from a restore's backup on, until another edit is
    /// acknowledged: how many edits the set had at the backup and then. A restored watch took back
    /// the edits it had not sent; a side whose clock mark a restore took back stamps its edit older
    /// than its own since the backup while its wall clock is behind (`acknowledged`).
    private var restoredSets: [SetKey: (atBackup: Int, atRestore: Int)] = [:]
    /// Per side, the clock high-water mark the last restore of its state took back, and how many
    /// edits each set had at that restore's backup.
    private var lostClocks: [Side: Timestamp] = [:]
    private var restoreBaselines: [Side: [SetKey: Int]] = [:]

    /// A side's state went back to a backup taken when the sets had `editCountsAtBackup` edits: the
    /// watch's edits acknowledged since may be gone, and what it received is the backup's; the
    /// phone's documents stay, so only its clock mark goes back (`acknowledged`).
    mutating func stateRestored(_ side: Side, editCountsAtBackup: [SetKey: Int], lostClock: Timestamp?) {
        if let lostClock { lostClocks[side] = max(lostClocks[side] ?? lostClock, lostClock) }
        // Over several restores the earliest backup counts: each may have taken the clock further back
        // (seed 49120: a backup taken after a first restore held that restore's older mark).
        // A set missing from a backup's counts had no edit then.
        if let earlier = restoreBaselines[side] {
            restoreBaselines[side] = editCountsAtBackup.reduce(into: [:]) {
                $0[$1.key] = min(earlier[$1.key] ?? 0, $1.value)
            }
        } else {
            restoreBaselines[side] = editCountsAtBackup
        }
        guard side == .watch else {
            // The restored outboxes lost the complications queued since the backup that had not
            // reached the watch (one in flight may still arrive).
            acknowledgedComplications.formIntersection(receivedComplications.keys)
            return
        }
        for (key, list) in edits where list.count > editCountsAtBackup[key] ?? 0 {
            restoredSets[key] = (editCountsAtBackup[key] ?? 0, list.count)
        }
        appliedGenerations = [:]
        // Its complication is the backup's: those that reached it before are gone with the restore
        // (their acknowledgements may still be on their way to the phone).
        takenBackComplications.formUnion(receivedComplications.keys)
        receivedComplications = [:]
    }

    /// Phone instances restored from a backup after a newer phone replaced them (invariant 6).
    private var restoredInstances: Set<InstanceID> = []
    /// Whether the phone now is such a restored instance: the watch keeps the newer phone's state,
    /// so the two do not converge.
    private var restoredPhone = false
    /// The phone instance whose state the watch follows (its `phone-epoch.json` sender), and the ones
    /// it followed before: it never goes back to one of those.
    private var followedSender: String?
    private var replacedSenders: Set<String> = []

    /// The phone a reset replaced came back from its backup: what was acknowledged since is gone with
    /// the newer phone's state, and the watch must never follow the restored one.
    mutating func phoneRestored(runsBefore: Set<DocumentID>, instance: InstanceID) {
        phoneReset(runsBefore: runsBefore)
        // The backup brings its own runs back: that is what a restore is.
        wipedRuns = []
        restoredInstances.insert(instance)
        restoredPhone = true
    }

    /// After every step: a tombstoned run is never on the phone's disk again, and the contexts the
    /// watch applies only move forward per sender instance.
    mutating func afterStep(phone: SimHost<PhoneNode, PhoneFiles>, watch: SimHost<WatchNode, WatchFiles>) -> String? {
        // Between a tombstone's write and its file's removal (both queued) the disk holds both.
        for run in tombstoned where phone.store.runs[run] != nil && !phone.hasWritesInFlight {
            return "tombstoned run \(run) is back in the phone's document directory"
        }
        for run in wipedRuns where phone.store.runs[run] != nil {
            return "run \(run) of a wiped phone state is back in the phone's document directory"
        }
        if let sender = watch.store.epoch?.sender, sender != followedSender {
            if replacedSenders.contains(sender) {
                return "the watch follows phone \(sender) again after a newer phone replaced it (a restored backup won)"
            }
            if let followedSender { replacedSenders.insert(followedSender) }
            followedSender = sender
        }
        // A restored instance's generations start again from its backup; the watch's link takes its
        // contexts (another sender than the last), and the watch refuses them (checked above).
        if let received = watch.disk.receivedContext, !restoredInstances.contains(received.sender) {
            if let last = appliedGenerations[received.sender], received.generation < last {
                return
                    "the watch went back from context generation \(last) to \(received.generation) of \(received.sender)"
            }
            appliedGenerations[received.sender] = received.generation
        }
        return nil
    }

    /// Complications: the phone's outboxes drained, every acknowledged one reached the watch, and the
    /// watch shows (and keeps on disk) one no older than any of those.
    private func complications(phone: SimHost<PhoneNode, PhoneFiles>, watch: SimHost<WatchNode, WatchFiles>) -> [String]
    {
        // A restored phone is refused by the watch (see `atQuiescence`): nothing of it arrives.
        if restoredPhone { return [] }
        var found: [String] = []
        for (name, outbox) in [("outbox", phone.disk.outbox), ("complication outbox", phone.disk.complicationOutbox)]
        where !outbox.pending.isEmpty {
            found.append("the phone's \(name) still holds \(outbox.pending.count) transfers")
        }
        let shown = watch.node?.inner.complication
        if shown != watch.store.complication {
            found.append(
                "the watch shows complication \(shown?.text ?? "none"), its disk holds \(watch.store.complication?.text ?? "none")"
            )
        }
        for text in acknowledgedComplications.sorted() where !takenBackComplications.contains(text) {
            guard let order = receivedComplications[text] else {
                found.append("acknowledged complication \(text) never reached the watch")
                continue
            }
            if let shown, shown.order < order {
                found.append("the watch shows complication \(shown.text), older than \(text), which reached it")
            } else if shown == nil {
                found.append("the watch shows no complication, though \(text) reached it")
            }
        }
        return found
    }

    /// At quiescence (every fault healed, both up, queues drained): the watch holds exactly the
    /// phone's push, nothing is left undelivered, no acknowledged edit is lost unless a later one
    /// superseded it, no tombstoned run is anywhere, and no session runs for a run that ended.
    func atQuiescence(phone: SimHost<PhoneNode, PhoneFiles>, watch: SimHost<WatchNode, WatchFiles>) -> [String] {
        var found: [String] = []
        guard let phoneNode = phone.node?.inner, let watchNode = watch.node?.inner else {
            return ["a process is down at quiescence (phone up: \(phone.isUp), watch up: \(watch.isUp))"]
        }
        // Queues drained.
        if !watch.disk.outbox.pending.isEmpty {
            found.append("the watch's outbox still holds \(watch.disk.outbox.pending.count) transfers")
        }
        let undelivered = watchNode.engine.cache.undeliveredEdits
        if !undelivered.isEmpty { found.append("the watch has \(undelivered.count) undelivered edits") }
        found += complications(phone: phone, watch: watch)
        // A restored backup of a replaced phone never wins: the watch keeps the newer phone's state
        // and refuses the restored one's (after every step: it never follows it again), so nothing
        // converges, and the watch's edits, made against the newer phone, are vetoed by the old one.
        if restoredPhone { return [] }
        // A wiped phone that has nothing yet never pushes (a pristine state would wipe the watch):
        // the watch keeps what it has until the phone has state of its own.
        let engine = phoneNode.engine
        if engine.splits.isEmpty, engine.index.count == 0, engine.tombstones.isEmpty, !supersededRuns.isEmpty {
            return found.filter { !$0.contains("undelivered edits") }
        }
        // The watch holds the phone's last push, and the push is the phone's state now.
        guard let slot = phone.disk.contextSlot else {
            return found + ["the phone never pushed"]
        }
        if watch.disk.receivedContext?.generation != slot.generation {
            found.append(
                "the watch applied generation \(watch.disk.receivedContext?.generation ?? 0), the phone's slot holds \(slot.generation)"
            )
        }
        guard let context = try? DocumentCoder.decode(ApplicationContext.self, from: slot.payload) else {
            return found + ["the phone's context slot does not decode"]
        }
        let pushed = Dictionary(uniqueKeysWithValues: context.workouts.map { ($0.id, $0) })
        let cached = watchNode.engine.cache.workouts
        for (id, run) in pushed where cached[id] != run {
            found.append(
                "run \(id): the watch holds \(cached[id].map { "version \($0.version)" } ?? "nothing"), the push version \(run.version)"
            )
        }
        for id in cached.keys where pushed[id] == nil {
            found.append("run \(id) is in the watch's cache but not in the phone's push")
        }
        let current = phoneNode.engine.context(now: phone.wallNow) { phone.store.runs[$0] }
        let now = Set(current.workouts.map(\.id))
        if now != Set(pushed.keys) {
            found.append(
                "the phone's last push is stale: it carries \(pushed.count) runs, its state now \(current.workouts.count)"
                    + " (not pushed: \(now.subtracting(pushed.keys).sorted()); no longer in it: "
                    + "\(Set(pushed.keys).subtracting(now).sorted()))")
        }
        // No tombstoned run anywhere.
        for run in tombstoned.sorted() {
            if phone.store.runs[run] != nil { found.append("tombstoned run \(run) is on the phone") }
            if cached[run] != nil { found.append("tombstoned run \(run) is on the watch") }
        }
        // Acknowledged edits: the last one of each set wins, where only one side edited it (two
        // sides' concurrent edits resolve by their stamps, which this check does not model).
        found += editsMissing(phone: phone, since: nil)
        found += recordedTimesMisordered(phone.store.runs.values)
        // Live mirror (invariant 7): a flow open on one side with nothing staged shows on the other
        // as a cover of the same frame (version, phase, set), unless the other side dismissed it or
        // drives the run itself.
        for (driver, follower, name) in [
            (phoneNode.live.mirror, watchNode.live.mirror, "phone"),
            (watchNode.live.mirror, phoneNode.live.mirror, "watch"),
        ] {
            for (run, flow) in driver.flows.sorted(by: { $0.key < $1.key }) where driver.staging.entries[run] == nil {
                guard follower.flows[run] == nil, !follower.dismissed.contains(run) else { continue }
                // The watch shows only what the phone pushes: a run that left the push (its recent
                // window, the cap) has no cover there.
                if name == "phone", cached[run] == nil { continue }
                guard let cover = follower.covers[run] else {
                    found.append(
                        "live: the \(name) drives run \(run) (version \(flow.basis.version)) but the other side shows nothing"
                    )
                    continue
                }
                if cover.basis.version != flow.basis.version || cover.basis.phase != flow.basis.phase
                    || cover.basis.setIndex != flow.basis.setIndex
                {
                    found.append(
                        "live: the \(name) drives run \(run) at version \(flow.basis.version) \(flow.basis.phase) set "
                            + "\(flow.basis.setIndex + 1); the other side shows version \(cover.basis.version) "
                            + "\(cover.basis.phase) set \(cover.basis.setIndex + 1)")
                }
            }
        }
        // Sessions: none runs for a run the phone completed or tombstoned.
        if case .running(let session) = watchNode.engine.session {
            if tombstoned.contains(session.runID) {
                found.append("the watch's session still runs for discarded run \(session.runID)")
            } else if phone.store.runs[session.runID]?.status == .completed {
                found.append("the watch's session still runs for completed run \(session.runID)")
            }
        }
        return found
    }

    /// Recorded times in order (invariant 10): an end never before the start or the last completion,
    /// a pause never ending before it began, no completion before the start, no negative duration.
    func recordedTimesMisordered(_ runs: some Sequence<WorkoutDocument>) -> [String] {
        var found: [String] = []
        for run in runs.sorted(by: { $0.id < $1.id }) {
            let completions = run.logs.flatMap(\.sets).compactMap(\.completedAt)
            if let early = completions.first(where: { $0 < run.startedAt }) {
                found.append("run \(run.id): a set completed at \(early), before the start \(run.startedAt)")
            }
            if let ended = run.endedAt, ended < max(run.startedAt, completions.max() ?? run.startedAt) {
                found.append("run \(run.id) ended at \(ended), before its start or its last completion")
            }
            if run.pauses.contains(where: { pause in pause.end.map { $0 < pause.start } ?? false }) {
                found.append("run \(run.id) has a pause that ends before it begins")
            }
            if run.activeDuration() < .zero { found.append("run \(run.id) has a negative active duration") }
        }
        return found
    }

    /// How many edits each set has acknowledged so far (`editsMissing(since:)`).
    var editCounts: [SetKey: Int] { edits.mapValues(\.count) }

    /// Sets whose acknowledged edits the phone's documents do not hold. With `since` nil, every set
    /// edited by one side only must hold its last edit. With `since` (`editCounts` when a watch
    /// `wait` was asked), only sets the watch alone edited before then, each holding its last edit
    /// from then or any edit acknowledged since.
    func editsMissing(
        phone: SimHost<PhoneNode, PhoneFiles>, since: [SetKey: Int]?, replaced: Set<DocumentID> = []
    ) -> [String] {
        var found: [String] = []
        for (key, list) in edits.sorted(by: {
            "\($0.key.run)\($0.key.log)\($0.key.set)" < "\($1.key.run)\($1.key.log)\($1.key.set)"
        }) {
            guard !tombstoned.contains(key.run), !untrackedRuns.contains(key.run), !externalSets.contains(key),
                !replaced.contains(key.run),
                Set(list.map(\.side)).count == 1,
                let last = list.last
            else { continue }
            var accepted = [last]
            if let restored = restoredSets[key], restored.atRestore == list.count {
                // Nothing acknowledged since: any edit from the backup on.
                guard restored.atBackup > 0 else { continue }
                accepted = Array(list[(restored.atBackup - 1)...])
            } else if let since {
                guard last.side == .watch, let before = since[key], before > 0, before <= list.count else { continue }
                accepted = Array(list[(before - 1)...])
            }
            // An unsure edit made after the first accepted one may stand in its place.
            let first = list.count - accepted.count + 1
            accepted += (unsureEdits[key] ?? []).filter { $0.after >= first }.map(\.edit)
            guard let run = phone.store.runs[key.run] else {
                found.append("run \(key.run) with an acknowledged edit is gone from the phone, never tombstoned")
                continue
            }
            guard let log = run.logs.first(where: { $0.id == key.log }), key.set < log.sets.count else { continue }
            let record = log.sets[key.set]
            let held = { (edit: SetEdit) in
                record.isDone == edit.done && (!edit.done || (record.reps == edit.reps && record.weight == edit.weight))
            }
            if !accepted.contains(where: held) {
                found.append(
                    "run \(key.run) set \(key.set + 1) of log \(key.log): the \(last.side) acknowledged "
                        + "\(last.done ? "complete \(last.reps)x\(last.weight)" : "undo"), the phone has "
                        + "\(record.isDone ? "\(record.reps ?? 0)x\(record.weight ?? 0)" : "not done")")
            }
        }
        return found
    }
}
