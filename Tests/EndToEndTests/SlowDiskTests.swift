import AdminClient
import AdminCommands
import Foundation
import Synchronization
import TestSupport
import Testing

/// The loop never waits on the disk: phoned's document writes run on an I/O thread, so while one
/// takes 4 s (`WATCHSYNC_TEST_STORE_DELAY_MS`) the admin socket and the link's heartbeats are served.
@Suite("a slow disk does not stall the loop")
struct SlowDiskTests {
    @Test("while a document write takes 4 s, status is answered and the link's heartbeats keep it up")
    func slowWriteStallsNothing() async throws {
        let system = try SyncSystem("slow")
        // Silence is noticed after 1 s, well inside the 4 s write: a loop that waited on the write
        // would lose the link.
        let beats: [String: String?] = ["heartbeatIntervalMilliseconds": "100", "missedHeartbeats": "10"]
        try system.writePhonedConfig(beats)
        try system.writeWatchdConfig(beats)
        try await system.startPhoned(environment: ["WATCHSYNC_TEST_STORE_DELAY_MS": "4000"])
        try await system.startWatchd()
        try await system.waitUntilLinked()

        let created = Mutex(false)
        let create = Task {
            let result = try await system.phonectl(["split", "create", "--name", "Slow", "-e", "Row:3x5@40"])
            created.withLock { $0 = true }
            return result
        }
        // The split's reply waits for its file; status and the link do not. A status that shows the
        // split before its creation returned was answered while the file was being written (a loop
        // blocked on the write answers at most one such, in a race with the reply).
        // Asked in process, not through phonectl: spawning a CLI can take seconds on a loaded machine.
        var answeredDuringWrite = 0
        while !created.withLock({ $0 }) {
            let reply = try AdminClient.send(path: system.phoneSocket, command: PhoneCommand.status)
            let status = try JSONDecoder().decode(PhoneStatusView.self, from: Data((reply.json ?? "").utf8))
            if status.splits == 1, !created.withLock({ $0 }) {
                answeredDuringWrite += 1
                #expect(status.linked, "the link stays up while the write is slow")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let result = try await create.value
        #expect(result.exitCode == 0, "\(result)")
        #expect(answeredDuringWrite >= 2, "status was answered \(answeredDuringWrite) times during the 4 s write")
        #expect(try await system.watchStatus().linked)
        #expect(!system.phonedLog.contains("watch unlinked"), "phoned lost the link")
        #expect(!system.watchdLog.contains("phone unlinked"), "watchd lost the link")
    }
}
