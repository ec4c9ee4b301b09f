import AdminCommands
import Foundation
import Glibc
import LinkProtocol
import Nodes
import POSIX
import TestSupport
import Testing
import WorkoutModel

/// The phone side of issue 14 (Defects): the push, the working set, operations on old runs and the
/// admin transport, against the real daemons.
@Suite("phone defects")
struct PhoneDefectsTests {
    @Test(
        "a long history streams: workouts --all (text and --json) with 2,250 runs in chunks, paged, --since; an old request whole"
    )
    func largeAdminResponsesArriveWhole() async throws {
        let system = try SyncSystem("big")
        try await system.startPhoned()
        let exercises = (1...8).map { "Lift \($0):10x5@100:barbell" }
        let split = try await system.createSplit("Legs", exercises)
        var template = try await system.phoneRun(try await system.startRun(split))
        #expect(try await system.stopPhoned() == 0)
        // Every set but the last done, as the soak's runs are: about 6 KB a run, so the whole
        // history is larger than the daemon's 8 MiB write buffer.
        var stamp = template.updatedAt
        for log in template.logs.indices {
            for set in template.logs[log].sets.indices where log < template.logs.count - 1 || set > 0 {
                stamp = stamp.advanced(by: .milliseconds(1))
                try template.completeSet(logID: template.logs[log].id, setIndex: set, reps: 5, weight: 100, at: stamp)
            }
        }
        try system.generateHistory(like: template, count: 2_250)
        try await system.startPhoned()

        let raw = try await system.phonectl("workouts", "--all", "--json").succeeded().standardOutput
        #expect(raw.utf8.count > 8 << 20, "the reply is larger than the daemon's 8 MiB write buffer")
        let all = try JSONDecoder().decode([WorkoutDocument].self, from: Data(raw.utf8))
        #expect(all.count == 2_251)
        let text = try await system.phone("workouts", "--all")
        #expect(text.split(separator: "\n").count == 2_251)

        // Pages of at most 1,000, each after the last ID of the previous one, cover the history once.
        var paged: [WorkoutDocument] = []
        var after: [String] = []
        while true {
            let page = try await system.phonectl(["workouts", "--all", "--json", "--limit", "1000"] + after)
                .decode([WorkoutDocument].self)
            #expect(page.count <= 1_000)
            guard let last = page.last else { break }
            paged += page
            after = ["--after", last.id.rawValue]
        }
        #expect(paged.map(\.id) == all.map(\.id))
        let unknown = try await system.phonectl("workouts", "--all", "--after", UUID().uuidString)
        #expect(unknown.exitCode == 1 && unknown.standardOutput.isEmpty, "\(unknown)")

        // On the wire phonectl's reply is chunks: many response lines, all but the last with more.
        let streamed = PhoneCommand.workouts(all: true, limit: nil, after: nil, since: nil, json: false, streamed: true)
        let chunked = try Self.responses(system.phoneSocket, AdminWire.encode(streamed))
        #expect(chunked.count > 2 && chunked.dropLast().allSatisfy { $0.more == true } && chunked.last?.more == nil)
        #expect(chunked.compactMap(\.text).joined().split(separator: "\n").count == 2_251)
        // An older phonectl's request (no "since", no "streamed") is answered whole, in one response.
        let old = try Self.responses(
            system.phoneSocket, Array(#"{"workouts":{"after":null,"all":true,"json":false}}"#.utf8))
        #expect(old.count == 1 && old.first?.status == .ok)
        #expect(old.first?.text?.split(separator: "\n").count == 2_251)
        // --since: every run here started when the template did, a moment ago.
        let today = try await system.phonectl("workouts", "--all", "--since", "1d").succeeded().standardOutput
        #expect(today.split(separator: "\n").count == 2_251)
        let later = template.startedAt.advanced(by: .seconds(1)).iso8601
        #expect(try await system.phone("workouts", "--all", "--since", later) == "no runs")
        let bad = try await system.phonectl("workouts", "--all", "--since", "yesterday")
        #expect(bad.exitCode == 64 && bad.standardError.contains("--since must be an age"), "\(bad)")
    }

    /// The response lines of one raw admin exchange.
    static func responses(_ socket: String, _ request: [UInt8]) throws -> [AdminResponse] {
        let raw = try UnixSocketClient.request(
            path: socket, bytes: request, timeout: .seconds(60), maximumResponseBytes: .max)
        return try raw.split(separator: 0x0A).map { try JSONDecoder().decode(AdminResponse.self, from: Data($0)) }
    }

    @Test("a push over the context limit is fitted: 500 active runs, and a split made afterwards reaches the watch")
    func pushOverTheContextLimitStillConverges() async throws {
        let system = try SyncSystem("fit")
        try await system.startPhoned()
        let split = try await system.createSplit("Full", ["Squat:5x5@100:barbell", "Bench:5x5@80", "Row:5x5@60"])
        let template = try await system.phoneRun(try await system.startRun(split))
        #expect(try await system.stopPhoned() == 0)
        try system.writeCopies(of: template, count: 500)
        try await system.startBoth()

        let late = try await system.createSplit("Late", ["Dip:2x8@0"])
        try await system.eventually("the split made afterwards is on the watch") {
            try await system.watch("splits", "--json").contains(late)
        }
        let phone = try await system.waitForPhoneStatus("the push went, fitted") { $0.heldBackRuns > 0 }
        #expect(phone.pushError == nil)
        #expect(phone.activeRuns == 501)
        let watch = try await system.watchStatus()
        #expect(watch.workouts == 501 - phone.heldBackRuns && watch.workouts > 0)
        #expect(!system.phonedLog.contains("push not sent"), "\(system.phonedLog.suffix(2000))")
    }

    @Test("the recent window keeps 25 runs when the newest is discarded, and a run leaves it on time")
    func recentWindowNeitherShrinksNorLingers() async throws {
        let system = try SyncSystem("win")
        try await system.startPhoned()
        let split = try await system.createSplit("Pull", ["Row:2x8@50"])
        let template = try await system.phoneRun(try await system.startRun(split))
        _ = try await system.phone("discard", template.id.rawValue)
        #expect(try await system.stopPhoned() == 0)
        try system.generateHistory(like: template, count: 26)
        // One more, ending about 24 h ago: it rides until the window passes it, then must leave alone.
        var ageing = template
        ageing.id = DocumentID(bytes: [UInt8](repeating: 0x11, count: 16))
        ageing.startedAt = Timestamp.current.advanced(by: .seconds(-24 * 3_600 - 600))
        try ageing.endKeepingProgress(at: Timestamp.current.advanced(by: .seconds(-24 * 3_600 + 75)))
        try system.dropDocument(DocumentCoder.encodeForDisk(ageing), at: SyncSystem.workoutPath(ageing))
        try await system.startBoth()

        try await system.waitForWatchStatus("25 recent runs are on the watch") { $0.workouts == 25 }
        let newest = try await system.phonectl("workouts", "--json").decode([WorkoutDocument].self)
            .max { ($0.endedAt!, $0.id) < ($1.endedAt!, $1.id) }!
        #expect(newest.id != ageing.id)
        _ = try await system.phone("discard", newest.id.rawValue)
        try await system.eventually("the discard reached the watch") {
            try await system.watchRun(newest.id.rawValue) == nil
        }
        #expect(try await system.watchStatus().workouts == 25)
        #expect(try await system.phoneStatus().recentRuns == 25)

        // With 25 newer runs the ageing one is not carried; with fewer it would be: take it to 24.
        let listed = try await system.phonectl("workouts", "--json").decode([WorkoutDocument].self)
        _ = try await system.phone("discard", listed.first { $0.id != ageing.id }!.id.rawValue)
        try await system.waitForWatchRun(ageing.id.rawValue, "rides while within 24 h")
        try await system.eventually("the run left the watch when it left the window", timeout: .seconds(180)) {
            try await system.watchRun(ageing.id.rawValue) == nil
        }
        #expect(try await system.watchStatus().workouts == 24)
    }

    @Test("reopen, undo, pause, resume and end work on a run completed days ago, refusals in the model's words")
    func operationsOnOldRuns() async throws {
        let system = try SyncSystem("old")
        try await system.startPhoned()
        let split = try await system.createSplit("Push", ["Bench:3x5@60", "Dip:2x8@0"])
        let runID = try await system.startRun(split)
        _ = try await system.phone("complete", runID, "1", "1")
        let template = try await system.phoneRun(runID)
        _ = try await system.phone("discard", runID)
        #expect(try await system.stopPhoned() == 0)
        var old: [WorkoutDocument] = []
        for index in 0..<3 {
            var run = template
            run.id = DocumentID(bytes: [UInt8](repeating: UInt8(0x21 + index), count: 16))
            run.startedAt = Timestamp.current.advanced(by: .seconds(-3 * 24 * 3_600))
            try run.endKeepingProgress(at: run.startedAt.advanced(by: .seconds(3_600)))
            try system.dropDocument(DocumentCoder.encodeForDisk(run), at: SyncSystem.workoutPath(run))
            old.append(run)
        }
        try await system.startBoth()

        _ = try await system.phone("reopen", old[0].id.rawValue, "2")
        #expect(try await system.phoneRun(old[0].id.rawValue).status == .inProgress)
        try await system.waitForWatchRun(old[0].id.rawValue, "is active on the watch") { $0.status == .inProgress }
        _ = try await system.phone("undo", old[1].id.rawValue, "1", "1")
        #expect(try await system.phoneRun(old[1].id.rawValue).logs[0].sets[0].isDone == false)

        for verb in ["pause", "resume", "end"] {
            let refused = try await system.phonectl(verb, old[2].id.rawValue)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(!refused.standardError.contains("not loaded"), "\(refused)")
            #expect(!refused.standardError.contains("internal"), "\(refused)")
        }
        #expect(try await system.phonectl("pause", old[2].id.rawValue).standardError.contains("completed"))
    }

    @Test("a completed run that left the push while watchd was down ends the session with finish-and-save")
    func completedRunOutOfThePushEndsTheSessionSaved() async throws {
        let system = try SyncSystem("aged")
        try system.writePhonedConfig(["recentRunsLimit": "1"])
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let followed = try await system.startRun(split)
        try await system.waitForWatchStatus("the session follows the run") {
            $0.session == "running" && $0.sessionRun == followed
        }
        _ = try await system.phone("complete", followed, "1", "1")
        try await system.waitForWatchRun(followed, "has set 1.1") { $0.logs[0].sets[0].isDone }
        #expect(try await system.stopWatchd() == 0)

        _ = try await system.phone("end", followed)
        let later = try await system.startRun(split)
        _ = try await system.phone("end", later)
        try await system.startWatchd()
        let watch = try await system.waitForWatchStatus("the session ended") { $0.session != "running" }
        #expect(watch.sessionOutcome == "finishedAndSaved", "\(watch)")
        let saved = try await system.waitForPhoneRun(followed, "has the session's metrics") { $0.metrics != nil }
        #expect(saved.status == .completed)
        #expect(saved.metrics?.setsCompleted == 1)
        try await system.eventually("the run then leaves the watch (recentRunsLimit 1)") {
            try await system.watchRun(followed) == nil
        }
    }

    /// Both daemons, a run whose session runs on the watch, and that run as another device moves it:
    /// its start 40 days back (another month folder), paused.
    private func runAboutToMove(
        _ name: String
    ) async throws -> (system: SyncSystem, runID: String, run: WorkoutDocument, moved: WorkoutDocument) {
        let system = try SyncSystem(name)
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchStatus("the session follows the run") {
            $0.session == "running" && $0.sessionRun == runID
        }
        let run = try await system.phoneRun(runID)
        var moved = run
        moved.startedAt = run.startedAt.advanced(by: .seconds(-40 * 24 * 3_600))
        try moved.pause(at: Timestamp.current)
        return (system, runID, run, moved)
    }

    @Test("a run whose start moves to another month stays on the phone and the watch; its session runs on")
    func runMovingMonthsIsNotPruned() async throws {
        let (system, runID, run, moved) = try await runAboutToMove("month")
        // Another device wrote the moved run to its new folder, then removed the old file.
        try system.dropDocument(DocumentCoder.encodeForDisk(moved), at: SyncSystem.workoutPath(moved))
        try await system.waitForPhoneRun(runID, "is the moved copy") { $0.startedAt == moved.startedAt }
        try FileManager.default.removeItem(atPath: "\(system.documentsDirectory)/\(SyncSystem.workoutPath(run))")
        try await system.eventually("phoned saw the old file go") {
            system.phonedLog.contains("old file of run \(runID)") || system.phonedLog.contains("run \(runID) vanished")
        }
        #expect(try await system.phoneRun(runID) == moved)
        let watch = try await system.watchStatus()
        #expect(watch.session == "running" && watch.sessionRun == runID, "\(watch)")
        #expect(try await system.watchRun(runID) == moved)
    }

    @Test("a run whose old file is removed before its moved file is written is never pruned from the watch")
    func runRemovedBeforeItsMoveIsNotPruned() async throws {
        let (system, runID, run, moved) = try await runAboutToMove("move-late")
        // Another device's sync removes the old file first and writes the run's new month folder a
        // moment later. The new file lands only once phoned has seen the removal and the watch has
        // applied every push phoned sent since (so a push without the run would have reached it),
        // well within SyncEngine.removalGrace (60 s) even on a loaded machine.
        try FileManager.default.removeItem(atPath: "\(system.documentsDirectory)/\(SyncSystem.workoutPath(run))")
        try await system.eventually("phoned saw the file go") { system.phonedLog.contains("run \(runID) vanished") }
        try await system.waitForPhoneStatus("the watch applied every push") {
            $0.contextGenerationAcknowledged == $0.contextGenerationSent
        }
        try system.dropDocument(DocumentCoder.encodeForDisk(moved), at: SyncSystem.workoutPath(moved))
        try await system.waitForPhoneRun(runID, "is the moved copy") { $0.startedAt == moved.startedAt }
        try await system.eventually("the watch holds the moved copy") { try await system.watchRun(runID) == moved }
        let watch = try await system.watchStatus()
        #expect(watch.session == "running" && watch.sessionRun == runID, "\(watch)")
        #expect(
            !system.watchdLog.contains(" 1 pruned, "),
            "the watch pruned the run:\n\(system.watchdLog)\n--- phoned ---\n\(system.phonedLog)")
    }

    @Test("symlinks and FIFOs created while phoned runs are reported; skipped entries clear when fixed or removed")
    func strayEntriesAreReportedAndCleared() async throws {
        let system = try SyncSystem("stray")
        try await system.startPhoned()
        let folder = "\(system.documentsDirectory)/Splits"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let link = UUID().uuidString.uppercased()
        let fifo = UUID().uuidString.uppercased()
        #expect(symlink("/etc/hostname", "\(folder)/\(link).json") == 0)
        #expect(mkfifo("\(folder)/\(fifo).json", 0o600) == 0)
        let reported = try await system.waitForPhoneStatus("both are reported") { $0.skippedFiles.count == 2 }
        #expect(reported.skippedFiles.allSatisfy { $0.contains("not a regular file") }, "\(reported.skippedFiles)")

        // Removed: forgotten. A garbage file later fixed in place: forgotten too. (Garbage over a split
        // the phone holds is put back instead: `brokenSplitIsPutBack`.)
        #expect(unlink("\(folder)/\(link).json") == 0 && unlink("\(folder)/\(fifo).json") == 0)
        try await system.waitForPhoneStatus("removed entries are forgotten") { $0.skippedFiles.isEmpty }
        // A folder where a document belongs, and one the layout has no place for: reported, then
        // forgotten once removed.
        let strayFolder = "\(folder)/\(UUID().uuidString.uppercased()).json"
        let junk = "\(system.documentsDirectory)/Workouts/junk"
        try FileManager.default.createDirectory(atPath: strayFolder, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: junk, withIntermediateDirectories: true)
        try await system.waitForPhoneStatus("both folders are reported") { $0.skippedFiles.count == 2 }
        #expect(rmdir(strayFolder) == 0 && rmdir(junk) == 0)
        try await system.waitForPhoneStatus("removed folders are forgotten") { $0.skippedFiles.isEmpty }
        let stray = SplitDocument(
            id: try #require(DocumentID(UUID().uuidString.uppercased())), name: "Stray",
            exercises: [ExerciseTemplate(name: "Row", equipment: "", targetSets: 1, targetReps: 1, targetWeight: 1)],
            updatedAt: Timestamp(secondsSinceEpoch: 1_780_000_000))
        try system.dropDocument(Array("{not json".utf8), at: "Splits/\(stray.id).json")
        try await system.waitForPhoneStatus("the broken file is reported") { $0.skippedFiles.count == 1 }
        try system.dropDocument(DocumentCoder.encodeForDisk(stray), at: "Splits/\(stray.id).json")
        try await system.waitForPhoneStatus("the fixed file is forgotten") { $0.skippedFiles.isEmpty }
    }

    @Test("a split file broken or made invalid by hand is put back; after a restart the split is on both sides")
    func brokenSplitIsPutBack() async throws {
        let system = try SyncSystem("putback")
        try await system.startBoth()
        let split = try await system.createSplit("Kept", ["Row:3x5@40"])
        let path = "\(system.documentsDirectory)/Splits/\(split).json"
        try await system.eventually("the watch has the split") {
            try await system.watchctl("splits").standardOutput.contains("Kept")
        }
        let good = try DocumentCoder.decode(
            SplitDocument.self, from: Array(Data(contentsOf: URL(fileURLWithPath: path))))
        // Sets out of range (the reader refuses the file), then not JSON at all: each time the
        // phone's copy goes back over it.
        var invalid = try String(contentsOfFile: path, encoding: .utf8)
        invalid = invalid.replacingOccurrences(of: "\"targetSets\" : 3", with: "\"targetSets\" : 0")
        #expect(invalid.contains("\"targetSets\" : 0"), "\(invalid)")
        for broken in [Array(invalid.utf8), Array("{not json".utf8)] {
            try system.dropDocument(broken, at: "Splits/\(split).json")
            try await system.eventually("the phone's copy is back") {
                (try? DocumentCoder.decode(
                    SplitDocument.self, from: Array(Data(contentsOf: URL(fileURLWithPath: path)))))
                    == good
            }
        }
        try await system.waitForPhoneStatus("nothing is left skipped") { $0.skippedFiles.isEmpty }
        #expect(system.phonedLog.contains("edited in place into an invalid split"), "\(system.phonedLog)")

        _ = try await system.stopPhoned()
        try await system.startPhoned()
        try await system.waitUntilLinked()
        #expect(try await system.phonectl("splits").standardOutput.contains("Kept"))
        try await system.eventually("the watch still has the split") {
            try await system.watchctl("splits").standardOutput.contains("Kept")
        }
    }

    @Test("a split file breaking the phone's rules is not taken: a new one is reported, a known one put back")
    func splitFileBreakingRules() async throws {
        let system = try SyncSystem("rules")
        try await system.startPhoned()
        let split = try await system.createSplit("Named", ["Row:3x5@40"])
        let path = "\(system.documentsDirectory)/Splits/\(split).json"
        var known = try DocumentCoder.decode(
            SplitDocument.self, from: Array(Data(contentsOf: URL(fileURLWithPath: path))))
        // A newer copy with a 2,000-byte name: the phone's copy goes back.
        var long = known
        long.name = String(repeating: "n", count: 2_000)
        long.updatedAt = Timestamp(microsecondsSinceEpoch: known.updatedAt.microsecondsSinceEpoch + 1_000_000)
        try system.dropDocument(DocumentCoder.encodeForDisk(long), at: "Splits/\(split).json")
        try await system.eventually("the phone's copy is back") {
            (try? DocumentCoder.decode(SplitDocument.self, from: Array(Data(contentsOf: URL(fileURLWithPath: path)))))
                == known
        }
        // A new split file whose name holds an escape: listed as skipped, not among the splits.
        known.id = try #require(DocumentID(UUID().uuidString.uppercased()))
        known.name = "\u{1B}[31mred"
        try system.dropDocument(DocumentCoder.encodeForDisk(known), at: "Splits/\(known.id).json")
        let status = try await system.waitForPhoneStatus("the new file is skipped") { $0.skippedFiles.count == 1 }
        #expect(status.skippedFiles[0].contains("control characters"), "\(status.skippedFiles)")
        #expect(status.splits == 1)
    }

    @Test("a phone that never linked lists its recent runs in workouts and status")
    func neverLinkedPhoneShowsRecentRuns() async throws {
        let system = try SyncSystem("solo")
        try await system.startPhoned()
        let split = try await system.createSplit("Core", ["Plank:1x1@0"])
        let done = try await system.startRun(split)
        _ = try await system.phone("end", done)
        let active = try await system.startRun(split)
        let listed = try await system.phonectl("workouts", "--json").decode([WorkoutDocument].self)
        #expect(Set(listed.map(\.id.rawValue)) == [done, active])
        let status = try await system.phoneStatus()
        #expect(status.recentRuns == 1 && status.activeRuns == 1, "\(status)")
    }
}

extension SyncSystem {
    /// Writes `count` copies of `template` (new IDs, same month, same state) straight into the
    /// document directory.
    func writeCopies(of template: WorkoutDocument, count: Int) throws {
        for index in 0..<count {
            var copy = template
            var bytes = [UInt8](repeating: 0x6B, count: 16)
            bytes[14] = UInt8(index >> 8 & 0xFF)
            bytes[15] = UInt8(index & 0xFF)
            copy.id = DocumentID(bytes: bytes)
            try dropDocument(DocumentCoder.encodeForDisk(copy), at: Self.workoutPath(copy))
        }
    }
}
