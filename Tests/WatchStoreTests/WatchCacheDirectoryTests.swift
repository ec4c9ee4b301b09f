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
        try cache.put(run)
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
        try cache.put(try WorkoutDocument.start(from: split(), id: runID, at: t0))
        let garbage = directory.appending("Workouts/3F2504E0-4F89-11D3-9A0C-0305E82C3303.json")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: garbage))
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.appending("Workouts/.stale.json.tmp-abcd")))
        let contents = try WatchCacheDirectory(root: directory.path).load()
        #expect(contents.workouts.map(\.id) == [runID])
        #expect(contents.skipped.map(\.path) == [garbage])
        #expect(FileManager.default.fileExists(atPath: garbage))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("Workouts/.stale.json.tmp-abcd")))
    }

    private func run(_ number: Int) throws -> WorkoutDocument {
        let id = DocumentID(String(format: "3F2504E0-4F89-11D3-9A0C-0305E82C%04X", 0x4000 + number))!
        return try WorkoutDocument.start(
            from: split(), id: id, at: Stamp(time: t0.advanced(by: .seconds(number)), origin: .watch))
    }

    @Test("a write is durable before its file changes: publish replaces the file once, a start if it never came")
    func writeThenPublish() throws {
        let directory = try TemporaryDirectory("watch-cache")
        let cache = try WatchCacheDirectory(root: directory.path)
        let first = try run(1)
        var edited = first
        try edited.completeSet(
            logID: edited.logs[0].id, setIndex: 0, reps: 5, weight: 80,
            at: Stamp(time: t0.advanced(by: .seconds(5)), origin: .watch))
        let file = directory.appending("Workouts/\(first.id).json")
        try cache.put(first)
        let published = try Data(contentsOf: URL(fileURLWithPath: file))
        try cache.write(edited)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == published)
        cache.publish(edited.id)
        #expect(
            try DocumentCoder.decode(WorkoutDocument.self, from: Array(Data(contentsOf: URL(fileURLWithPath: file))))
                == edited)
        // Nothing new since: a second publish leaves a file changed by someone else alone.
        try published.write(to: URL(fileURLWithPath: file))
        cache.publish(edited.id)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == published)
        // Written, never published (watchd killed between the two): the start puts the file back.
        try cache.write(first)
        try cache.write(edited)
        #expect(try WatchCacheDirectory(root: directory.path).load().workouts == [edited])
    }

    @Test("a removed run leaves the pending record first: a start never brings it back")
    func removedStaysRemoved() throws {
        let directory = try TemporaryDirectory("watch-cache")
        let cache = try WatchCacheDirectory(root: directory.path)
        let kept = try run(1)
        let removed = try run(2)
        try cache.put(kept)
        try cache.put(removed)
        try cache.removeWorkout(removed.id)
        #expect(try WatchCacheDirectory(root: directory.path).load().workouts == [kept])
    }

    @Test("a damaged pending record is reported, the files read as they are, and the next write replaces it")
    func damagedPendingRecord() throws {
        let directory = try TemporaryDirectory("watch-cache")
        let first = try run(1)
        try WatchCacheDirectory(root: directory.path).put(first)
        let record = directory.appending(".pending-runs")
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: record))
        let cache = try WatchCacheDirectory(root: directory.path)
        let contents = try cache.load()
        #expect(contents.workouts == [first])
        #expect(contents.skipped.map(\.path) == [record])
        let second = try run(2)
        try cache.put(second)
        let reopened = try WatchCacheDirectory(root: directory.path).load()
        #expect(Set(reopened.workouts.map(\.id)) == [first.id, second.id])
        #expect(reopened.skipped.isEmpty)
    }
}

extension WatchCacheDirectory {
    /// A run written and its file published, as watchd does for an edit.
    fileprivate func put(_ run: WorkoutDocument) throws {
        try write(run)
        publish(run.id)
    }
}
