import Foundation
import Glibc
import LinkProtocol
import Nodes
import TestSupport
import Testing

/// The merged trace (scripts/trace → tracediagram) of real runs of both daemons: the arrows a reader
/// of the seeds expects, between the right participants, in the order things happened.
@Suite("Trace diagrams from real runs")
struct TraceEndToEndTests {
    /// `tracediagram` over this system's two journals; its lines, without the participant header.
    private func diagram(_ system: SyncSystem, run: String? = nil) async throws -> [String] {
        var arguments = ["--phone-state", system.phoneStateDirectory, "--watch-state", system.watchStateDirectory]
        if let run { arguments += ["--run", run] }
        let output = try await system.run("tracediagram", arguments).succeeded().standardOutput
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first == "sequenceDiagram")
        #expect(lines.contains("participant PB as PhoneBridge") && lines.contains("participant WB as WatchBridge"))
        return lines.filter { !$0.hasPrefix("participant ") }
    }

    /// The index of the first line at or after `start` that starts with `prefix` and contains `text`.
    private func index(_ lines: [String], _ prefix: String, _ text: String = "", after start: Int = 0) -> Int? {
        lines.indices.first { $0 >= start && lines[$0].hasPrefix(prefix) && (text.isEmpty || lines[$0].contains(text)) }
    }

    @Test("trace --run keeps to its run across a watchd restart: message ids are not reused")
    func runFilterAcrossRestart() async throws {
        let system = try SyncSystem("trace-run")
        let (split, first) = try await system.startBothWithRun()
        // Several messages about the first run, so the second life's numbers meet them.
        for set in ["1", "2"] { _ = try await system.watch("complete", first, "1", set) }
        _ = try await system.watch("undo", first, "1", "2")
        try await system.waitForPhoneRun(first, "has the sets") { $0.doneSets == 1 }
        _ = try await system.stopWatchd()
        try await system.startWatchd()
        try await system.waitUntilLinked()
        _ = try await system.phone("end", first)
        let second = try await system.startRun(split)
        try await system.eventually("the watch has the second run") { try await system.watchRun(second) != nil }
        _ = try await system.watch("complete", second, "1", "1")
        try await system.waitForPhoneRun(second, "has the set") { $0.doneSets == 1 }

        for side in ["phone", "watch"] {
            let lines = try await
                (side == "phone"
                ? system.phone("trace", "--run", second, "--json")
                : system.watch("trace", "--run", second, "--json")).split(separator: "\n")
            #expect(lines.contains { $0.contains("\"run\":\"\(second)\"") }, "\(side): \(lines)")
            #expect(!lines.contains { $0.contains("\"run\":\"\(first)\"") }, "\(side) shows the first run: \(lines)")
        }
    }

    @Test("S5 queued delivery: the failed message, the fallback transfer, its delivery after both restart, its ack")
    func queuedDeliveryAcrossRestarts() async throws {
        let system = try SyncSystem("trace-s5")
        // A frozen phone answers no message: the watch's attempt fails within a second.
        try system.writeWatchdConfig(["messageReplyTimeoutMilliseconds": "1000"])
        let (_, run) = try await system.startBothWithRun()
        system.phoned!.send(SIGSTOP)
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForQueue(1)
        // phoned dies while frozen, then watchd is killed: the edit lives only in watchd's outbox.
        try await system.killPhoned()
        try await system.killWatchd()
        try await system.startPhoned()
        try await system.startWatchd()
        try await system.waitForPhoneRun(run, "has the watch's set") { $0.doneSets == 1 }
        try await system.waitForWatchStatus("the transfer is acknowledged") { $0.outboxDepth == 0 }

        let short = String(run.prefix(8))
        let lines = try await diagram(system, run: run)
        let failed = try #require(index(lines, "WB-xPB: sendMessage id", "run \(short) failed"), "\(lines)")
        let queued = try #require(
            index(lines, "WB->>WB: transferUserInfo queued seq", short, after: failed), "\(lines)")
        let sequence = try #require(lines[queued].split(separator: " ").drop { $0 != "seq" }.dropFirst().first)
        let delivered = try #require(
            index(lines, "WB->>PB: transferUserInfo seq \(sequence)", after: queued), "\(lines)")
        let ingested = try #require(index(lines, "PB->>SE: ingestFromWatch run \(short)", after: delivered), "\(lines)")
        #expect(lines[ingested + 1] == "Note over SE: merged via userInfo")
        #expect(index(lines, "PB-->>WB: userInfoAck seq \(sequence)", after: delivered) != nil, "\(lines)")

        // Each daemon's own journal, in the human form, narrowed to the run or to a window.
        let watchSide = try await system.watch("trace", "--run", run)
        #expect(watchSide.contains(" watch message.failed msg:") && watchSide.contains(" watch transfer.queued xfer:"))
        #expect(!watchSide.contains(" started "), "the run filter keeps only the run's exchanges")
        let phoneSide = try await system.phone("trace", "--run", run, "--since", "1h")
        #expect(phoneSide.contains(" phone ingest xfer:") && phoneSide.contains("merged via userInfo"), "\(phoneSide)")
        #expect(try await system.phone("trace", "--until", "2000-01-01T00:00:00Z") == "no events")

        // The whole picture: the delivery comes after both daemons started again.
        let all = try await diagram(system)
        let restarted = try #require(all.lastIndex { $0.hasPrefix("Note over WB: watchd started") })
        #expect(all.filter { $0.hasPrefix("Note over WB: watchd started") }.count == 2)
        #expect(all.filter { $0.hasPrefix("Note over PB: phoned started") }.count == 2)
        let deliveredAfter = try #require(
            index(all, "WB->>PB: transferUserInfo seq \(sequence)", after: restarted), "\(all)")
        #expect(index(all, "PB-->>WB: userInfoAck seq \(sequence)", after: deliveredAfter) != nil, "\(all)")
        #expect(all.firstIndex { $0.hasPrefix("WB-xPB: sendMessage") }! < restarted)
    }

    @Test("S4: the phone's push that completes the run is the context after which the watch's session ends")
    func sessionEndingPush() async throws {
        let system = try SyncSystem("trace-s4")
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:1x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchStatus("the session runs") { $0.session == "running" && $0.workouts == 1 }
        _ = try await system.watch("wrist", "down")
        _ = try await system.phone("complete", run, "1", "1")
        try await system.waitForWatchStatus("the session finished") { $0.session == "ended" }
        try await system.waitForPhoneStatus("the watch acknowledged the last push") {
            $0.contextGenerationAcknowledged == $0.contextGenerationSent
        }

        let lines = try await diagram(system)
        let ended = try #require(index(lines, "WB->>WS: session ended run=\(run)", "finishedAndSaved"), "\(lines)")
        let context = try #require(
            lines[..<ended].lastIndex { $0.hasPrefix("PB->>WB: applicationContext gen ") }, "\(lines)")
        let generation = try #require(lines[context].split(separator: " ").drop { $0 != "gen" }.dropFirst().first)
        let push = try #require(lines[..<context].lastIndex { $0.hasPrefix("SE->>PB: pushAll") }, "\(lines)")
        // The push is the phone completing the run: its file is written just before it.
        #expect(lines[push - 1] == "Note over SE: file written run \(run.prefix(8))", "\(lines)")
        #expect(index(lines, "WB->>WS: session running run=\(run)") ?? .max < push)
        #expect(index(lines, "WB-->>PB: contextAck gen \(generation)", after: context) != nil, "\(lines)")
    }
}

@Suite("metrics from real daemons")
struct MetricsEndToEndTests {
    @Test("phonectl metrics and watchctl metrics print valid OpenMetrics text counting what happened")
    func metrics() async throws {
        let system = try SyncSystem("metrics")
        let (_, run) = try await system.startBothWithRun()
        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForPhoneRun(run, "has the watch's set") { $0.doneSets == 1 }

        let phone = try await system.phone("metrics") + "\n"
        let watch = try await system.watch("metrics") + "\n"
        #expect(openMetricsViolations(phone).isEmpty, "\(openMetricsViolations(phone))\n\(phone)")
        #expect(openMetricsViolations(watch).isEmpty, "\(openMetricsViolations(watch))\n\(watch)")
        func value(_ text: String, _ sample: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.flatMap {
                Double($0.split(separator: " ").last!)
            }
        }
        #expect(value(phone, "watchsync_linked") == 1 && value(watch, "watchsync_linked") == 1)
        #expect(value(phone, #"watchsync_events_total{event="context.send"}"#) ?? 0 >= 1)
        #expect(value(watch, #"watchsync_events_total{event="context.receive"}"#) ?? 0 >= 1)
        #expect(value(phone, #"watchsync_ingest_total{outcome="merged"}"#) ?? 0 >= 1, "\(phone)")
        #expect(value(watch, #"watchsync_cache_runs{set="all"}"#) == 1)
        #expect(value(watch, "watchsync_session_running") == 1)
        // Both wrote durably (the phone its documents, the watch its cache and received context).
        #expect(value(phone, "watchsync_fsync_seconds_count") ?? 0 >= 1, "\(phone)")
        #expect(value(watch, "watchsync_fsync_seconds_count") ?? 0 >= 1, "\(watch)")
        #expect(
            value(phone, #"watchsync_fsync_seconds_bucket{le="+Inf"}"#) == value(phone, "watchsync_fsync_seconds_count")
        )
    }
}

@Suite("watchctl trace --follow against real daemons")
struct TraceFollowTests {
    @Test("--follow prints the journal, then each new event once, as it is journalled")
    func follow() async throws {
        let system = try SyncSystem("follow")
        let (_, run) = try await system.startBothWithRun()
        let follower = try DaemonProcess(
            executable: BuildProducts.executable("watchctl"),
            arguments: ["--socket", system.watchSocket, "trace", "--follow"])
        _ = try await follower.waitForLine(containing: " watch started ")
        _ = try await system.watch("complete", run, "1", "1")
        _ = try await follower.waitForLine(containing: " watch message.reply.receive msg:")
        _ = try await system.watch("complete", run, "1", "2")
        try await system.eventually("the second edit's reply is followed") {
            // The link's first requestSync, then one reply per edit.
            follower.standardOutput.components(separatedBy: " watch message.reply.receive msg:").count > 3
        }
        follower.send(SIGKILL)
        _ = try await follower.waitForExit(timeout: hangGuard)
        let lines = follower.standardOutput.split(separator: "\n")
        #expect(lines.filter { $0.contains(" watch started ") }.count == 1, "each event once")
        #expect(Set(lines).count == lines.count, "no line printed twice")
    }
}
