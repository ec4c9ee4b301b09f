import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// The live-run mirror (docs/PROTOCOL.md, "Live frames") between the real daemons, driven only through
/// `phonectl live …` / `watchctl live …`, `wrist down|up`, SIGKILL and a TCP partition (FaultProxy).
///
/// Every wait is an `eventually` (a hang guard, never a timing assertion). Timed boundaries are waited
/// for by polling `live show` until the phase changes. Screens are compared field for field, the
/// phase anchor exactly; remaining seconds are checked against the wall-clock window of each reading.
@Suite("live mirror end to end")
struct LiveMirrorEndToEndTests {
    // MARK: S2 / S3

    @Test("S2: the phone drives a run and the watch's cover mirrors every phase, set and timer")
    func phoneDrivesWatchFollows() async throws {
        let live = try await LiveSystem.started("s2", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Squat:2x5@100"])

        try await live.open(runID, on: .phone)
        let opened = try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 1)
        #expect(opened.exercise == "Squat" && opened.setCount == 2)
        for (phase, set) in [("work", 1), ("rest", 1), ("ready", 2), ("work", 2), ("finish", 2)] {
            try await live.advance(runID, on: .phone)
            try await live.waitMirrored(runID, driver: .phone, phase: phase, set: set)
        }
        // `live advance` in work was the durable set write: both sets are done in the phone's document.
        let run = try await live.system.waitForWatchRun(runID, "has both sets done") { $0.doneSets == 2 }
        #expect(run.logs[0].sets.allSatisfy { $0.isDone })

        try await live.close(runID, on: .phone)
        try await live.waitForNoScreen(runID, on: .watch)
        #expect(try await live.screens(on: .phone).isEmpty)
        let counts = try await live.counts()
        #expect(counts.phone.progress == 6 && counts.phone.ended == 1)
        #expect(counts.watch.received == 7 && counts.watch.progress == 0 && counts.watch.ended == 0)
    }

    @Test("S3: the watch drives a run and the phone's cover mirrors every phase, set and timer")
    func watchDrivesPhoneFollows() async throws {
        let live = try await LiveSystem.started("s3", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Press:2x8@40"])

        try await live.open(runID, on: .watch)
        let opened = try await live.waitMirrored(runID, driver: .watch, phase: "ready", set: 1)
        #expect(opened.exercise == "Press" && opened.setCount == 2)
        for (phase, set) in [("work", 1), ("rest", 1), ("ready", 2), ("work", 2), ("finish", 2)] {
            try await live.advance(runID, on: .watch)
            try await live.waitMirrored(runID, driver: .watch, phase: phase, set: set)
        }
        // The watch's durable writes reached the phone's directory.
        let run = try await live.system.waitForPhoneRun(runID, "has both sets done") { $0.doneSets == 2 }
        #expect(try live.system.runOnDisk(run) == run)

        try await live.close(runID, on: .watch)
        try await live.waitForNoScreen(runID, on: .phone)
        #expect(try await live.screens(on: .watch).isEmpty)
        let counts = try await live.counts()
        #expect(counts.watch.progress == 6 && counts.watch.ended == 1)
        #expect(counts.phone.received == 7 && counts.phone.progress == 0 && counts.phone.ended == 0)
    }

    // MARK: Staging

    @Test("wrist down stages the phone's frames; wrist up delivers only the newest")
    func wristDownStagesNewestOnly() async throws {
        let live = try await LiveSystem.started("stage", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Row:3x10@60"])
        try await live.open(runID, on: .phone)
        let first = try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 1)

        _ = try await live.system.watch("wrist", "down")
        try await live.system.waitForPhoneStatus("the watch app is in the background") { !$0.reachable }
        // Four human actions while the watch cannot be reached (one of them the durable write of set 1).
        for _ in 1...4 { try await live.advance(runID, on: .phone) }
        let newest = try #require(try await live.screen(runID, on: .phone))
        #expect(newest.phase == "work" && newest.set == 2 && newest.version == first.version + 4)

        // The context still reaches the wrist-down watch, and repairs its cover forward (at the
        // watch's own clock: the anchor is not the phone's).
        try await live.system.waitForWatchRun(runID, "has set 1 done") { $0.logs[0].sets[0].isDone }
        let repaired = try await live.waitForScreen(runID, on: .watch, "repaired to work, set 2") {
            $0.phase == "work" && $0.set == 2
        }
        #expect(repaired.role == "following" && repaired.version == first.version)
        #expect(repaired.phaseAnchor != newest.phaseAnchor)
        var counts = try await live.counts()
        #expect(counts.phone.progress == 1, "nothing goes on the wire while the watch is unreachable")
        #expect(counts.watch.received == 1)

        _ = try await live.system.watch("wrist", "up")
        let delivered = try await live.waitForScreen(runID, on: .watch, "shows the newest frame") {
            $0.version == newest.version
        }
        #expect(delivered == newest.asFollowing)
        counts = try await live.counts()
        #expect(counts.phone.progress == 2, "one re-send: the newest staged frame only")
        #expect(counts.watch.received == 2)

        // Closing is a later frame on the same connection: once it is in, nothing else came between.
        try await live.close(runID, on: .phone)
        try await live.waitForNoScreen(runID, on: .watch)
        counts = try await live.counts()
        #expect(counts.phone.progress == 2 && counts.phone.ended == 1)
        #expect(counts.watch.received == 3)
    }

    // MARK: Lost frame, durable repair

    @Test("a staged frame dies with phoned; the durable write already repaired the watch's cover forward")
    func lostFrameDurableRepair() async throws {
        let live = try await LiveSystem.started("repair", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Deadlift:3x5@140"])
        try await live.open(runID, on: .phone)
        let first = try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 1)

        _ = try await live.system.watch("wrist", "down")
        try await live.system.waitForPhoneStatus("the watch app is in the background") { !$0.reachable }
        try await live.advance(runID, on: .phone)  // skip the countdown: work, set 1
        try await live.advance(runID, on: .phone)  // complete set 1 (durable write first): rest, set 1
        let phoneScreen = try #require(try await live.screen(runID, on: .phone))
        #expect(phoneScreen.phase == "rest" && phoneScreen.set == 1)

        // The write reaches the watch as context; its cover jumps to the first unfinished set's work page.
        try await live.system.waitForWatchRun(runID, "has set 1 done") { $0.logs[0].sets[0].isDone }
        let repaired = try await live.waitForScreen(runID, on: .watch, "repaired to work, set 2") {
            $0.phase == "work" && $0.set == 2
        }
        #expect(repaired.role == "following" && repaired.version == first.version)

        // The staged rest frame is lost with phoned: frames are never written to disk.
        try await live.system.killPhoned()
        try await live.system.startPhoned()
        try await live.system.waitUntilLinked()
        #expect(try await live.screens(on: .phone).isEmpty, "a restarted phoned drives nothing")
        _ = try await live.system.watch("wrist", "up")
        try await live.system.waitForPhoneStatus("the watch is reachable again") { $0.reachable }
        // A forced push is a later message on the same connection: once applied, anything the new
        // phoned would have re-sent is in too.
        let applied = try await live.system.watchStatus().contextGenerationApplied
        _ = try await live.system.phone("push")
        try await live.system.waitForWatchStatus("the forced push is applied") {
            $0.contextGenerationApplied > applied
        }
        let after = try #require(try await live.screen(runID, on: .watch))
        #expect(after == repaired, "the repaired cover neither moved back nor was replaced")
        let counts = try await live.counts()
        #expect(counts.watch.received == 1, "the phone's staged frames never arrived")
        #expect(counts.phone.progress == 0 && counts.phone.received == 0)

        // The restarted phoned's versions outrank everything its previous life minted.
        try await live.open(runID, on: .phone)
        let reopened = try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 2)
        #expect(reopened.version > phoneScreen.version)
    }

    @Test("a set completed during a partition: after the heal the watch's cover ends on the phone's page")
    func partitionCompletionThenHeal() async throws {
        let live = try await LiveSystem.started("part", countdown: 30, rest: 30, throughProxy: true)
        let runID = try await live.startRun(["Bench:3x5@80"])
        try await live.open(runID, on: .phone)
        try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 1)

        try await live.partition()
        try await live.advance(runID, on: .phone)  // work, set 1
        try await live.advance(runID, on: .phone)  // complete set 1: rest, set 1
        let phoneScreen = try #require(try await live.screen(runID, on: .phone))
        #expect(phoneScreen.phase == "rest" && phoneScreen.set == 1)
        #expect(try await live.counts().watch.received == 1)

        try await live.heal()
        try await live.system.waitForWatchRun(runID, "has set 1 done") { $0.logs[0].sets[0].isDone }
        let shown = try await live.waitForScreen(runID, on: .watch, "shows the phone's frame") {
            $0.version == phoneScreen.version
        }
        #expect(shown == phoneScreen.asFollowing)
        try await live.waitMirrored(runID, driver: .phone, phase: "rest", set: 1)
    }

    // MARK: Tie

    @Test("both sides act during a partition with the same version: the later action wins on both")
    func tieBrokenByAnchor() async throws {
        let live = try await LiveSystem.started("tie", countdown: 60, rest: 60, throughProxy: true)
        let runID = try await live.startRun(["Curl:3x12@15"])
        try await live.open(runID, on: .phone)
        try await live.waitMirrored(runID, driver: .phone, phase: "ready", set: 1)
        // The watch opens the same run: both drive it, at the watch's frame.
        try await live.open(runID, on: .watch)
        let shared = try await live.waitForScreen(runID, on: .phone, "adopted the watch's open") {
            let watchVersion = try await live.screen(runID, on: .watch)?.version
            return $0.role == "driving" && $0.version == watchVersion
        }
        #expect(try await live.screen(runID, on: .watch) == shared)

        try await live.partition()
        try await live.advance(runID, on: .watch)  // skip the countdown first on the watch…
        let earlier = try #require(try await live.screen(runID, on: .watch))
        try await live.advance(runID, on: .phone)  // …then on the phone: the later human action
        let later = try #require(try await live.screen(runID, on: .phone))
        #expect(earlier.version == later.version, "both minted the same version: a tie")
        #expect(earlier.phase == "work" && later.phase == "work")
        #expect(try #require(Timestamp(iso8601: later.phaseAnchor)) > Timestamp(iso8601: earlier.phaseAnchor)!)

        try await live.heal()
        let converged = try await live.waitForScreen(runID, on: .watch, "adopted the phone's later action") {
            $0.phaseAnchor == later.phaseAnchor
        }
        #expect(converged == later)
        let pair = try await live.concurrentScreens(runID)
        #expect(pair.phone == later && pair.watch == later)
        // The phone refused the watch's earlier action (against its staged frame, or its flow once
        // that frame was delivered); the watch took the phone's into its open flow (its own staged
        // frame dropped, or already delivered when the phone's arrived).
        let earlierOrder = "v\(earlier.version)@\(earlier.phaseAnchor)"
        #expect(
            live.system.phonedLog.split(separator: "\n").contains {
                $0.contains("live: ignored") && $0.contains(earlierOrder)
            })
        #expect(live.system.watchdLog.contains("adopted the peer's Curl: work, set 1 of 3 (v\(later.version))"))
    }

    // MARK: No auto-advance frames

    @Test("timed boundaries are crossed on both sides without a frame: frames sent = human actions")
    func timedBoundariesSendNoFrames() async throws {
        let live = try await LiveSystem.started("auto", countdown: 1, rest: 2)
        let runID = try await live.startRun(["Lunge:3x10@20"])

        try await live.open(runID, on: .phone)  // action 1
        // ready 1 → work 1 by itself.
        try await live.waitMirrored(runID, driver: .phone, phase: "work", set: 1)
        for set in 2...3 {
            try await live.advance(runID, on: .phone)  // complete the set: actions 2 and 3
            // rest → ready → work by themselves: two boundaries per set.
            try await live.waitMirrored(runID, driver: .phone, phase: "work", set: set)
        }
        try await live.advance(runID, on: .phone)  // action 4: the last set, finish
        try await live.waitMirrored(runID, driver: .phone, phase: "finish", set: 3)
        try await live.close(runID, on: .phone)  // the close
        try await live.waitForNoScreen(runID, on: .watch)

        let counts = try await live.counts()
        #expect(counts.phone.progress == 4, "open + 3 completions; 5 timed boundaries sent nothing")
        #expect(counts.phone.ended == 1)
        #expect(counts.watch.received == 5)
        #expect(counts.watch.progress == 0 && counts.watch.ended == 0 && counts.phone.received == 0)
        #expect(try await live.system.phoneRun(runID).doneSets == 3)
    }
}

// MARK: - Harness

/// One side of the pair.
private enum Side: String {
    case phone
    case watch
}

/// One row of `live show --json` (docs/CLI.md).
private struct LiveRow: Decodable, Equatable, CustomStringConvertible {
    var runID: String
    var logID: String
    var exercise: String
    var role: String
    var phase: String
    var set: Int
    var setCount: Int
    var phaseAnchor: String
    var remainingSeconds: Double?
    var version: Int

    /// The same screen without the timer (which depends on the moment of the call).
    var untimed: LiveRow {
        var row = self
        row.remainingSeconds = nil
        return row
    }

    /// The driver's screen as the follower's cover shows it (timer dropped).
    var asFollowing: LiveRow {
        var row = untimed
        row.role = "following"
        return row
    }

    static func == (a: LiveRow, b: LiveRow) -> Bool {
        (a.runID, a.logID, a.exercise, a.role, a.phase) == (b.runID, b.logID, b.exercise, b.role, b.phase)
            && (a.set, a.setCount, a.phaseAnchor, a.version) == (b.set, b.setCount, b.phaseAnchor, b.version)
    }

    var description: String {
        "\(role) \(phase) set \(set)/\(setCount) @\(phaseAnchor) v\(version)"
            + (remainingSeconds.map { " \($0)s left" } ?? "")
    }
}

/// `status --json`'s live counters (both daemons).
private struct LiveCounters: Decodable {
    var liveFramesSent: [String: Int]
    var liveFramesReceived: Int

    var progress: Int { liveFramesSent["progress"] ?? 0 }
    var ended: Int { liveFramesSent["ended"] ?? 0 }
    var received: Int { liveFramesReceived }
}

/// A `live show --json` taken with the wall-clock window of the CLI call around it.
private struct Reading {
    var rows: [LiveRow]
    var start: Date
    var end: Date
}

/// A started pair with the live settings pushed, optionally with watchd dialling through a FaultProxy.
private final class LiveSystem: Sendable {
    let system: SyncSystem
    let proxy: FaultProxy?
    let countdown: Int
    let rest: Int

    private init(system: SyncSystem, proxy: FaultProxy?, countdown: Int, rest: Int) {
        self.system = system
        self.proxy = proxy
        self.countdown = countdown
        self.rest = rest
    }

    deinit { proxy?.stop() }

    /// Starts both daemons (watchd through a proxy when asked, with heartbeats short enough that a
    /// partition is noticed within a second), sets the timers and waits until the watch has them.
    static func started(_ name: String, countdown: Int, rest: Int, throughProxy: Bool = false) async throws
        -> LiveSystem
    {
        let system = try SyncSystem("live-\(name)")
        var proxy: FaultProxy?
        if throughProxy {
            let beats: [String: String?] = ["heartbeatIntervalMilliseconds": "100", "missedHeartbeats": "10"]
            try system.writePhonedConfig(beats)
            try await system.startPhoned()
            let faults = try await FaultProxy(upstreamPort: system.port)
            proxy = faults
            try system.writeWatchdConfig(
                beats.merging(["phoneAddress": SyncSystem.json("127.0.0.1:\(faults.port)")]) { $1 })
            try await system.startWatchd()
            try await system.waitUntilLinked()
        } else {
            try await system.startBoth()
        }
        _ = try await system.phone("settings", "set", "--countdown", "\(countdown)", "--rest", "\(rest)")
        try await system.eventually("the watch has the live timers") {
            let settings = try await system.watchctl("settings", "--json").decode(Settings.self)
            return settings.doneCountdownSeconds == countdown && settings.restSeconds == rest
        }
        return LiveSystem(system: system, proxy: proxy, countdown: countdown, rest: rest)
    }

    /// Creates a split, starts a run of it and waits until the watch has the run.
    func startRun(_ exercises: [String]) async throws -> String {
        let split = try await system.createSplit("Live", exercises)
        let runID = try await system.startRun(split)
        try await system.waitForWatchRun(runID)
        return runID
    }

    // MARK: Actions

    private func ctl(_ side: Side, _ arguments: [String]) async throws -> CommandResult {
        switch side {
        case .phone: try await system.phonectl(arguments)
        case .watch: try await system.watchctl(arguments)
        }
    }

    func open(_ runID: String, on side: Side) async throws {
        _ = try await ctl(side, ["live", "open", runID]).succeeded()
    }

    func advance(_ runID: String, on side: Side) async throws {
        _ = try await ctl(side, ["live", "advance", runID]).succeeded()
    }

    func close(_ runID: String, on side: Side) async throws {
        _ = try await ctl(side, ["live", "close", runID]).succeeded()
    }

    /// Blackholes both streams, then waits until both daemons have given up on the link.
    func partition() async throws {
        let proxy = try #require(proxy)
        try await proxy.setToxics([.blackhole])
        try await system.waitForPhoneStatus("the partition is noticed") { !$0.linked && !$0.reachable }
        try await system.waitForWatchStatus("the partition is noticed") { !$0.linked && !$0.reachable }
    }

    /// Lifts the partition and waits until the link is back and reachable both ways.
    func heal() async throws {
        try await #require(proxy).heal()
        try await system.waitForPhoneStatus("the link is back") { $0.linked && $0.reachable }
        try await system.waitForWatchStatus("the link is back") { $0.linked && $0.reachable }
    }

    // MARK: Screens

    func reading(on side: Side) async throws -> Reading {
        let start = Date()
        let rows = try await ctl(side, ["live", "show", "--json"]).decode([LiveRow].self)
        return Reading(rows: rows, start: start, end: Date())
    }

    func screens(on side: Side) async throws -> [LiveRow] {
        try await reading(on: side).rows
    }

    func screen(_ runID: String, on side: Side) async throws -> LiveRow? {
        try await screens(on: side).first { $0.runID == runID }
    }

    /// Waits until the side shows the run and the screen satisfies `condition`; returns it.
    @discardableResult
    func waitForScreen(
        _ runID: String, on side: Side, _ what: String, where condition: @escaping (LiveRow) async throws -> Bool
    ) async throws -> LiveRow {
        var found: LiveRow?
        try await system.eventually("the \(side)'s live screen for \(runID) \(what)") {
            guard let row = try await self.screen(runID, on: side) else { return false }
            found = row
            return try await condition(row)
        }
        return found!
    }

    func waitForNoScreen(_ runID: String, on side: Side) async throws {
        try await system.eventually("the \(side) shows no live screen for \(runID)") {
            try await self.screen(runID, on: side) == nil
        }
    }

    /// Both sides' screens for the run, read concurrently, with each call's wall-clock window checked.
    func concurrentScreens(_ runID: String) async throws -> (phone: LiveRow?, watch: LiveRow?) {
        async let phone = reading(on: .phone)
        async let watch = reading(on: .watch)
        let (p, w) = try await (phone, watch)
        let pair = (p.rows.first { $0.runID == runID }, w.rows.first { $0.runID == runID })
        if let a = pair.0, let b = pair.1, a.untimed.asFollowing == b.untimed.asFollowing {
            checkTimers(a, p, b, w)
        }
        return (pair.0?.untimed, pair.1?.untimed)
    }

    /// Waits until the driver shows `phase`/`set` and the follower's cover the same frame (same
    /// version), then reads both concurrently and asserts they agree: exercise, phase, set, set
    /// count, version and phase anchor exactly, the roles, and the timers (`checkTimers`).
    /// A phase reached by a timed boundary is waited for the same way: polling until time has passed.
    @discardableResult
    func waitMirrored(
        _ runID: String, driver: Side, phase: String, set: Int
    ) async throws -> LiveRow {
        let follower: Side = driver == .phone ? .watch : .phone
        var last: (Reading, Reading)?
        try await system.eventually(
            "the \(driver) drives \(runID) at \(phase) set \(set) and the \(follower) mirrors it"
        ) {
            async let d = self.reading(on: driver)
            async let f = self.reading(on: follower)
            let pair = try await (d, f)
            last = pair
            guard let a = pair.0.rows.first(where: { $0.runID == runID }),
                let b = pair.1.rows.first(where: { $0.runID == runID })
            else { return false }
            return a.phase == phase && a.set == set && b.phase == phase && b.set == set && a.version == b.version
        }
        let (driverReading, followerReading) = last!
        let driven = try #require(driverReading.rows.first { $0.runID == runID })
        let followed = try #require(followerReading.rows.first { $0.runID == runID })
        #expect(driven.role == "driving", "\(driven)")
        #expect(followed.role == "following", "\(followed)")
        #expect(followed == driven.asFollowing, "the cover is the driver's screen: \(followed) vs \(driven)")
        checkTimers(driven, driverReading, followed, followerReading)
        return driven.untimed
    }

    /// Timers: each side's remaining seconds lie in the wall-clock window of its call (the phase ends
    /// at anchor + duration), and the two differ by at most 0.2 s plus the widest gap the two calls'
    /// windows allow between the instants the daemons computed them.
    private func checkTimers(_ a: LiveRow, _ aReading: Reading, _ b: LiveRow, _ bReading: Reading) {
        let timed = a.phase == "ready" || a.phase == "rest"
        #expect((a.remainingSeconds != nil) == timed && (b.remainingSeconds != nil) == timed, "\(a) / \(b)")
        guard timed, let ra = a.remainingSeconds, let rb = b.remainingSeconds,
            let anchor = Timestamp(iso8601: a.phaseAnchor)
        else { return }
        let duration = Double(a.phase == "ready" ? countdown : rest)
        let end = Double(anchor.microsecondsSinceEpoch) / 1_000_000 + duration
        let slack = 0.002  // microsecond rounding and Date's double precision
        for (remaining, reading) in [(ra, aReading), (rb, bReading)] {
            let earliest = end - reading.end.timeIntervalSince1970 - slack
            let latest = end - reading.start.timeIntervalSince1970 + slack
            #expect(
                remaining >= earliest && remaining <= latest,
                "\(remaining) s left is outside the call's window [\(earliest), \(latest)]")
        }
        let gap = max(
            aReading.end.timeIntervalSince(bReading.start), bReading.end.timeIntervalSince(aReading.start))
        #expect(abs(ra - rb) <= 0.2 + max(0, gap), "timers \(ra) vs \(rb), calls at most \(gap) s apart")
    }

    // MARK: Counters

    func counts() async throws -> (phone: LiveCounters, watch: LiveCounters) {
        async let phone = system.phonectl("status", "--json")
        async let watch = system.watchctl("status", "--json")
        return (try await phone.decode(LiveCounters.self), try await watch.decode(LiveCounters.self))
    }
}

// MARK: S8 pop-out and the watch's own edits

extension LiveMirrorEndToEndTests {
    @Test("S8: the phone locking the run pops the watch out of its flow in the ready and the rest phase")
    func lockPopsWatchOut() async throws {
        let live = try await LiveSystem.started("s8", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Curl:3x10@12"])
        // Ready: just opened. Rest: the first set completed through the flow.
        for (phase, advances) in [("ready", 0), ("rest", 2)] {
            try await live.open(runID, on: .watch)
            for _ in 0..<advances { try await live.advance(runID, on: .watch) }
            try await live.waitMirrored(runID, driver: .watch, phase: phase, set: 1)

            _ = try await live.system.phone("lock", "workout", runID)
            try await live.system.waitForWatchStatus("the lock reached the watch") { $0.editingWorkoutID == runID }
            try await live.waitForNoScreen(runID, on: .watch)
            try await live.waitForNoScreen(runID, on: .phone)
            let refused = try await live.system.watchctl("live", "advance", runID)
            #expect(refused.exitCode == 1, "\(phase): \(refused)")
            #expect(try await live.screen(runID, on: .phone) == nil, "\(phase): the phone's cover stays down")

            _ = try await live.system.phone("unlock", "workout")
            try await live.system.waitForWatchStatus("the unlock reached the watch") { $0.editingWorkoutID == nil }
        }
        #expect(try await live.system.phoneRun(runID).doneSets == 1)
    }

    @Test("the watch's own edit repairs its flow forward with the phone away")
    func ownEditRepairsFlow() async throws {
        let live = try await LiveSystem.started("own", countdown: 30, rest: 30)
        let runID = try await live.startRun(["Row:3x10@60"])
        try await live.system.stopPhoned()
        try await live.system.waitForWatchStatus("the phone is gone") { !$0.linked }

        try await live.open(runID, on: .watch)
        let opened = try #require(try await live.screen(runID, on: .watch))
        #expect(opened.phase == "ready" && opened.set == 1)
        _ = try await live.system.watch("complete", runID, "1", "1")
        let repaired = try #require(try await live.screen(runID, on: .watch))
        #expect(repaired.role == "driving" && repaired.phase == "work" && repaired.set == 2, "\(repaired)")
    }
}
