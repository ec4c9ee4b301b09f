import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing

/// What watchd repairs in its link state at start-up, and that it says so in its log.
@Suite("watchd state recovery at start-up")
struct StateRecoveryTests {
    @Test("a second daemon on a state directory in use exits 78 naming the holder; the first serves on, unharmed")
    func stateDirectoryHeld() async throws {
        let system = try SyncSystem("held")
        let (_, run) = try await system.startBothWithRun()
        let first = try #require(system.watchd)
        // The same state directory under another admin socket: only the socket would clash otherwise.
        try system.writeWatchdConfig(["adminSocket": SyncSystem.json("\(system.watchSocket).second")])
        let second = try system.spawnWatchd()
        #expect(try await second.waitForExit() == 78)
        #expect(
            second.standardError.contains("is held by another process (pid \(first.pid))"), "\(second.standardError)")
        // Nothing of the first was touched: it serves, stays linked and still has the run.
        try await system.waitUntilLinked()
        #expect(try await system.watchRun(run) != nil)

        let phone = try #require(system.phoned)
        try system.writePhonedConfig([
            "adminSocket": SyncSystem.json("\(system.phoneSocket).second"), "listen": SyncSystem.json("127.0.0.1:0"),
        ])
        let secondPhone = try system.spawnPhoned()
        #expect(try await secondPhone.waitForExit() == 78)
        #expect(secondPhone.standardError.contains("pid \(phone.pid)"), "\(secondPhone.standardError)")
        try await system.waitUntilLinked()
    }

    @Test("a damaged received context is set aside and logged; watchd starts and converges on a fresh push")
    func damagedReceivedContext() async throws {
        let system = try SyncSystem("rxctx")
        let (_, run) = try await system.startBothWithRun()
        try await system.stopWatchd()
        let path = "\(system.watchStateDirectory)/link/received-context"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        try await system.startWatchd()
        #expect(system.watchdLog.contains("set aside a damaged received context"), "\(system.transcript)")
        #expect(FileManager.default.fileExists(atPath: "\(path).damaged"))
        // The cache kept what was applied, and the watch asks for (and applies) a fresh push.
        #expect(try await system.watchRun(run) != nil)
        try await system.waitForWatchStatus("a fresh push is applied") { $0.linked && $0.contextGenerationApplied > 0 }
        #expect(system.phonedLog.contains("watch requestSync"))
    }

    @Test("a torn last outbox record is cut at start-up with a log line saying what was dropped")
    func tornOutboxTailLogged() async throws {
        let system = try SyncSystem("torn")
        let (_, run) = try await system.startBothWithRun()
        try await system.stopPhoned()
        try await system.waitForWatchStatus("the phone is away") { !$0.linked }
        _ = try await system.watch("complete", run, "1", "1")
        let queued = try await system.waitForQueue(1)[0].sequence
        try await system.stopWatchd()
        // A crash mid-append leaves part of a header right after the last record, over the zeros
        // the log writes ahead of its records.
        let outbox = "\(system.watchStateDirectory)/link/outbox"
        let segment = try #require(
            try FileManager.default.contentsOfDirectory(atPath: outbox).filter { $0.hasPrefix("segment-") }.max())
        let path = "\(outbox)/\(segment)"
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let first = try #require(UInt64(segment.dropFirst("segment-".count).prefix(20)))
        let recordsEnd = try TransferSegmentScan(bytes, firstSequence: first, isLast: true).validBytes
        #expect(bytes[recordsEnd...].allSatisfy { $0 == 0 } && bytes.count > recordsEnd, "zeros written ahead")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(recordsEnd))
        try handle.write(contentsOf: Data([0, 0, 0, 9, 0, 0, 7]))
        try handle.close()

        try await system.startWatchd()
        #expect(system.watchdLog.contains("cut a damaged last record"), "\(system.transcript)")
        #expect(system.watchdLog.contains("7 bytes dropped"), "\(system.transcript)")
        #expect(try await system.queue().contains { $0.sequence == queued }, "the whole record before the tear is kept")
    }
}
