import Foundation
import TestSupport
import Testing
import WatchEngine
import WatchStore
import WorkoutModel

@Suite("The watch's plain-file cache")
struct WatchCacheDirectoryTests {
    private let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!
    private let splitID = DocumentID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
    private let runID = DocumentID("3F2504E0-4F89-11D3-9A0C-0305E82C3302")!

    private func split() -> SplitDocument {
        SplitDocument(
            id: splitID, name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 80)
            ],
            updatedAt: t0)
    }

    @Test("a file where the cache or one of its folders belongs refuses the start, naming it")
    func fileInTheWay() throws {
        let directory = try TemporaryDirectory("cache")
        let file = directory.appending("cache")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            _ = try WatchCacheDirectory(root: file)
        } throws: { error in
            "\(error)" == "\(file) is in the way of the cache: it is not a folder"
        }
        let root = directory.appending("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(root)/Splits"))
        #expect {
            _ = try WatchCacheDirectory(root: root)
        } throws: { error in
            "\(error)".hasPrefix("\(root)/Splits is in the way")
        }
    }

    @Test("documents and the session record round-trip through plain files")
    func roundTrip() throws {
        let directory = try TemporaryDirectory("watch-cache")
        let cache = try WatchCacheDirectory(root: directory.path)
        let run = try WorkoutDocument.start(from: split(), id: runID, at: t0)
        let session = SessionRecord(
            .running(RunningSession(runID: runID, startedAt: t0, origin: .phoneLaunch, runSeen: true)))
        try cache.write(run)
        try cache.write(split())
        try cache.write(session)
        let reopened = try WatchCacheDirectory(root: directory.path).load()
        #expect(reopened.workouts == [run])
        #expect(reopened.splits == [split()])
        #expect(reopened.session == session)
        #expect(reopened.skipped.isEmpty)
        try cache.removeWorkout(runID)
        try cache.removeWorkout(runID)
        #expect(try cache.load().workouts.isEmpty)
    }

    @Test("an unreadable file is reported and left in place; leftover temp files are swept")
    func badFiles() throws {
        let directory = try TemporaryDirectory("watch-cache")
        let cache = try WatchCacheDirectory(root: directory.path)
        try cache.write(try WorkoutDocument.start(from: split(), id: runID, at: t0))
        let garbage = directory.appending("Workouts/3F2504E0-4F89-11D3-9A0C-0305E82C3303.json")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: garbage))
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.appending("Workouts/.stale.json.tmp-abcd")))
        let contents = try WatchCacheDirectory(root: directory.path).load()
        #expect(contents.workouts.map(\.id) == [runID])
        #expect(contents.skipped.map(\.path) == [garbage])
        #expect(FileManager.default.fileExists(atPath: garbage))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("Workouts/.stale.json.tmp-abcd")))
    }
}
