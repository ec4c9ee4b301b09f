import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// The Merge issue's cases against real phoned and watchd processes: concurrent edits on both sides
/// merge per set by hybrid-logical-clock stamp, whatever the watch's clock says, and documents
/// written before stamps are upgraded in place.
@Suite("Merge end to end")
struct MergeEndToEndTests {
    private static let legs = ["Squat:2x5@100:barbell", "Row:1x10@40:cable"]

    private func linkedRun(_ name: String) async throws -> (SyncSystem, String) {
        let system = try SyncSystem(name)
        try await system.startBoth()
        let split = try await system.createSplit("Legs", Self.legs)
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)
        return (system, run)
    }

    /// The watch edits while the phone is away (queued), watchd goes down, the phone edits the same
    /// run, then watchd comes back and the link heals.
    private func concurrently(
        _ system: SyncSystem, watch: [String], phone: [String]
    ) async throws {
        #expect(try await system.stopPhoned() == 0)
        _ = try await system.watchctl(watch).succeeded()
        try await system.waitForQueue(1)
        #expect(try await system.stopWatchd() == 0)
        _ = try await system.startPhoned()
        _ = try await system.phonectl(phone).succeeded()
        _ = try await system.startWatchd()
    }

    /// Waits until both sides hold the same run with nothing undelivered; returns it.
    private func converged(_ system: SyncSystem, _ run: String, where condition: @escaping (WorkoutDocument) -> Bool)
        async throws -> WorkoutDocument
    {
        let phone = try await system.waitForPhoneRun(run, "has merged the watch's edit", where: condition)
        try await system.waitForWatchStatus("the watch's edit is confirmed") {
            $0.undeliveredEdits == 0 && $0.outboxDepth == 0
        }
        let final = try await system.waitForPhoneRun(run, "is settled", where: condition)
        try await system.waitForWatchRun(run, "converged on the phone's copy") { $0 == final }
        #expect(try system.runOnDisk(final) == final)
        _ = phone
        return final
    }

    @Test(
        "(1) phone end while watchd is down with a queued completion of the last set: completed on both sides, with the watch's set"
    )
    func endSurvivesQueuedCompletion() async throws {
        let (system, run) = try await linkedRun("merge-end")
        _ = try await system.phone("complete", run, "1", "1")
        try await system.waitForWatchRun(run, "has set 1.1") { $0.logs[0].sets[0].isDone }
        try await concurrently(system, watch: ["complete", run, "2", "1", "--reps", "9"], phone: ["end", run])
        let final = try await converged(system, run) { $0.logs[1].sets[0].isDone }
        #expect(final.status == .completed)
        #expect(final.logs[1].sets[0].reps == 9)
        #expect(final.logs[0].sets[0].isDone && !final.logs[0].sets[1].isDone)
    }

    @Test("(2) phone completes set 1 while an offline watch completes set 2 of the same exercise: both present")
    func differentSetsBothSurvive() async throws {
        let (system, run) = try await linkedRun("merge-sets")
        try await concurrently(
            system, watch: ["complete", run, "1", "2", "--reps", "7"],
            phone: ["complete", run, "1", "1", "--reps", "4"])
        let final = try await converged(system, run) { $0.logs[0].sets[1].isDone }
        #expect(final.logs[0].sets.map(\.reps) == [4, 7])
        #expect(final.logs[0].resolution == .completed)
        #expect(system.ingestLines.contains { $0.run == run && $0.outcome == "merged" })
    }

    @Test("(3) the same set edited on both sides: the same winner on both, the later stamp")
    func sameSetSameWinner() async throws {
        let (system, run) = try await linkedRun("merge-same")
        try await concurrently(
            system, watch: ["complete", run, "1", "1", "--reps", "7"],
            phone: ["complete", run, "1", "1", "--reps", "4"])
        // The phone edited after the watch in real time, on clocks that agree: its stamp is later.
        let final = try await converged(system, run) { $0.logs[0].sets[0].stamp.origin == .phone }
        #expect(final.logs[0].sets[0].reps == 4)
        #expect(try await system.watchRun(run)?.logs[0].sets[0] == final.logs[0].sets[0])
    }

    @Test("(4) watchd's clock an hour ahead, then an hour behind: no acknowledged edit lost, none resurrected")
    func skewedWatchClock() async throws {
        let system = try SyncSystem("merge-skew")
        try system.writeWatchdConfig(["testClockOffsetSeconds": "3600"])
        try await system.startBoth()
        let split = try await system.createSplit("Legs", ["Squat:3x5@100:barbell", "Row:3x10@40:cable"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        // An hour ahead: the watch's edit is stamped in the future; the phone's later redo of the same
        // set, made after seeing it, still wins, and so does its concurrent edit of another set (a
        // wall-clock or whole-document gate would hand every conflict to the watch for an hour).
        _ = try await system.watch("complete", run, "1", "1", "--reps", "7")
        try await system.waitForPhoneRun(run, "has the watch's set") { $0.logs[0].sets[0].reps == 7 }
        _ = try await system.phone("complete", run, "1", "1", "--reps", "3")
        _ = try await converged(system, run) { $0.logs[0].sets[0].reps == 3 }
        try await concurrently(
            system, watch: ["complete", run, "1", "2", "--reps", "9"],
            phone: ["complete", run, "2", "1", "--reps", "4"])
        var final = try await converged(system, run) { $0.logs[0].sets[1].isDone && $0.logs[1].sets[0].isDone }
        #expect(final.logs[0].sets.map(\.reps) == [3, 9, nil] && final.logs[1].sets[0].reps == 4)

        // An hour behind: the watch's edits are still stamped above what it has seen, so its concurrent
        // edit lands next to the phone's; the set the phone undid does not come back with the watch's
        // older copy of it.
        #expect(try await system.stopWatchd() == 0)
        // watchd persisted its clock's high-water mark, at or above its last edit's stamp.
        let mark = try String(contentsOfFile: "\(system.watchStateDirectory)/clock", encoding: .utf8)
        #expect(
            try #require(Stamp(text: mark.trimmingCharacters(in: .whitespacesAndNewlines)))
                >= final.logs[0].sets[1].stamp)
        try system.writeWatchdConfig(["testClockOffsetSeconds": "-3600"])
        _ = try await system.startWatchd()
        try await system.waitUntilLinked()
        _ = try await system.phone("undo", run, "1", "1")
        try await system.waitForWatchRun(run, "has the undo") { !$0.logs[0].sets[0].isDone }
        try await concurrently(
            system, watch: ["complete", run, "1", "3", "--reps", "8"],
            phone: ["complete", run, "2", "2", "--reps", "6"])
        final = try await converged(system, run) { $0.logs[0].sets[2].isDone && $0.logs[1].sets[1].isDone }
        #expect(final.logs[0].sets.map(\.reps) == [nil, 9, 8])
        #expect(final.logs[1].sets.map(\.reps) == [4, 6, nil])
    }

    @Test(
        "(5) a phone directory written before stamps is read as is, every run intact, and upgraded in place on its next write"
    )
    func upgradesVersion1Directory() async throws {
        let system = try SyncSystem("merge-migrate")
        let split = SplitDocument(
            id: DocumentID(bytes: [UInt8](repeating: 0x31, count: 16)), name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 100),
                ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 1, targetReps: 10, targetWeight: 40),
            ],
            updatedAt: .current)
        let now = Timestamp.current
        func runID(_ n: UInt8) -> DocumentID { DocumentID(bytes: [UInt8](repeating: 0x40, count: 15) + [n]) }
        var inProgress = try WorkoutDocument.start(from: split, id: runID(1), at: now)
        try inProgress.completeSet(
            logID: inProgress.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: now.advanced(by: .seconds(1)))
        var ended = try WorkoutDocument.start(from: split, id: runID(2), at: now)
        try ended.completeSet(
            logID: ended.logs[0].id, setIndex: 1, reps: 6, weight: 90, at: now.advanced(by: .seconds(1)))
        try ended.endKeepingProgress(at: now.advanced(by: .seconds(2)))
        var reopened = try WorkoutDocument.start(from: split, id: runID(3), at: now)
        try reopened.skipLog(logID: reopened.logs[1].id, at: now.advanced(by: .seconds(1)))
        try reopened.reopenLog(logID: reopened.logs[1].id, at: now.advanced(by: .seconds(2)))
        var files: [String: Data] = [:]
        for run in [inProgress, ended, reopened] {
            let path = "\(system.documentsDirectory)/\(SyncSystem.workoutPath(run))"
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            files[path] = try Self.version1(run)
            try files[path]!.write(to: URL(fileURLWithPath: path))
        }

        try await system.startBoth()
        for run in [inProgress, ended, reopened] {
            let migrated = try DocumentCoder.decode(
                WorkoutDocument.self, from: Array(files.first { $0.key.hasSuffix("\(run.id).json") }!.value))
            let onPhone = try await system.phoneRun(run.id.rawValue)
            #expect(onPhone == migrated)
            #expect(onPhone.status == run.status && onPhone.logs.map(\.resolution) == run.logs.map(\.resolution))
            #expect(onPhone.logs.map { $0.sets.map(\.reps) } == run.logs.map { $0.sets.map(\.reps) })
            #expect(onPhone.endedAt == run.endedAt)
            try await system.waitForWatchRun(run.id.rawValue, "arrived migrated") { $0 == migrated }
        }
        // Nothing was rewritten at start-up.
        for (path, bytes) in files { #expect(FileManager.default.contents(atPath: path) == bytes) }

        // The next write upgrades that file, and only that one.
        _ = try await system.phone("complete", inProgress.id.rawValue, "1", "2", "--reps", "4")
        let upgraded = try await system.waitForPhoneRun(inProgress.id.rawValue, "has the new set") {
            $0.logs[0].sets[1].isDone
        }
        #expect(upgraded.logs[0].sets[0].reps == 5)
        let path = "\(system.documentsDirectory)/\(SyncSystem.workoutPath(inProgress))"
        let text = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        #expect(text.contains(#""schemaVersion" : 2"#))
        #expect(try system.runOnDisk(upgraded) == upgraded)
        for (other, bytes) in files where other != path {
            #expect(FileManager.default.contents(atPath: other) == bytes)
        }
    }

    /// The run as a schemaVersion 1 file: the same JSON without any stamp.
    static func version1(_ run: WorkoutDocument) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: Data(DocumentCoder.encodeForDisk(run))) as! [String: Any]
        object["schemaVersion"] = 1
        for key in ["pausesStamp", "metricsStamp", "ending"] { object[key] = nil }
        object["logs"] = (object["logs"] as! [[String: Any]]).map { log in
            var log = log
            log["mark"] = nil
            log["markStamp"] = nil
            log["sets"] = (log["sets"] as! [[String: Any]]).map { set in
                var set = set
                set["stamp"] = nil
                return set
            }
            return log
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}
