import Foundation
import TestSupport
import Testing
import WorkoutModel

/// A run the watch cannot send in one message or transfer stays undelivered for good: its edit fails
/// both ways with `payloadTooLarge`. So no split may make one, however it is made.
@Suite("A split whose runs could outgrow one watch update")
struct RunSizeEndToEndTests {
    /// 14 exercises of 100 sets: a run of it took 73,436 bytes after one edit on the watch.
    static let bigExercises = (1...14).map { "Lift \($0):100x5@100:barbell" }

    @Test("is refused by split create and split edit, naming the limit, and nothing changes")
    func refusedByTheCLI() async throws {
        let system = try SyncSystem("runsize")
        try await system.startPhoned()
        let created = try await system.phonectl(
            ["split", "create", "--name", "Everything"] + Self.bigExercises.flatMap { ["-e", $0] })
        #expect(created.exitCode == 1, "\(created)")
        #expect(created.standardError.contains("65,536 bytes"), "\(created)")
        #expect(created.standardError.contains("one watch update"), "\(created)")
        #expect(try await system.phoneStatus().splits == 0)

        let split = try await system.createSplit("Small", ["Row:3x5@40"])
        let edited = try await system.phonectl(["split", "edit", split] + Self.bigExercises.flatMap { ["-e", $0] })
        #expect(edited.exitCode == 1 && edited.standardError.contains("65,536 bytes"), "\(edited)")
        let splits = try await system.phonectl("splits").succeeded().standardOutput
        #expect(splits.contains("Small") && splits.contains("Row"), "\(splits)")
    }

    @Test("as a split file, dropped in while phoned runs or found at start-up, is skipped with the reason")
    func refusedAsAFile() async throws {
        let system = try SyncSystem("runsizefile")
        try await system.startPhoned()
        let exercises = (1...14).map { index in
            ExerciseTemplate(
                name: "Lift \(index)", equipment: "barbell", targetSets: 100, targetReps: 5, targetWeight: 100)
        }
        let id = try #require(DocumentID(UUID().uuidString.uppercased()))
        let big = SplitDocument(
            id: id, name: "Everything", exercises: exercises, updatedAt: Timestamp(microsecondsSinceEpoch: 1))
        try system.dropDocument(DocumentCoder.encodeForDisk(big), at: "Splits/\(id).json")
        let watched = try await system.waitForPhoneStatus("the file is skipped") { $0.skippedFiles.count == 1 }
        #expect(watched.skippedFiles[0].contains("Splits/\(id).json"), "\(watched.skippedFiles)")
        #expect(watched.skippedFiles[0].contains("65,536 bytes"), "\(watched.skippedFiles)")
        #expect(watched.splits == 0)

        #expect(try await system.stopPhoned() == 0)
        try await system.startPhoned()
        let scanned = try await system.phoneStatus()
        #expect(scanned.skippedFiles.count == 1 && scanned.skippedFiles[0].contains("65,536 bytes"), "\(scanned)")
        #expect(scanned.splits == 0)
        #expect(try await system.phonectl("start", id.rawValue).exitCode == 1, "a run of it cannot be started")
    }
}
