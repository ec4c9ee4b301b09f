import Foundation
import TestSupport
import Testing
import WorkoutModel

/// A disk whose fsyncs are held, then take 2 s each (`WATCHSYNC_TEST_SLOW_FSYNC_FILE`,
/// docs/OPERATIONS.md): the writes run off the event loop, so status and heartbeats are answered
/// while they land.
@Suite("A slow disk")
struct SlowDiskTests {
    @Test(
        "with the phone's fsyncs held, then 2 s each, status is answered mid-edit, the link never drops and the edit lands"
    )
    func slowFsync() async throws {
        let system = try SyncSystem("slow-disk")
        let slowFile = system.directory.appending("slow-fsync-ms")
        try await system.startPhoned(environment: ["WATCHSYNC_TEST_SLOW_FSYNC_FILE": slowFile])
        try await system.startWatchd()
        try await system.waitUntilLinked()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        // Every fsync held until the file goes: the edit's document write cannot finish before the
        // test lets it, however slowly a loaded machine runs the status requests meanwhile. The
        // watch's heartbeats (every 0.5 s, 2 s of silence is a drop) go on all along.
        try Data("600000".utf8).write(to: URL(fileURLWithPath: slowFile))
        let finished = Recorder<String>()
        let edit = Task {
            let result = try await system.phonectl("complete", run, "1", "1")
            finished.record("exit \(result.exitCode): \(result.standardError)")
            return result
        }
        try await Task.sleep(for: .milliseconds(500))
        let status = try await system.phonectl("status", "--json")
        #expect(status.exitCode == 0)
        #expect(finished.values.isEmpty, "the edit finished with its fsync held")
        // Past the watch's 2 s silence limit with the write still held.
        try await Task.sleep(for: .seconds(3))
        let status2 = try await system.phonectl("status", "--json").succeeded()
        #expect(status2.standardOutput.contains("\"linked\":true"))
        #expect(finished.values.isEmpty, "the edit finished with its fsync held")

        // Slow, then released: each fsync of the rest of the edit and its push takes 2 s.
        try Data("2000".utf8).write(to: URL(fileURLWithPath: slowFile))
        let edited = try await edit.value
        #expect(edited.exitCode == 0, "\(edited)")
        try await system.waitForWatchRun(run, "has set 1.1") { $0.logs[0].sets[0].isDone }
        try FileManager.default.removeItem(atPath: slowFile)
        try await system.expectLinkNeverDropped()
    }
}
