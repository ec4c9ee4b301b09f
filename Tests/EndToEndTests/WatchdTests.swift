import Foundation
import Glibc
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// watchd against a real phoned: optimistic edits and their echo, the durable outbox across a
/// SIGKILL, edit locks, and the workout session ended from authoritative data (S4/S6/S7).
@Suite("watchd end to end")
struct WatchdTests {
    @Test("a watch edit reaches the phone's directory and comes back as the authoritative echo")
    func editRoundTrip() async throws {
        let system = try SyncSystem("edit")
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100:barbell", "Lunge:1x10@20"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchStatus("the launch started the session") {
            $0.session == "running" && $0.sessionRun == runID && $0.launchesReceived == 1
        }

        // The watch's edit lands in the phone's directory, and the next context confirms it.
        _ = try await system.watch("complete", runID, "1", "1", "--reps", "6")
        let phoneCopy = try await system.waitForPhoneRun(runID, "has the watch's set") { $0.logs[0].sets[0].reps == 6 }
        #expect(try system.runOnDisk(phoneCopy) == phoneCopy)
        try await system.waitForWatchStatus("the echo confirmed the edit") { $0.undeliveredEdits == 0 }
        #expect(try await system.watchRun(runID) == phoneCopy)

        // The phone's own edit is authoritative too: it reaches the watch by the next context.
        _ = try await system.phone("complete", runID, "1", "2", "--weight", "102.5")
        let fromPhone = try await system.waitForWatchRun(runID, "has the phone's set") {
            $0.logs[0].sets[1].weight == 102.5
        }
        #expect(fromPhone == (try await system.phoneRun(runID)))

        // Finishing on the watch (S5) ends the session; the metrics reach the phone with the run.
        _ = try await system.watch("skip", runID, "2")
        let ended = try await system.waitForWatchStatus("the session finished") { $0.session == "ended" }
        #expect(ended.sessionOutcome == "finishedAndSaved" && ended.sessionRun == runID)
        let saved = try await system.waitForPhoneRun(runID, "has the session's metrics") { $0.metrics != nil }
        #expect(saved.status == .completed)
        #expect(saved.metrics?.setsCompleted == 2)
        #expect(saved.metrics?.totalVolume == 6 * 100 + 5 * 102.5)
        #expect(saved.logs[1].resolution == .skipped)
        #expect(try system.runOnDisk(saved) == saved)
        try await system.waitForWatchStatus("the echo of the saved run confirmed it") { $0.undeliveredEdits == 0 }
        #expect(try await system.watchRun(runID) == saved)
        #expect(
            !system.ingestLines.contains { $0.run == runID && $0.outcome != "merged" && $0.outcome != "unchanged" })
    }

    @Test("with phoned down, 100 edits queue on disk, survive kill -9 of watchd, and land once, in order")
    func hundredQueuedEdits() async throws {
        let system = try SyncSystem("q100")
        try await system.startBoth()  // links once, so both are activated
        let split = try await system.createSplit("Volume", (1...10).map { "Ex\($0):10x5@\($0)" })
        let runID = try await system.startRun(split)
        try await system.waitForWatchStatus("the session runs with the run seen") {
            $0.session == "running" && $0.sessionRun == runID && $0.workouts == 1
        }
        #expect(try await system.stopPhoned() == 0)
        try await system.waitForWatchStatus("the phone is unreachable") { !$0.reachable && !$0.linked }

        for exercise in 1...10 {
            for set in 1...10 {
                _ = try await system.watch("complete", runID, "\(exercise)", "\(set)", "--reps", "\(set)")
            }
        }
        let queued = try await system.waitForQueue(100)
        #expect(queued.map(\.sequence) == queued.map(\.sequence).sorted())
        #expect(queued.allSatisfy { !$0.sent })
        let onWatch = try #require(try await system.watchRun(runID))
        #expect(onWatch.doneSets == 100 && onWatch.status == .completed)
        // The last edit completed the run (S5): the session saved, and its metrics ride in edit 100.
        let status = try await system.watchStatus()
        #expect(status.session == "ended" && status.sessionOutcome == "finishedAndSaved")
        #expect(onWatch.metrics?.setsCompleted == 100)

        // SIGKILL: the outbox is on disk, so a restarted watchd still holds every edit; the run's
        // newest copy is already in it, so the cold launch queues nothing more.
        #expect(try await system.killWatchd() == SIGKILL)
        try await system.startWatchd()
        let restored = try await system.waitForQueue(100)
        #expect(restored.map(\.sequence) == queued.map(\.sequence))
        let ingestBefore = system.ingestLines.count

        try await system.startPhoned()
        let landed = try await system.waitForPhoneRun(runID, "has all 100 sets") {
            $0.doneSets == 100 && $0.metrics != nil
        }
        try await system.waitForWatchStatus("the outbox drained and the echo confirmed the run") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0 && $0.linked
        }
        #expect(landed.status == .completed)
        #expect(landed.metrics?.setsCompleted == 100)
        #expect(try system.runOnDisk(landed) == landed)
        #expect(try await system.watchRun(runID) == landed)
        // In order: set k of exercise e was completed k-th within e, and the run's sets in flow order.
        let completions = landed.logs.flatMap { $0.sets.compactMap(\.completedAt) }
        #expect(completions == completions.sorted() && Set(completions).count == 100)
        #expect(landed.logs.allSatisfy { log in log.sets.enumerated().allSatisfy { $0.element.reps == $0.offset + 1 } })

        // Once and in order: 100 accepted ingests with strictly rising updatedAt; nothing stale.
        let ingested = system.ingestLines.dropFirst(ingestBefore).filter { $0.run == runID }
        let accepted = ingested.filter { $0.outcome == "merged" }
        #expect(accepted.count == 100, "\(ingested.map(\.outcome))")
        #expect(accepted.allSatisfy { $0.via == "userInfo" })
        let stamps = accepted.compactMap { Stamp(text: $0.version) }
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "accepted out of order: \(stamps)")
        #expect(stamps.last == landed.version)
        #expect(ingested.filter { $0.outcome == "refused" || $0.outcome.hasPrefix("vetoed") }.isEmpty)
        // Beyond the 100, at most one echo the phone already has: a push made in the middle of the
        // drain leaves the newest edit uncovered, and the watch sends an uncovered edit again once per
        // version, for the case where nothing else would (WatchEngine.resendUncovered).
        let echoes = ingested.filter { $0.outcome != "merged" }
        #expect(echoes.count <= 1 && echoes.allSatisfy { $0.outcome == "unchanged" }, "\(ingested.map(\.outcome))")
        // Every intermediate document was the one accepted: edit k stamped set k's completion (the
        // last one then got the session's metrics on top, stamped later).
        #expect(
            stamps.map(\.description) == Self.expectedStamps(landed),
            "each of the 100 updates accepted once, in edit order")
        let phone = try await system.phoneStatus()
        #expect(phone.ingested("merged") == 100, "\(phone.ingest)")
    }

    @Test("phoned killed -9 mid-delivery of queued edits: every edit lands, none lost, none applied out of order")
    func phonedKilledMidDelivery() async throws {
        let system = try SyncSystem("mid")
        try await system.startBoth()
        let split = try await system.createSplit("Volume", (1...6).map { "Ex\($0):10x5@\($0)" })
        let runID = try await system.startRun(split)
        try await system.waitForWatchRun(runID)
        try await system.stopPhoned()
        try await system.waitForWatchStatus("the phone is unreachable") { !$0.linked }
        for exercise in 1...6 {
            for set in 1...10 { _ = try await system.watch("complete", runID, "\(exercise)", "\(set)") }
        }
        try await system.waitForQueue(60)

        try await system.startPhoned()
        try await system.eventually("the delivery is under way") { system.ingestLines.count >= 8 }
        #expect(try await system.killPhoned() == SIGKILL)
        try await system.startPhoned()
        let landed = try await system.waitForPhoneRun(runID, "has all 60 sets") {
            $0.doneSets == 60 && $0.metrics != nil
        }
        try await system.waitForWatchStatus("the outbox drained and the echo confirmed the run") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0
        }
        #expect(try system.runOnDisk(landed) == landed)
        #expect(try await system.watchRun(runID) == landed)
        #expect(system.documentFiles().allSatisfy { !$0.contains(".tmp-") })

        // A transfer applied but not yet marked when phoned died comes again: the merge finds it
        // unchanged (a twin, or behind a newer copy), never a second write. The lines of the batch
        // the kill cut may be missing altogether: they are logged once its run's write has landed,
        // and the transfer marks, written next, can land before the loop logs them; then nothing
        // comes again. That all 60 landed is the run's, above; what the lines show is the order.
        let ingested = system.ingestLines.filter { $0.run == runID }
        #expect(ingested.allSatisfy { ["merged", "unchanged"].contains($0.outcome) }, "\(ingested)")
        let accepted = ingested.filter { $0.outcome == "merged" }.map(\.version)
        #expect(Set(accepted).count == accepted.count, "no update accepted twice: \(ingested)")
        let order = Self.expectedStamps(landed)
        let positions = accepted.compactMap { order.firstIndex(of: $0) }
        #expect(positions.count == accepted.count, "every accepted update is one of the edits: \(ingested)")
        #expect(positions == positions.sorted(), "updates accepted in edit order: \(ingested)")
    }

    /// The `updatedAt` of each of a run's watch updates when every set was completed on the watch,
    /// one per edit in flow order, the last one carrying the session's metrics: every set's
    /// completion stamp but the last, then the run's final `updatedAt`.
    static func expectedStamps(_ run: WorkoutDocument) -> [String] {
        let completions = run.logs.flatMap { $0.sets.filter(\.isDone).map(\.stamp) }
        return completions.dropLast().map(\.description) + [run.version.description]
    }

    @Test("an edit to a run locked on the phone is refused with exit code 1 and changes nothing")
    func lockedRunRefusesEdits() async throws {
        let system = try SyncSystem("lock")
        try await system.startBoth()
        let split = try await system.createSplit("Arms", ["Curl:3x10@12"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchRun(runID)

        _ = try await system.phone("lock", "workout", runID)
        try await system.waitForWatchStatus("the lock reached the watch") { $0.editingWorkoutID == runID }
        let before = try #require(try await system.watchRun(runID))
        let refused = try await system.watchctl("complete", runID, "1", "1")
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.standardError.contains("being edited on the phone"), "\(refused)")
        #expect(try await system.watchRun(runID) == before)
        let afterRefusal = try await system.watchStatus()
        #expect(afterRefusal.outboxDepth == 0 && afterRefusal.undeliveredEdits == 0)
        #expect(try await system.phoneRun(runID).doneSets == 0)
        let listed = try await system.watch("workouts")
        #expect(listed.contains("editing on phone"), "\(listed)")

        // A split lock parks the split's runs the same way.
        _ = try await system.phone("unlock", "workout")
        _ = try await system.phone("lock", "split", split)
        try await system.waitForWatchStatus("the split lock reached the watch") {
            $0.editingWorkoutID == nil && $0.editingSplitID == split
        }
        let refusedBySplit = try await system.watchctl("finish", runID)
        #expect(refusedBySplit.exitCode == 1, "\(refusedBySplit)")

        // Unlocked, the same edit goes through and reaches the phone.
        _ = try await system.phone("unlock", "split")
        try await system.waitForWatchStatus("the unlock reached the watch") { $0.editingSplitID == nil }
        _ = try await system.watch("complete", runID, "1", "1")
        try await system.waitForPhoneRun(runID, "has the edit made after the unlock") { $0.doneSets == 1 }
    }
}

/// The phone ends the run (S4: completes its last set; S6: Save Workout early; S7: discards it) while
/// the watch is up, wrist-down, or down and restarted afterwards. The session ends every time:
/// finish-and-save with the metrics arriving on the phone for S4 and S6, discard for S7.
@Suite("watch session ended by the phone (S4/S6/S7)")
struct SessionEndTests {
    enum WatchCondition: String, CaseIterable, CustomTestStringConvertible {
        case up
        case wristDown
        case downAndRestarted
        var testDescription: String { rawValue }
    }

    enum PhoneEnding: String, CaseIterable {
        case s4CompleteLastSet
        case s6SaveEarly
        case s7Discard
    }

    @Test("the session ends whatever the watch's state", arguments: WatchCondition.allCases)
    func sessionEnds(condition: WatchCondition) async throws {
        let system = try SyncSystem("s\(condition.rawValue.prefix(4))")
        try await system.startBoth()
        let split = try await system.createSplit("Full", ["Press:1x5@10", "Pull:1x3@20"])
        for ending in PhoneEnding.allCases {
            try await run(ending, condition, system, split)
        }
    }

    private func run(_ ending: PhoneEnding, _ condition: WatchCondition, _ system: SyncSystem, _ split: String)
        async throws
    {
        let runID = try await system.startRun(split)
        try await system.waitForWatchStatus("\(ending): the launch started the session, the run seen") {
            $0.session == "running" && $0.sessionRun == runID && $0.activeRuns == 1
        }
        _ = try await system.watch("complete", runID, "1", "1")  // progress made on the watch
        try await system.waitForPhoneRun(runID, "has the watch's set") { $0.doneSets == 1 }

        switch condition {
        case .up:
            break
        case .wristDown:
            _ = try await system.watch("wrist", "down")
            try await system.waitForPhoneStatus("the watch app is in the background") {
                $0.linked && !$0.watchAppForeground && !$0.reachable
            }
        case .downAndRestarted:
            try await system.killWatchd()
            try await system.waitForPhoneStatus("the watch is gone") { !$0.linked }
        }

        switch ending {
        case .s4CompleteLastSet:
            #expect(try await system.phone("complete", runID, "2", "1") == "ok")
            #expect(try await system.phoneRun(runID).status == .completed)
        case .s6SaveEarly:
            #expect(try await system.phone("end", runID) == "ok")
            #expect(try await system.phoneRun(runID).status == .completed)
        case .s7Discard:
            #expect(try await system.phone("discard", runID) == "ok")
        }

        if condition == .downAndRestarted { try await system.startWatchd() }
        let ended = try await system.waitForWatchStatus("\(ending) ended the session (\(condition))") {
            $0.session == "ended" && $0.sessionRun == runID
        }
        switch ending {
        case .s4CompleteLastSet, .s6SaveEarly:
            #expect(ended.sessionOutcome == "finishedAndSaved", "\(ending) \(condition)")
            let saved = try await system.waitForPhoneRun(runID, "has the session's metrics") { $0.metrics != nil }
            let sets = ending == .s4CompleteLastSet ? 2 : 1
            #expect(saved.metrics?.setsCompleted == sets, "\(ending) \(condition)")
            let volume: Double = ending == .s4CompleteLastSet ? 5 * 10 + 3 * 20 : 5 * 10
            #expect(saved.metrics?.totalVolume == volume, "\(ending) \(condition)")
            #expect(saved.status == .completed)
            #expect(try system.runOnDisk(saved) == saved)
            try await system.waitForWatchRun(runID, "carries the saved metrics") { $0 == saved }
        case .s7Discard:
            #expect(ended.sessionOutcome == "discarded", "\(ending) \(condition)")
            #expect(try await system.watchRun(runID) == nil)
            #expect(system.filesNamed(runID) == ["Stubs/\(runID).json"])
            let accepted = system.ingestLines.filter { $0.run == runID && $0.outcome == "merged" }
            #expect(accepted.count == 1, "only the watch's set before the discard: \(accepted)")
        }
        // Ended once: the session stays ended, nothing more is saved.
        try await system.waitForWatchStatus("the watch is quiet again") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0
        }
        let metricsSaves =
            system.watchdLog.components(separatedBy: "session: run \(runID) finished and saved").count - 1
        #expect(metricsSaves == (ending == .s7Discard ? 0 : 1), "\(ending) \(condition): saved \(metricsSaves) times")

        if condition == .wristDown {
            _ = try await system.watch("wrist", "up")
            try await system.waitForPhoneStatus("the watch app is in the foreground") { $0.watchAppForeground }
        }
    }
}
