import Glibc
import LinkProtocol
import TestSupport
import Testing

/// The phone sends a context before its slot is written (`ContextGenerations`): killed, it numbers
/// its next push past any slot the kill may have lost; stopped cleanly, it goes on as it was.
@Suite("phoned's context slot across a kill and a clean stop")
struct ContextSlotRestartTests {
    @Test("after kill -9 the next push is numbered 2^20 past the slot on disk; after a clean stop it numbers on")
    func killedThenClean() async throws {
        let system = try SyncSystem("slotkill")
        let (_, runID) = try await system.startBothWithRun()
        _ = try await system.watch("complete", runID, "1", "1")
        let before = try await system.waitForPhoneStatus("the watch applied every push") {
            $0.contextGenerationAcknowledged == $0.contextGenerationSent
        }

        #expect(try await system.killPhoned() == SIGKILL)
        try await system.startPhoned()
        let killed = try await system.waitForPhoneStatus("a push after the kill, applied") {
            $0.contextGenerationSent > before.contextGenerationSent + ContextGenerations.ahead
                && $0.contextGenerationAcknowledged == $0.contextGenerationSent
        }
        try await system.waitForWatchStatus("the watch applied it, nothing undelivered") {
            $0.contextGenerationApplied == killed.contextGenerationSent && $0.undeliveredEdits == 0
        }

        // A clean stop: the slot is the last one made, so the numbering goes on from it.
        #expect(try await system.stopPhoned() == 0)
        try await system.startPhoned()
        _ = try await system.watch("complete", runID, "1", "2")
        let clean = try await system.waitForPhoneStatus("the next edit's push, applied") {
            $0.contextGenerationSent > killed.contextGenerationSent
                && $0.contextGenerationAcknowledged == $0.contextGenerationSent
        }
        #expect(clean.contextGenerationSent < killed.contextGenerationSent + ContextGenerations.ahead)
        try await system.waitForWatchStatus("nothing undelivered") { $0.undeliveredEdits == 0 }
    }
}
