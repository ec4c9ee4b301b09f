import AdminCommands
import Foundation
import Glibc
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// watchd's outbox and its session verbs against a real phoned: undelivered edits forwarded once
/// and only once, cancels that give way to the phone's copy, refusals that say so.
@Suite("watchd queue and session verbs")
struct WatchQueueTests {
    @Test(
        "watchctl session start refusals exit 1 with the reason; starting the running session again, or another active run's, is covered by it"
    )
    func sessionStartRefusals() async throws {
        let system = try SyncSystem("sstart")
        try await system.startBoth()
        let split = try await system.createSplit("Arms", ["Curl:1x10@12"])
        let first = try await system.startRun(split)
        try await system.waitForWatchStatus("the launch started the session") {
            $0.session == "running" && $0.sessionRun == first && $0.activeRuns == 1
        }
        _ = try await system.phone("end", first)
        try await system.waitForWatchStatus("the session ended") { $0.session == "ended" }
        _ = try await system.watch("session", "clear")

        let unknown = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        let noRun = try await system.watchctl("session", "start", unknown)
        #expect(noRun.exitCode == 1 && noRun.standardError.contains("no such run on this watch"), "\(noRun)")
        let completed = try await system.watchctl("session", "start", first)
        #expect(completed.exitCode == 1 && completed.standardError.contains("the run is completed"), "\(completed)")

        let second = try await system.startRun(split)
        try await system.waitForWatchStatus("the second run's session runs") {
            $0.session == "running" && $0.sessionRun == second
        }
        _ = try await system.watch("session", "start", second)
        let third = try await system.startRun(split)
        try await system.waitForWatchRun(third)
        // Seams 8: one session covers every active run (seed 001's session machine), so a start for
        // another one is no refusal, and the session ends only when the active list empties.
        _ = try await system.watch("session", "start", third)
        let status = try await system.watchStatus()
        #expect(status.session == "running" && status.sessionRun == second)
        _ = try await system.phone("end", second)
        try await system.waitForWatchStatus("the session goes on for the other active run") {
            $0.session == "running" && $0.sessionRun == third && $0.activeRuns == 1
        }
        _ = try await system.phone("end", third)
        try await system.waitForWatchStatus("the session ended with the active list") {
            $0.session == "ended" && $0.sessionRun == third && $0.activeRuns == 0
        }
    }

    /// Waits until the outbox holds at least `count` transfers and returns them. Appends are
    /// group-committed in order, so once a later edit's transfer is listed every earlier one is too.
    private func queueOnceSettled(_ system: SyncSystem, atLeast count: Int) async throws -> [QueuedTransferView] {
        var found: [QueuedTransferView] = []
        try await system.eventually("watchd's outbox holds at least \(count) transfers") {
            found = try await system.queue()
            return found.count >= count
        }
        return found
    }

    @Test("restarting watchd while the phone is away does not queue the undelivered edits again")
    func restartsDoNotGrowTheOutbox() async throws {
        let (system, runID) = try await SyncSystem.withRunAndPhoneAway("regrow")
        _ = try await system.watch("complete", runID, "1", "1")
        try await system.waitForQueue(1)
        for restart in 1...3 {
            #expect(try await system.stopWatchd() == 0)
            try await system.startWatchd()
            _ = try await system.watch("complete", runID, "1", "\(restart + 1)")
            let queued = try await queueOnceSettled(system, atLeast: restart + 1)
            #expect(queued.count == restart + 1, "restart \(restart): one transfer per edit, none per restart")
        }
        try await system.startPhoned()
        let landed = try await system.waitForPhoneRun(runID, "has all four sets") { $0.doneSets == 4 }
        try await system.waitForWatchStatus("the outbox drained and the echo confirmed") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0 && $0.linked
        }
        #expect(try await system.watchRun(runID) == landed)
        #expect(system.ingestLines.filter { $0.run == runID }.map(\.outcome) == Array(repeating: "merged", count: 4))
    }

    @Test("a cancelled edit gives way to the phone's copy and is never sent, not even after a restart")
    func cancelGivesWay() async throws {
        let (system, runID) = try await SyncSystem.withRunAndPhoneAway("cancel")
        let before = try #require(try await system.watchRun(runID))
        _ = try await system.watch("complete", runID, "1", "1")
        let queued = try await system.waitForQueue(1)

        let cancelled = try await system.watch("queue", "cancel", "\(queued[0].sequence)")
        #expect(cancelled.contains("before it was sent"), "\(cancelled)")
        #expect(try await system.watchRun(runID) == before, "the watch shows the phone's copy again")
        let status = try await system.watchStatus()
        #expect(status.undeliveredEdits == 0 && status.outboxDepth == 0)

        try await system.stopWatchd()
        try await system.startWatchd()
        try await system.startPhoned()
        try await system.waitUntilLinked()
        // The phone's own edit reaches the watch: nothing local holds the run back.
        _ = try await system.phone("complete", runID, "1", "2")
        let fromPhone = try await system.waitForWatchRun(runID, "has the phone's set") { $0.logs[0].sets[1].isDone }
        #expect(!fromPhone.logs[0].sets[0].isDone)
        #expect(try await system.phoneRun(runID) == fromPhone)
        try await system.waitForWatchStatus("nothing left to deliver") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0
        }
        #expect(system.ingestLines.filter { $0.run == runID }.isEmpty, "the cancelled edit never reached the phone")
    }

    @Test("a transfer recovered after a restart can be cancelled, and the result says it had been sent")
    func cancelAfterRestart() async throws {
        let (system, runID) = try await SyncSystem.withRunAndPhoneAway("cancel2")
        _ = try await system.watch("complete", runID, "1", "1")
        try await system.waitForQueue(1)
        try await system.stopWatchd()
        try await system.startWatchd()
        let recovered = try await system.waitForQueue(1)
        #expect(recovered[0].sent, "a recovered transfer may have been delivered before the restart")

        let result = try await system.watchctl("queue", "cancel", "\(recovered[0].sequence)")
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.standardOutput.contains("it had been sent"), "\(result)")
        let status = try await system.watchStatus()
        #expect(status.outboxDepth == 0 && status.undeliveredEdits == 0)
        #expect(try await system.watchRun(runID)?.doneSets == 0)
        let unknown = try await system.watchctl("queue", "cancel", "\(recovered[0].sequence)")
        #expect(unknown.exitCode == 1 && unknown.standardError.contains("no outstanding transfer"), "\(unknown)")

        try await system.startPhoned()
        try await system.waitUntilLinked()
        _ = try await system.phone("complete", runID, "1", "2")
        try await system.waitForWatchRun(runID, "has the phone's set") { $0.doneSets == 1 && $0.logs[0].sets[1].isDone }
        #expect(try await system.phoneRun(runID).doneSets == 1)
    }

    @Test("edits on a watch whose state directory was wiped are forwarded once the link activates")
    func wipedStateForwardsOnActivation() async throws {
        let (system, runID) = try await SyncSystem.withRunAndPhoneAway("wiped")
        _ = try await system.watch("complete", runID, "1", "1")
        try await system.waitForQueue(1)
        try await system.stopWatchd()
        try FileManager.default.removeItem(atPath: system.watchStateDirectory)
        try await system.startWatchd()
        // Never activated: the edit is taken (optimistic) and waits for the link.
        _ = try await system.watch("complete", runID, "1", "2")
        let waiting = try await system.watchStatus()
        #expect(waiting.activation == "notActivated" && waiting.outboxDepth == 0 && waiting.undeliveredEdits == 1)

        try await system.startPhoned()
        let landed = try await system.waitForPhoneRun(runID, "has both of the watch's sets") { $0.doneSets == 2 }
        try await system.waitForWatchStatus("the echo confirmed the edits") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0
        }
        #expect(try await system.watchRun(runID) == landed)
    }

    @Test("watchctl wait: refused while an edit waits for the phone, answered once the phone is back")
    func waitForSync() async throws {
        let (system, run) = try await SyncSystem.withRunAndPhoneAway("wait")
        let idle = try await system.watchctl("wait", "--timeout", "0", "--json")
        #expect(idle.exitCode == 0 && idle.standardOutput.contains("\"synced\":true"), "\(idle)")
        _ = try await system.watch("complete", run, "1", "1")
        let refused = try await system.watchctl("wait", "--timeout", "0.5")
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.standardError.contains("1 edit not yet back from the phone after 0.5 s"), "\(refused)")

        // Asked before phoned is back: answered once phoned's context brings the edit back.
        // The refused wait above logged the line once; this one is held when it appears again.
        let held = "wait: edits not yet back from the phone"
        let before = system.watchdLog.components(separatedBy: held).count
        async let waited = system.watchctl("wait", "--timeout", "20", "--json")
        try await system.eventually("watchd holds the wait") {
            system.watchdLog.components(separatedBy: held).count > before
        }
        try await system.startPhoned()
        let synced = try await waited
        #expect(synced.exitCode == 0, "\(synced)")
        let reply = try JSONDecoder().decode(AdminReply.Synced.self, from: Data(synced.standardOutput.utf8))
        #expect(reply.synced && reply.waitedMilliseconds > 0, "\(synced)")
        #expect(try await system.watchStatus().undeliveredEdits == 0)
        #expect(try await system.phoneRun(run).logs[0].sets[0].isDone)
    }
}

extension SyncSystem {
    /// Both daemons up, a run of five sets on the watch, then phoned stopped.
    static func withRunAndPhoneAway(_ name: String) async throws -> (SyncSystem, String) {
        let system = try SyncSystem(name)
        try await system.startBoth()
        let split = try await system.createSplit("Curls", ["Curl:5x10@12"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchRun(runID)
        try await system.stopPhoned()
        try await system.waitForWatchStatus("the phone is gone") { !$0.linked }
        return (system, runID)
    }
}
