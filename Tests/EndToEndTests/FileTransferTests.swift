import AdminCommands
import Foundation
import LinkProtocol
import TestSupport
import Testing
import WorkoutModel

/// transferFile between the real daemons: the workout export, a large file across kill -9 of both
/// sides, cancel, and the WCError refusals.
@Suite("Files between the daemons")
struct FileTransferTests {
    private struct Shown: Decodable {
        var id: String
        var samples: SamplesView?
    }

    private struct SamplesView: Decodable {
        var path: String
        var bytes: Int
    }

    private func progress(_ system: SyncSystem) async throws -> [AdminReply.FileProgress] {
        try await system.watchctl("file", "list", "--json").decode()
    }

    /// Both daemons, watchd dialling through a proxy that slices what it sends (2 KiB every `delay`,
    /// about 200 KB/s at 10 ms) so a transfer can be caught half-way, with seconds to spare on a
    /// loaded machine.
    private func throughProxy(
        _ name: String, delay: Duration = .milliseconds(10)
    ) async throws -> (SyncSystem, FaultProxy) {
        let system = try SyncSystem(name)
        try await system.startPhoned()
        let proxy = try await FaultProxy(upstreamPort: system.port)
        try await proxy.setToxics([.slicer(maximumChunkBytes: 2048, delay: delay)], on: [.upstream])
        try system.writeWatchdConfig(["phoneAddress": SyncSystem.json("127.0.0.1:\(proxy.port)")])
        try await system.startWatchd()
        try await system.waitUntilLinked()
        return (system, proxy)
    }

    /// Waits until the watch's one outstanding file is at least `fraction` acknowledged; fails if it
    /// finished first (the kill would then not land mid-transfer).
    private func reach(_ fraction: Double, _ system: SyncSystem) async throws {
        var outstanding = true
        try await system.eventually("\(Int(fraction * 100))% acknowledged") {
            guard let file = try await progress(system).first else {
                // An empty list while watchd reloads its outbox is not the end: only the phone
                // holding the file is.
                let received: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json")
                    .decode()
                outstanding = received.isEmpty
                return !outstanding
            }
            return file.progress >= fraction
        }
        try #require(outstanding, "the file finished before \(Int(fraction * 100))% was seen")
    }

    @Test("watchctl export: the samples land next to the run, byte for byte; show reports them; discard removes them")
    func export() async throws {
        let system = try SyncSystem("export")
        let (_, run) = try await system.startBothWithRun()
        let queued: AdminReply.FileQueued = try await system.watchctl("export", run, "--json").decode()
        let expected = WorkoutSamples.series(for: DocumentID(run)!)
        #expect(queued.bytes == UInt64(expected.count) && expected.count > 200_000)
        var shown: Shown?
        try await system.eventually("phoned shows the run's samples") {
            shown = try await system.phonectl("show", run, "--json").decode()
            return shown?.samples != nil
        }
        let samples = try #require(shown?.samples)
        #expect(samples.bytes == expected.count)
        #expect(samples.path.hasPrefix("Workouts/") && samples.path.hasSuffix("/\(run.uppercased()).samples"))
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: "\(system.documentsDirectory)/\(samples.path)"))
        #expect(Array(onDisk) == expected)
        #expect(try await system.phone("show", run).contains("samples: \(samples.path)"))
        try await system.eventually("watchd heard it finished") { try await progress(system).isEmpty }
        // A companion, not a stray: the phone does not report it as a skipped file.
        #expect(try await system.phoneStatus().skippedFiles.isEmpty)

        _ = try await system.phone("discard", run)
        #expect(!FileManager.default.fileExists(atPath: "\(system.documentsDirectory)/\(samples.path)"))
    }

    @Test(
        "5 MiB from the watch, watchd kill -9'd at 30% and phoned at 70%: arrives once, intact, resumed (< 1.5× on the wire)"
    )
    func resumesAcrossKills() async throws {
        // About 100 KB/s: 20 s from 30% to 70% and 15 s past it, so the polls see each point
        // even when the whole suite shares the machine's two cores with a soak (at 200 KB/s the
        // file twice finished before 70% was seen there).
        let (system, proxy) = try await throughProxy("bigfile", delay: .milliseconds(20))
        let size = 5 << 20
        var generator = SplitMix64(seed: 19)
        let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let source = system.directory.appending("big.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let queued: AdminReply.FileQueued = try await system.watchctl(
            "file", "send", source, "--metadata", #"{"name":"big.bin"}"#, "--json"
        ).decode()

        try await reach(0.3, system)
        try await system.killWatchd()
        try await system.startWatchd()
        try await reach(0.7, system)
        try await system.killPhoned()
        try await system.startPhoned()
        try await system.eventually("watchd heard the file finished", timeout: .seconds(60)) {
            try await progress(system).isEmpty
        }

        let received: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json").decode()
        // `file received` lists what arrived since the daemon started: on a loaded machine the last 30%
        // can land before the kill, and then only the killed phoned listed it (the log and the
        // received file below still show it arrived exactly once).
        #expect(received.count <= 1 && received.allSatisfy { $0.metadata == #"{"name":"big.bin"}"# }, "\(received)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: "\(system.phoneStateDirectory)/received-files")
        #expect(kept.count == 1, "arrives once: \(kept)")
        let arrived = try Data(
            contentsOf: URL(fileURLWithPath: "\(system.phoneStateDirectory)/received-files/\(kept[0])"))
        #expect(Array(arrived) == bytes, "byte-identical")
        #expect(system.phonedLog.components(separatedBy: "file received").count - 1 == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(system.phoneStateDirectory)/inbox").isEmpty)
        let wire = try await proxy.statistics().bytesForwarded[.upstream] ?? 0
        #expect(wire < size * 3 / 2, "\(wire) bytes on the wire for \(size)")
        #expect(queued.bytes == UInt64(size))
    }

    /// The latency this once asserted (p99 under 100 ms) is figure 10 of scripts/bench: a timed
    /// assertion failed on a loaded machine with nothing wrong. Here, the behaviour: no message
    /// waits out its reply timeout behind the files, and the heartbeats keep the link up throughout.
    @Test("while 128 MiB of files stream, every message is answered, the link never drops, and the files arrive")
    func messagesWhileStreaming() async throws {
        let system = try SyncSystem("streamlat")
        try await system.startBoth()
        let source = system.directory.appending("stream.bin")
        try Data(repeating: 0x5A, count: 32 << 20).write(to: URL(fileURLWithPath: source))
        for _ in 0..<4 { _ = try await system.watch("file", "send", source) }
        let sent: AdminReply.DataSent = try await system.watchctl(
            "data", "send", "ping", "--reply", "--count", "200", "--json"
        ).decode()
        #expect(sent.outcome == "replied" && sent.roundTripsMilliseconds?.count == 200, "\(sent)")
        try await system.eventually("the four files on the phone") {
            let received: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json").decode()
            return received.count == 4 && received.allSatisfy { $0.bytes == 32 << 20 }
        }
        try await system.expectLinkNeverDropped()
    }

    @Test("cancel mid-transfer: nothing in the phone's inbox or partials, nothing received, the watch's outbox empty")
    func cancelMidTransfer() async throws {
        let (system, proxy) = try await throughProxy("cancelfile")
        // The proxy closes every connection when released: it must live to the end.
        defer { withExtendedLifetime(proxy) {} }
        let source = system.directory.appending("cancel.bin")
        try Data(repeating: 7, count: 8 << 20).write(to: URL(fileURLWithPath: source))
        let queued: AdminReply.FileQueued = try await system.watchctl("file", "send", source, "--json").decode()
        try await system.eventually("some of it acknowledged") {
            try await progress(system).first.map { $0.progress > 0.05 } ?? false
        }
        _ = try await system.watch("file", "cancel", "\(queued.sequence)")
        #expect(try await progress(system).isEmpty)
        try await system.eventually("the phone dropped the partial") {
            try FileManager.default.contentsOfDirectory(atPath: "\(system.phoneStateDirectory)/link/files/in").isEmpty
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(system.phoneStateDirectory)/inbox").isEmpty)
        let received: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json").decode()
        #expect(received.isEmpty)
    }

    @Test("the other way: phonectl file send reaches watchd's received files intact, with its metadata")
    func phoneToWatch() async throws {
        let system = try SyncSystem("phonefile")
        try await system.startBoth()
        let source = system.directory.appending("to-watch.bin")
        let bytes = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        _ = try await system.phone("file", "send", source, "--metadata", #"{"face":"modular","size":2}"#)
        var received: [AdminReply.FileReceived] = []
        try await system.eventually("watchd received it") {
            received = try await system.watchctl("file", "received", "--json").decode()
            return !received.isEmpty
        }
        #expect(received.count == 1 && received[0].metadata == #"{"face":"modular","size":2}"#)
        let kept = try #require(received[0].storedAs)
        #expect(FileManager.default.contents(atPath: "\(system.watchStateDirectory)/\(kept)") == Data(bytes))
        try await system.eventually("phoned heard it finished") {
            let list: [AdminReply.FileProgress] = try await system.phonectl("file", "list", "--json").decode()
            return list.isEmpty
        }
    }

    @Test(
        "refusals named after WCError: insufficientSpace over the receiver's quota, fileAccessDenied, payloadUnsupportedTypes"
    )
    func refusals() async throws {
        let system = try SyncSystem("filerefuse")
        try system.writePhonedConfig(["fileInboxQuotaBytes": "100000"])
        let (_, run) = try await system.startBothWithRun()
        _ = try await system.watch("export", run)
        try await system.eventually("watchd heard insufficientSpace") {
            system.watchdLog.contains("insufficientSpace")
        }
        #expect(try await progress(system).isEmpty)
        let shown: Shown = try await system.phonectl("show", run, "--json").decode()
        #expect(shown.samples == nil)

        let missing = try await system.watchctl("file", "send", system.directory.appending("missing.bin"))
        #expect(missing.exitCode == 1 && missing.standardError.contains("fileAccessDenied"), "\(missing)")
        let source = system.directory.appending("small.bin")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: source))
        let badMetadata = try await system.watchctl("file", "send", source, "--metadata", #"{"nested":{"a":1}}"#)
        #expect(
            badMetadata.exitCode == 1 && badMetadata.standardError.contains("payloadUnsupportedTypes"), "\(badMetadata)"
        )
        let relative = try await system.watchctl("file", "send", "small.bin")
        #expect(relative.exitCode == 64 && relative.standardError.contains("absolute path"), "\(relative)")
    }
}
