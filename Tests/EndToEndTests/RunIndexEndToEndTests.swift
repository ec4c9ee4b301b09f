import Foundation
import TestSupport
import Testing
import WorkoutModel

/// phoned's run index (`<state>/run-index`, docs/OPERATIONS.md) across real restarts: a damaged one
/// is logged and rebuilt, an unchanged folder is reused, and a run edited while phoned was down is
/// seen as the documents say.
@Suite("phoned run index end to end")
struct RunIndexEndToEndTests {
    @Test("a damaged index is logged and rebuilt; later starts reuse it and still see an edit made while down")
    func damagedIndexIsRebuiltAndReused() async throws {
        let reusedOne = "1 month folders reused from the run index, 0 decoded"
        let decodedOne = "0 month folders reused from the run index, 1 decoded"
        let system = try SyncSystem("runindex")
        try await system.startPhoned()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let runID = try await system.startRun(split)
        // A month folder is recorded only once it has been still for 2 s (a rewrite within the file
        // clock's tick could otherwise hide): this waits for that, not for phoned.
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(try await system.stopPhoned() == 0)
        // The next start records the run's month folder.
        try await system.startPhoned()
        #expect(try await system.stopPhoned() == 0)
        let index = "\(system.phoneStateDirectory)/run-index"
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: index)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: index))

        try await system.startPhoned()
        try await waitForLog("unusable, rebuilt from the documents", times: 1, in: system)
        // The rebuilt index is written after the start and taken back in place of what was decoded.
        try await waitForLog("written and taken back (runs recorded: 1)", times: 1, in: system)
        #expect(system.phonedLog.contains("unusable, rebuilt from the documents"), "\(system.phonedLog)")
        #expect(system.phonedLog.contains("checksum mismatch"))
        #expect(try await system.phoneStatus().runsInHistory == 1)
        let run = try await system.phoneRun(runID)
        #expect(try await system.stopPhoned() == 0)

        // Unchanged since the rebuilt index: the folder is taken from it.
        try await system.startPhoned()
        try await waitForLog(reusedOne, times: 1, in: system)
        #expect(occurrences(reusedOne, in: system.phonedLog) == 1, "\(system.phonedLog)")
        #expect(try await system.phoneRun(runID) == run)
        #expect(try await system.stopPhoned() == 0)

        // Another device completes a set while phoned is down: the folder changed, so it is decoded.
        var edited = run
        try edited.completeSet(
            logID: edited.logs[0].id, setIndex: 0, reps: 5, weight: 100,
            at: Stamp(time: run.updatedAt.advanced(by: .seconds(1)), origin: .watch))
        try system.dropDocument(DocumentCoder.encodeForDisk(edited), at: SyncSystem.workoutPath(edited))
        try await system.startPhoned()
        // Once before (the start that first recorded the folder), once now.
        try await waitForLog(decodedOne, times: 2, in: system)
        #expect(occurrences(decodedOne, in: system.phonedLog) == 2, "\(system.phonedLog)")
        #expect(try await system.phoneRun(runID) == edited)
        #expect(try await system.phoneStatus().activeRuns == 1)
    }
}

/// Waits until phoned's stderr, read by another thread than its readiness line on stdout, holds
/// `text` `times` times.
private func waitForLog(_ text: String, times: Int, in system: SyncSystem) async throws {
    try await system.eventually("phoned's log holds \(text.debugDescription) \(times) times") {
        occurrences(text, in: system.phonedLog) >= times
    }
}

private func occurrences(_ text: String, in log: String) -> Int {
    log.components(separatedBy: text).count - 1
}
