import Foundation
import PhoneStore
import SyncEngine
import TestSupport
import Testing
import WorkoutModel

@Suite("DocumentDirectory")
struct DocumentDirectoryTests {
    @Test("creating the directory makes the three top folders and nothing else")
    func createsLayout() throws {
        let fixture = try Fixture()
        #expect(try fixture.tree() == ["Splits", "Stubs", "Workouts"])
        // Opening an existing directory again is fine.
        _ = try DocumentDirectory(root: fixture.documents.root)
    }

    @Test("a file where a top folder belongs is refused, naming it")
    func fileInTheWay() throws {
        let temporary = try TemporaryDirectory("phonestore")
        let root = temporary.appending("Documents")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: "\(root)/Splits", contents: Data()))
        #expect(throws: DocumentStoreError.notAFolder(path: "\(root)/Splits")) {
            try DocumentDirectory(root: root)
        }
    }

    @Test("documents land at their layout paths; runs under the UTC year and month of startedAt")
    func layoutPaths() throws {
        let fixture = try Fixture()
        let lateJanuary = try #require(Timestamp(iso8601: "2026-01-31T23:30:00Z"))
        let newYear = try #require(Timestamp(iso8601: "2027-01-01T00:00:00Z"))
        try fixture.documents.write(split(1))
        try fixture.documents.write(run(2, startedAt: lateJanuary))
        try fixture.documents.write(run(3, startedAt: newYear))
        try fixture.documents.write(stub(4))
        #expect(
            try fixture.tree() == [
                "Splits", "Splits/\(id(1)).json",
                "Stubs", "Stubs/\(id(4)).json",
                "Workouts", "Workouts/2026", "Workouts/2026/01", "Workouts/2026/01/\(id(2)).json",
                "Workouts/2027", "Workouts/2027/01", "Workouts/2027/01/\(id(3)).json",
            ])
        #expect(
            fixture.documents.path(ofWorkout: id(2), startedAt: lateJanuary)
                == fixture.path("Workouts/2026/01/\(id(2)).json"))
        // The bytes are the coder's disk form, so they decode back to the same value.
        let bytes = try #require(FileManager.default.contents(atPath: fixture.path("Splits/\(id(1)).json")))
        #expect(Array(bytes) == DocumentCoder.encodeForDisk(split(1)))
    }

    @Test("write then scan gives back every document of all three kinds")
    func roundTrip() throws {
        let fixture = try Fixture()
        let march = try #require(Timestamp(iso8601: "2025-03-15T08:00:00Z"))
        let written: [SyncEngine.ScannedDocument] = [
            .split(split(1)), .split(split(2, name: "Push")), .workout(run(3)), .workout(run(4, startedAt: march)),
            .tombstone(stub(5)), .tombstone(stub(6, kind: .split)),
        ]
        for document in written {
            switch document {
            case .split(let split): try fixture.documents.write(split)
            case .workout(let run): try fixture.documents.write(run)
            case .tombstone(let stub): try fixture.documents.write(stub)
            }
        }
        let (visited, report) = try fixture.scan()
        #expect(visited.count == written.count)
        #expect(Set(visited.map(\.key)) == Set(written.map(\.key)))
        for document in written { #expect(visited.contains(document)) }
        #expect(report.splitCount == 2 && report.workoutCount == 2 && report.tombstoneCount == 2)
        #expect(report.skippedCount == 0 && report.skipped.isEmpty)
        // Tombstones come first, then splits, then runs by month.
        #expect(visited.map(\.kind) == [.tombstone, .tombstone, .split, .split, .workout, .workout])
        #expect(visited.last == .workout(run(3)))
    }

    @Test("rewriting a document replaces it whole")
    func overwrite() throws {
        let fixture = try Fixture()
        try fixture.documents.write(run(3))
        let later = run(3, updatedAt: t0.advanced(by: .seconds(5)))
        try fixture.documents.write(later)
        #expect(try fixture.documents.loadWorkout(id: id(3), startedAt: t0) == later)
        #expect(try fixture.scan().documents == [.workout(later)])
    }

    @Test("removing a run or a split unlinks its file; an absent one is fine")
    func removal() throws {
        let fixture = try Fixture()
        try fixture.documents.write(split(1))
        try fixture.documents.write(run(2))
        #expect(try fixture.documents.removeWorkout(id: id(2), startedAt: t0))
        #expect(try fixture.documents.removeSplit(id: id(1)))
        #expect(try fixture.documents.removeWorkout(id: id(2), startedAt: t0) == false)
        #expect(try fixture.documents.removeSplit(id: id(1)) == false)
        // Its month folder never existed: still absent, not an error.
        #expect(
            try fixture.documents.removeWorkout(id: id(9), startedAt: Timestamp(iso8601: "2001-05-01T00:00:00Z")!)
                == false)
        #expect(try fixture.scan().documents.isEmpty)
        #expect(!fixture.exists("Workouts/2026/11/\(id(2)).json"))
    }

    @Test("loading a run: found, absent, or unusable with the reason")
    func load() throws {
        let fixture = try Fixture()
        try fixture.documents.write(run(2))
        #expect(try fixture.documents.loadWorkout(id: id(2), startedAt: t0) == run(2))
        let absent = fixture.documents.path(ofWorkout: id(3), startedAt: t0)
        #expect(throws: DocumentStoreError.notFound(path: absent)) {
            try fixture.documents.loadWorkout(id: id(3), startedAt: t0)
        }
        try fixture.plantFile("Workouts/2026/11/\(id(3)).json", DocumentCoder.encodeForDisk(run(4)))
        #expect(throws: DocumentStoreError.unusable(path: absent, .idMismatch(fileName: id(3), document: id(4)))) {
            try fixture.documents.loadWorkout(id: id(3), startedAt: t0)
        }
    }

    @Test("a write that cannot land fails naming the document's path")
    func writeFailureNamesPath() throws {
        let fixture = try Fixture()
        // A file where the year folder belongs: the month folder cannot be created below it.
        try fixture.plantFile("Workouts/2026", "not a folder")
        let error = try #require(throws: DocumentStoreError.self) { try fixture.documents.write(run(2)) }
        #expect(error.description.contains(fixture.path("Workouts/2026")))
    }
}

extension SyncEngine.ScannedDocument {
    enum Kind: Equatable { case split, workout, tombstone }

    var kind: Kind {
        switch self {
        case .split: return .split
        case .workout: return .workout
        case .tombstone: return .tombstone
        }
    }

    var key: String {
        switch self {
        case .split(let split): return "split \(split.id)"
        case .workout(let run): return "run \(run.id)"
        case .tombstone(let stub): return "stub \(stub.id)"
        }
    }
}
