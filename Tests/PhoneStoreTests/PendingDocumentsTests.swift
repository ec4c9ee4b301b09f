import Foundation
import PhoneStore
import SyncEngine
import TestSupport
import Testing
import WorkoutModel

/// phoned's runs kept pending (`<state>/pending-documents`): durable at the write, the file at the
/// publish, put back by the next open when a crash came between.
@Suite("DocumentDirectory with runs kept pending")
struct PendingDocumentsTests {
    struct Pending {
        let temporary: TemporaryDirectory
        var root: String { temporary.appending("Documents") }
        var record: String { temporary.appending("pending-documents") }
        init() throws { temporary = try TemporaryDirectory("pending-documents") }
        func open() throws -> DocumentDirectory { try DocumentDirectory(root: root, pendingRecord: record) }
        func file(_ run: WorkoutDocument) -> String {
            "\(root)/\(DocumentFolder.month(of: run.startedAt).relativePath)/\(run.id.rawValue).json"
        }
    }

    @Test("the write needs no month folder; the publish makes it, writes the file and notes it as its own")
    func publishMakesTheFolder() throws {
        let pending = try Pending()
        let documents = try pending.open()
        let first = run(1)
        try documents.write(first)
        #expect(!FileManager.default.fileExists(atPath: "\(pending.root)/Workouts/2026"))
        #expect(try documents.loadWorkout(id: first.id, startedAt: first.startedAt) == first)
        documents.publish(workout: first.id, startedAt: first.startedAt)
        let bytes = try #require(FileManager.default.contents(atPath: pending.file(first)))
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: Array(bytes)) == first)
        #expect(documents.ownWrites.matches(pending.file(first), Array(bytes)))
    }

    @Test("a run written but never published (phoned killed between) is back, folder and all, at the next open")
    func putBackAtOpen() throws {
        let pending = try Pending()
        let documents = try pending.open()
        let first = run(1)
        let edited = run(1, updatedAt: t0.advanced(by: .seconds(5)))
        let other = run(2, startedAt: try #require(Timestamp(iso8601: "2025-03-01T10:00:00Z")))
        try documents.write(first)
        documents.publish(workout: first.id, startedAt: first.startedAt)
        try documents.write(edited)
        try documents.write(other)
        let reopened = try pending.open()
        #expect(try reopened.loadWorkout(id: first.id, startedAt: first.startedAt) == edited)
        #expect(try reopened.loadWorkout(id: other.id, startedAt: other.startedAt) == other)
        #expect(reopened.pendingDamage == nil)
    }

    @Test("a removed run does not come back; a run another writer changed after its publish keeps their change")
    func removalsAndOthersChanges() throws {
        let pending = try Pending()
        let documents = try pending.open()
        let first = run(1)
        let second = run(2)
        try documents.write(first)
        documents.publish(workout: first.id, startedAt: first.startedAt)
        try documents.write(second)
        documents.publish(workout: second.id, startedAt: second.startedAt)
        #expect(try documents.removeWorkout(id: first.id, startedAt: first.startedAt))
        let theirs = run(2, updatedAt: t0.advanced(by: .seconds(60)))
        try Data(DocumentCoder.encodeForDisk(theirs)).write(to: URL(fileURLWithPath: pending.file(second)))
        let reopened = try pending.open()
        #expect(!FileManager.default.fileExists(atPath: pending.file(first)))
        #expect(try reopened.loadWorkout(id: second.id, startedAt: second.startedAt) == theirs)
    }
}
