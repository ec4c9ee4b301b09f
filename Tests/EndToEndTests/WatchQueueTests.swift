import Foundation
import Glibc
import TestSupport
import Testing
import WorkoutModel

/// watchd's outbox and its session verbs against a real phoned: undelivered edits forwarded once
/// and only once, cancels that give way to the phone's copy, refusals that say so.
@Suite("watchd queue and session verbs")
struct WatchQueueTests {
    @Test("watchctl session start refusals exit 1 with the reason; starting the running session again is a no-op")
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
        let busy = try await system.watchctl("session", "start", third)
        #expect(busy.exitCode == 1 && busy.standardError.contains("already running for run \(second)"), "\(busy)")
        let status = try await system.watchStatus()
        #expect(status.session == "running" && status.sessionRun == second)
    }
}
