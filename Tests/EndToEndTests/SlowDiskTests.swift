import Foundation
import TestSupport
import Testing
import WorkoutModel

/// A disk whose every fsync takes 2 s (`WATCHSYNC_TEST_SLOW_FSYNC_FILE`, docs/OPERATIONS.md): the
/// writes run off the event loop, so status and heartbeats are answered while they land.
@Suite("A slow disk")
struct SlowDiskTests {
    @Test("with 2 s fsyncs on the phone, status is answered mid-edit, the link never drops and the edit lands")
    func slowFsync() async throws {
        let system = try SyncSystem("slow-disk")
        let slowFile = system.directory.appending("slow-fsync-ms")
        try await system.startPhoned(environment: ["WATCHSYNC_TEST_SLOW_FSYNC_FILE": slowFile])
        try await system.startWatchd()
        try await system.waitUntilLinked()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        try Data("2000".utf8).write(to: URL(fileURLWithPath: slowFile))
        // The edit's document and then its push's context slot: two atomic replaces of two fsyncs
        // each, about 8 s, during which the watch's heartbeats (every 0.5 s, 2 s of silence is a
        // drop) and a status request come in.
        let finished = Recorder<Int32>()
        let edit = Task {
            let result = try await system.phonectl("complete", run, "1", "1")
            finished.record(result.exitCode)
            return result
        }
        try await Task.sleep(for: .milliseconds(500))
        let status = try await system.phonectl("status", "--json")
        #expect(status.exitCode == 0)
        #expect(finished.values.isEmpty, "status waited for the edit's fsyncs")
        let status2 = try await system.phonectl("status", "--json").succeeded()
        #expect(status2.standardOutput.contains("\"linked\":true"))

        #expect(try await edit.value.exitCode == 0)
        try await system.waitForWatchRun(run, "has set 1.1") { $0.logs[0].sets[0].isDone }
        try FileManager.default.removeItem(atPath: slowFile)
        try await system.expectLinkNeverDropped()
    }
}
