import Foundation
import Glibc
import LinkProtocol
import Nodes
import Synchronization
import TestSupport
import Testing
import WorkoutModel

/// phoned against a real watch-side peer (watchd): the intake of workout updates, the tombstone veto,
/// external files, garbage files and crash safety of the document directory.
@Suite("phoned end to end")
struct PhonedTests {
    @Test(
        "a workout update by message and by userInfo is written to Workouts/YYYY/MM/<id>.json and echoed in the next context"
    )
    func updateByMessageAndByUserInfo() async throws {
        let system = try SyncSystem("upd")
        try await system.startBoth()
        let split = try await system.createSplit("Push", ["Bench:3x5@60:barbell", "Dip:2x8@0"])
        let runID = try await system.startRun(split)
        try await system.waitForWatchRun(runID)

        // By message: the phone is reachable, so the edit goes as sendMessage.
        let generationBefore = try await system.watchStatus().contextGenerationApplied
        let edited = try await system.watch("complete", runID, "1", "1", "--reps", "4", "--weight", "62.5")
        #expect(edited.contains("inProgress"), "\(edited)")
        let byMessage = try await system.waitForPhoneRun(runID, "has set 1.1 from the watch") {
            $0.logs[0].sets[0].reps == 4
        }
        #expect(byMessage.logs[0].sets[0].weight == 62.5)
        #expect(byMessage.status == .inProgress)
        #expect(try system.runOnDisk(byMessage) == byMessage, "the live file is the phone's copy")
        #expect(system.filesNamed(runID) == [SyncSystem.workoutPath(byMessage)])
        #expect(system.ingestLines.contains { $0.run == runID && $0.via == "message" && $0.outcome == "merged" })
        // The echo: a newer context carries the phone's copy; the watch's edit is confirmed by it.
        let echoed = try await system.waitForWatchStatus("the edit is confirmed by a newer context") {
            $0.undeliveredEdits == 0 && $0.contextGenerationApplied > generationBefore
        }
        #expect(try await system.watchRun(runID) == byMessage)
        #expect(echoed.outboxDepth == 0, "nothing went by userInfo")

        // By userInfo: with phoned down the edit is queued durably; it lands once phoned is back.
        #expect(try await system.stopPhoned() == 0)
        try await system.waitForWatchStatus("the phone is unreachable") { !$0.reachable }
        _ = try await system.watch("complete", runID, "1", "2", "--reps", "5")
        try await system.waitForQueue(1)
        #expect(try await system.watchStatus().undeliveredEdits == 1)
        let generationOffline = try await system.watchStatus().contextGenerationApplied
        try await system.startPhoned()
        let byUserInfo = try await system.waitForPhoneRun(runID, "has set 1.2 from the queued transfer") {
            $0.logs[0].sets[1].isDone
        }
        #expect(byUserInfo.logs[0].sets[0] == byMessage.logs[0].sets[0], "the first edit is kept")
        #expect(try system.runOnDisk(byUserInfo) == byUserInfo)
        #expect(system.ingestLines.contains { $0.run == runID && $0.via == "userInfo" && $0.outcome == "merged" })
        try await system.waitForWatchStatus("the queued edit is acknowledged and echoed") {
            $0.outboxDepth == 0 && $0.undeliveredEdits == 0 && $0.contextGenerationApplied > generationOffline
        }
        #expect(try await system.queue().isEmpty)
        #expect(try await system.watchRun(runID) == byUserInfo)
        // Each update was ingested once, across both phoned instances (counters are per process).
        let ingested = system.ingestLines.filter { $0.run == runID }
        #expect(ingested.map(\.outcome) == ["merged", "merged"], "\(ingested)")
        #expect(ingested.map(\.via) == ["message", "userInfo"], "\(ingested)")
        #expect(ingested.map(\.version) == [byMessage.version.description, byUserInfo.version.description])
    }

    @Test("a split file restored next to its own stub is removed at start-up, as a run's live file is")
    func splitNextToItsStub() async throws {
        let system = try SyncSystem("splitstub")
        try await system.startPhoned()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let file = "Splits/\(split).json"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(system.documentsDirectory)/\(file)"))
        _ = try await system.phone("split", "delete", split)
        try await system.stopPhoned()
        // Another device syncs the old file back in while phoned is down.
        try system.dropDocument(Array(bytes), at: file)
        try await system.startPhoned()
        #expect(system.filesNamed(split) == ["Stubs/\(split).json"])
        // The line is phoned's to flush: waited for, not read at once.
        try await system.eventually("phoned logged the removal") {
            system.phonedLog.contains("removed split file of tombstoned split \(split)")
        }
        #expect(try await system.phone("splits") == "no splits")
    }

    @Test("status.lastPushAt moves only when the link takes a push, never for one it refused")
    func lastPushAtOnlyForTakenPushes() async throws {
        let system = try SyncSystem("lastpush")
        try await system.startBoth()
        let split = try await system.createSplit("Everything", (1...20).map { "Lift\($0):5x5@100" })
        let run = try await system.phoneRun(try await system.startRun(split))
        let generation = try await system.phoneStatus().contextGenerationSent
        try await system.stopWatchd()
        try await system.stopPhoned()
        // Enough active copies that the whole state is over the 262,144-byte context limit.
        for _ in 0...(262_144 / DocumentCoder.encodeCompact(run).count) {
            var copy = run
            copy.id = try #require(DocumentID(UUID().uuidString))
            try system.dropDocument(DocumentCoder.encodeForDisk(copy), at: SyncSystem.workoutPath(copy))
        }
        try await system.startPhoned()
        var status = try await system.phoneStatus()
        try await system.eventually("phoned's push at start-up was taken or refused") {
            status = try await system.phoneStatus()
            return status.contextGenerationSent > generation || system.phoned!.standardError.contains("push not sent")
        }
        if status.contextGenerationSent == generation {
            #expect(status.lastPushAt == nil, "a refused push set lastPushAt: \(status)")
        } else {
            #expect(status.lastPushAt != nil, "\(status)")
        }
    }

    @Test("a stale copy of a discarded run is vetoed; the run never reappears on disk or on the watch")
    func staleCopyOfDiscardedRunIsVetoed() async throws {
        let system = try SyncSystem("veto")
        try await system.startBoth()
        let split = try await system.createSplit("Pull", ["Row:3x8@50"])
        let runID = try await system.startRun(split)
        let keeper = try await system.startRun(split)
        let run = try await system.phoneRun(runID)
        try await system.waitForWatchStatus("both runs are on the watch, the session running") {
            $0.workouts == 2 && $0.session == "running"
        }

        // The watch edits the run while the phone is away: the update waits in the outbox.
        try await system.stopPhoned()
        try await system.waitForWatchStatus("the phone is unreachable") { !$0.reachable }
        _ = try await system.watch("complete", runID, "1", "1")
        _ = try await system.watch("complete", runID, "1", "2")
        try await system.waitForQueue(2)
        try await system.killWatchd()

        // Meanwhile the phone discards the run (S7): stub written, live file gone.
        try await system.startPhoned()
        #expect(try await system.phone("discard", runID) == "ok")
        #expect(system.filesNamed(runID) == ["Stubs/\(runID).json"])

        // The watch comes back with its stale copies (the queued ones and its cold-launch re-forward).
        try await system.startWatchd()
        let vetoed = try await system.waitForPhoneStatus("the stale copies were vetoed") {
            $0.ingested("vetoedTombstoned") >= 2
        }
        #expect(vetoed.ingested("merged") == 0, "\(vetoed.ingest)")
        // The session covers the active list (seed 001): it goes on for the run still active.
        try await system.waitForWatchStatus("the watch dropped the run; its session goes on for the other") {
            $0.outboxDepth == 0 && $0.workouts == 1 && $0.session == "running" && $0.sessionRun == keeper
        }
        #expect(try await system.watchRun(runID) == nil)
        #expect(try await system.watchRun(keeper) != nil)

        // Never resurrected: not on disk, not on the phone, not after a restart and a forced push.
        #expect(system.filesNamed(runID) == ["Stubs/\(runID).json"])
        #expect(try system.runOnDisk(run) == nil)
        let shown = try await system.phonectl("show", runID)
        #expect(shown.exitCode == 1 && shown.standardError.contains("deleted"), "\(shown)")
        try await system.stopPhoned()
        try await system.startPhoned()
        try await system.waitUntilLinked()
        let generation = try await system.watchStatus().contextGenerationApplied
        _ = try await system.phone("push")
        try await system.waitForWatchStatus("the forced push is applied") { $0.contextGenerationApplied > generation }
        #expect(system.filesNamed(runID) == ["Stubs/\(runID).json"])
        #expect(try await system.watchRun(runID) == nil)
        let after = try await system.phoneStatus()
        #expect(after.tombstones == 1 && after.activeRuns == 1, "\(after)")
        #expect(after.ingested("merged") == 0, "\(after.ingest)")
        #expect(!system.ingestLines.contains { $0.run == runID && $0.outcome == "merged" })
    }

    @Test(
        "an external file dropped into the directory reaches the watch in the next context; garbage is reported, not fatal"
    )
    func externalAndGarbageFiles() async throws {
        let system = try SyncSystem("ext")
        // Garbage present at start-up: reported by the initial gather, which still loads the rest.
        let docs = system.documentsDirectory
        try FileManager.default.createDirectory(atPath: "\(docs)/Splits", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(docs)/Workouts/misc", withIntermediateDirectories: true)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: "\(docs)/.DS_Store"))
        try Data("not a split".utf8).write(to: URL(fileURLWithPath: "\(docs)/Splits/notes.txt"))
        let early = SplitDocument(
            id: try #require(DocumentID("0A0A0A0A-0000-4000-8000-00000000000A")), name: "Early",
            exercises: [ExerciseTemplate(name: "Curl", equipment: "", targetSets: 2, targetReps: 10, targetWeight: 12)],
            updatedAt: .init(microsecondsSinceEpoch: 1_700_000_000_000_000))
        try system.dropDocument(DocumentCoder.encodeForDisk(early), at: "Splits/\(early.id).json")
        try await system.startBoth()
        let atStart = try await system.phoneStatus()
        #expect(atStart.splits == 1)
        for path in [".DS_Store", "Splits/notes.txt", "Workouts/misc"] {
            #expect(atStart.skippedFiles.contains { $0.hasPrefix(path + ":") }, "\(path) in \(atStart.skippedFiles)")
        }
        try await system.waitForWatchStatus("the early split is on the watch") { $0.splits == 1 }

        // A split and a run written by someone else while phoned runs.
        let dropped = SplitDocument(
            id: try #require(DocumentID("0B0B0B0B-0000-4000-8000-00000000000B")), name: "Dropped",
            exercises: [
                ExerciseTemplate(name: "Press", equipment: "dumbbell", targetSets: 3, targetReps: 8, targetWeight: 20)
            ],
            updatedAt: Self.now)
        try system.dropDocument(DocumentCoder.encodeForDisk(dropped), at: "Splits/\(dropped.id).json")
        let runID = try #require(DocumentID("0C0C0C0C-0000-4000-8000-00000000000C"))
        let external = try WorkoutDocument.start(from: dropped, id: runID, at: Self.now)
        try system.dropDocument(DocumentCoder.encodeForDisk(external), at: SyncSystem.workoutPath(external))
        try await system.waitForWatchStatus("the dropped split and run are on the watch") {
            $0.splits == 2 && $0.workouts == 1
        }
        let splits = try await system.watch("splits")
        #expect(splits.contains("Dropped") && splits.contains("Early"), "\(splits)")
        #expect(try await system.watchRun(runID.rawValue) == external)

        // Garbage appearing at run time: every one reported, phoned keeps serving.
        let garbageID = "0D0D0D0D-0000-4000-8000-00000000000D"
        try system.dropDocument(Array("{\"schemaVersion\": 1, \"nope\": true".utf8), at: "Splits/\(garbageID).json")
        try system.dropDocument(Array("{\"schemaVersion\": 99}".utf8), at: "Stubs/\(garbageID).json")
        try system.dropDocument(Array("hello".utf8), at: "Splits/lowercase-\(garbageID.lowercased()).json")
        var mismatched = dropped
        mismatched.id = try #require(DocumentID("0E0E0E0E-0000-4000-8000-00000000000E"))
        try system.dropDocument(DocumentCoder.encodeForDisk(mismatched), at: "Splits/\(garbageID.dropLast(1))F.json")
        let reported = try await system.waitForPhoneStatus("the run-time garbage is reported") { status in
            [
                "Splits/\(garbageID).json", "Stubs/\(garbageID).json", "Splits/\(garbageID.dropLast(1))F.json",
                "Splits/lowercase-",
            ].allSatisfy {
                path in status.skippedFiles.contains { $0.hasPrefix(path) }
            }
        }
        #expect(reported.splits == 2 && reported.activeRuns == 1, "garbage changed nothing: \(reported)")
        #expect(system.phoned?.isRunning == true)
        // Still working: an operation goes through and reaches the watch.
        _ = try await system.phone("complete", runID.rawValue, "1", "1")
        try await system.waitForWatchRun(runID.rawValue, "has set 1.1 done") { $0.logs[0].sets[0].isDone }
        #expect(try await system.watchStatus().splits == 2)
        // Garbage is never deleted: the directory is the person's.
        #expect(FileManager.default.fileExists(atPath: "\(docs)/Splits/\(garbageID).json"))
        #expect(FileManager.default.fileExists(atPath: "\(docs)/.DS_Store"))
    }

    @Test(
        "another device's run file, made from an older copy, loses none of the phone's sets: file, phone and watch agree"
    )
    func staleExternalRunCopy() async throws {
        let system = try SyncSystem("stale-ext")
        try await system.startBoth()
        // Three sets, so the run stays open (a finished session would add its metrics meanwhile).
        let runID = try await system.startRun(try await system.createSplit("Legs", ["Squat:3x5@100"]))
        let older = try await system.waitForPhoneRun(runID, "exists") { _ in true }
        _ = try await system.phone("complete", runID, "1", "1", "--reps", "5")
        // Another device that has not seen set 1 completes set 2, a second later by its clock, and
        // writes its copy over the phone's file.
        var theirs = older
        try theirs.completeSet(
            logID: older.logs[0].id, setIndex: 1, reps: 3, weight: 90,
            at: Stamp(time: Self.now.advanced(by: .seconds(1)), origin: .phone))
        try system.dropDocument(DocumentCoder.encodeForDisk(theirs), at: SyncSystem.workoutPath(theirs))

        let both: (WorkoutDocument) -> Bool = { $0.logs[0].sets.map(\.reps) == [5, 3, nil] }
        let phone = try await system.waitForPhoneRun(runID, "holds both sets", where: both)
        try await system.eventually("the watch and the file hold the phone's copy") {
            try await system.watchRun(runID) == phone && system.runOnDisk(theirs) == phone
        }
    }

    @Test(
        "a run's or split's file edited by hand, its stamps kept, is taken as a new edit: phone, watch and file agree"
    )
    func runEditedByHand() async throws {
        let system = try SyncSystem("by-hand")
        try await system.startBoth()
        let splitID = try await system.createSplit("Legs", ["Squat:3x5@100"])
        let runID = try await system.startRun(splitID)
        _ = try await system.phone("complete", runID, "1", "1", "--reps", "5")
        let before = try await system.waitForPhoneRun(runID, "has set 1") { $0.logs[0].sets[0].reps == 5 }
        try await system.waitForWatchRun(runID, "has set 1") { $0.logs[0].sets[0].reps == 5 }
        // A person opens the file in an editor and makes it 3 reps; the stamps stay as they were.
        var edited = before
        edited.logs[0].sets[0].reps = 3
        try system.dropDocument(DocumentCoder.encodeForDisk(edited), at: SyncSystem.workoutPath(edited))

        let taken = try await system.waitForPhoneRun(runID, "took the edit") { $0.logs[0].sets[0].reps == 3 }
        #expect(taken.logs[0].sets[0].stamp > before.logs[0].sets[0].stamp)
        try await system.eventually("the watch and the file hold the phone's copy") {
            try await system.watchRun(runID) == taken && system.runOnDisk(taken) == taken
        }
        // The phone's next write keeps it (it used to write its older copy back over the edit).
        _ = try await system.phone("complete", runID, "1", "2")
        let after = try await system.waitForPhoneRun(runID, "has set 2") { $0.logs[0].sets[1].isDone }
        #expect(after.logs[0].sets[0].reps == 3)

        // The split renamed by hand, its updatedAt kept: the phone and the watch take the new name.
        let splitPath = "Splits/\(splitID).json"
        let splitBytes = try #require(FileManager.default.contents(atPath: "\(system.documentsDirectory)/\(splitPath)"))
        var split = try DocumentCoder.decode(SplitDocument.self, from: Array(splitBytes))
        split.name = "Leg day"
        try system.dropDocument(DocumentCoder.encodeForDisk(split), at: splitPath)
        try await system.eventually("phone and watch list the new name") {
            let (phone, watch) = (try await system.phone("splits"), try await system.watch("splits"))
            return phone.contains("Leg day") && watch.contains("Leg day")
        }
    }

    @Test("kill -9 during a burst of writes leaves only whole, parseable documents and no temp files after restart")
    func killDuringWriteBurst() async throws {
        let system = try SyncSystem("kill")
        try await system.startPhoned()
        let exercises = (1...8).map { "Ex\($0):8x5@\($0 * 10)" }
        let split = try await system.createSplit("Burst", exercises)
        let runs = [try await system.startRun(split), try await system.startRun(split)]

        // Four writers hammer phoned (sets on two runs, new splits) while the test kills it mid-burst.
        let acknowledged = Acknowledged()
        let writers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for step in 0..<64 {
                            let result: CommandResult
                            if writer < 2 {
                                let (exercise, set) = (step / 8 + 1, step % 8 + 1)
                                result = try await system.phonectl("complete", runs[writer], "\(exercise)", "\(set)")
                                if result.exitCode == 0 { acknowledged.add("\(writer) \(exercise) \(set)") }
                            } else {
                                result = try await system.phonectl(
                                    "split", "create", "--name", "S\(writer)-\(step)", "-e", "A:1x1@1")
                                if result.exitCode == 0 { acknowledged.add("split \(result.trimmedOutput)") }
                            }
                            if result.exitCode == 69 { return }  // phoned is gone
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // Mid-burst is what matters, not how far: a full parallel test run spawns phonectl slowly, so a
        // dozen acknowledged writes (of 256) is enough, with a longer guard.
        try await system.eventually("the burst is under way", timeout: .seconds(120)) { acknowledged.count >= 12 }
        #expect(try await system.killPhoned() == SIGKILL)
        try await writers.value
        let done = acknowledged.all

        // A leftover of an interrupted write, as a crash mid-write would leave it.
        let month = SyncSystem.workoutPath(try Self.anyRunOnDisk(system)).split(separator: "/").dropLast().joined(
            separator: "/")
        try Data("{\"schemaVersion\":1,\"id\":".utf8).write(
            to: URL(fileURLWithPath: "\(system.documentsDirectory)/\(month)/.\(runs[0]).json.tmp-0123abcd"))

        try await system.startPhoned()
        let status = try await system.phoneStatus()
        #expect(status.skippedFiles.isEmpty, "\(status.skippedFiles)")
        let files = system.documentFiles()
        #expect(
            !files.contains {
                $0.contains(".tmp-")
                    || ($0 != ".phone-epoch.json" && URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("."))
            },
            "\(files)")
        for file in files {
            let bytes = Array(
                try #require(FileManager.default.contents(atPath: "\(system.documentsDirectory)/\(file)")))
            if file.hasPrefix("Splits/") {
                #expect(throws: Never.self, "\(file)") { try DocumentCoder.decode(SplitDocument.self, from: bytes) }
            } else if file.hasPrefix("Workouts/") {
                #expect(throws: Never.self, "\(file)") { try DocumentCoder.decode(WorkoutDocument.self, from: bytes) }
            } else if file == ".phone-epoch.json" {
                #expect(throws: Never.self, "\(file)") { try DocumentCoder.decode(PhoneEpochRecord.self, from: bytes) }
            } else {
                Issue.record("unexpected file \(file)")
            }
        }
        // Every write phoned acknowledged before the kill is on disk.
        let splitFiles = Set(files.filter { $0.hasPrefix("Splits/") })
        #expect(status.splits == splitFiles.count)
        for entry in done {
            let words = entry.split(separator: " ").map(String.init)
            if words[0] == "split" {
                #expect(splitFiles.contains("Splits/\(words[1]).json"), "acknowledged split \(words[1]) is on disk")
            } else {
                let (writer, exercise, set) = (Int(words[0])!, Int(words[1])!, Int(words[2])!)
                let run = try await system.phoneRun(runs[writer])
                #expect(try system.runOnDisk(run) == run)
                #expect(run.logs[exercise - 1].sets[set - 1].isDone, "acknowledged \(entry) is on disk")
            }
        }
    }

    private static var now: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }

    private static func anyRunOnDisk(_ system: SyncSystem) throws -> WorkoutDocument {
        // Not a temporary file the kill left behind (`.<id>.json.tmp-…`, swept only at restart).
        let file = try #require(
            system.documentFiles().first { $0.hasPrefix("Workouts/") && $0.hasSuffix(".json") && !$0.contains("/.") })
        let bytes = Array(try #require(FileManager.default.contents(atPath: "\(system.documentsDirectory)/\(file)")))
        return try DocumentCoder.decode(WorkoutDocument.self, from: bytes)
    }
}

/// What the writers saw acknowledged (exit 0), shared between their tasks.
final class Acknowledged: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var count: Int { entries.withLock { $0.count } }
    var all: [String] { entries.withLock { $0 } }
}
