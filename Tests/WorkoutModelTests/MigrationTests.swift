import Foundation
import Testing
import WorkoutModel

@Suite("Schema version 1 documents are migrated on read")
struct MigrationTests {
    /// A run as phoned wrote it before stamps: log 1 reopened after completion, log 2 skipped, ended earlier.
    static let version1 = #"""
        {"currentStateIndex":0,"endedAt":null,"id":"ABABABAB-ABAB-ABAB-ABAB-77AB00000064",
         "logs":[
          {"equipment":"barbell","exerciseName":"Squat","id":"ABABABAB-ABAB-ABAB-ABAB-77AB00000000","resolution":"inProgress",
           "sets":[{"completedAt":"2026-11-29T12:00:01.000000Z","reps":5,"weight":100},
                   {"completedAt":"2026-11-29T12:00:02.000000Z","reps":5,"weight":100}],
           "targetReps":5,"targetWeight":100},
          {"equipment":"cable","exerciseName":"Row","id":"ABABABAB-ABAB-ABAB-ABAB-77AB00000001","resolution":"skipped",
           "sets":[{}],"targetReps":10,"targetWeight":40}],
         "metrics":null,"pauses":[{"end":"2026-11-29T12:00:04.000000Z","start":"2026-11-29T12:00:03.000000Z"}],
         "schemaVersion":1,"splitID":"ABABABAB-ABAB-ABAB-ABAB-77AB00000001","splitName":"Legs & Back",
         "startedAt":"2026-11-29T12:00:00.000000Z","status":"inProgress","updatedAt":"2026-11-29T12:00:09.000000Z"}
        """#

    @Test("every field is kept and stamped from updatedAt; the status is what version 1 said")
    func migrates() throws {
        let run = try DocumentCoder.decode(WorkoutDocument.self, from: Array(Self.version1.utf8))
        let stamp = Stamp(time: at(9), counter: 0, origin: .phone)
        #expect(run.schemaVersion == 2)
        #expect(run.status == .inProgress)
        #expect(run.logs.map(\.resolution) == [.inProgress, .skipped])
        #expect(run.logs.map(\.mark) == [.reopened, .skipped])
        #expect(run.logs[0].sets.map(\.reps) == [5, 5])
        #expect(run.logs.flatMap(\.sets).allSatisfy { $0.stamp == stamp })
        #expect(run.pauses == [PauseInterval(start: at(3), end: at(4))])
        #expect([run.pausesStamp, run.metricsStamp, run.ending.stamp] == [stamp, stamp, stamp])
        #expect(run.updatedAt == at(9))
        // Written back (the run's next write) as version 2 with its stamps, and read back unchanged.
        let rewritten = DocumentCoder.encodeForDisk(run)
        #expect(String(decoding: rewritten, as: UTF8.self).contains(#""schemaVersion" : 2"#))
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: rewritten) == run)
    }

    @Test("a version-2 document without its stamps is refused, naming the missing one")
    func version2NeedsStamps() throws {
        let text = Self.version1.replacingOccurrences(of: #""schemaVersion":1"#, with: #""schemaVersion":2"#)
        #expect(throws: DocumentError.self) {
            try DocumentCoder.decode(WorkoutDocument.self, from: Array(text.utf8))
        }
    }
}
