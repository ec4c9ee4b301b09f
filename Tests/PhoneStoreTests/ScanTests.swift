import Foundation
import PhoneStore
import SyncEngine
import TestSupport
import Testing
import WorkoutModel

@Suite("DocumentDirectory.scan")
struct ScanTests {
    @Test("garbage is skipped, listed with its relative path and reason, and kept; good documents are still visited")
    func garbageIsReportedAndKept() throws {
        let fixture = try Fixture()
        try fixture.documents.write(split(1))
        try fixture.documents.write(run(2))
        try fixture.documents.write(stub(3))

        let version99 = String(decoding: DocumentCoder.encodeForDisk(run(6)), as: UTF8.self)
            .replacingOccurrences(of: "\"schemaVersion\" : 2", with: "\"schemaVersion\" : 99")
        #expect(version99.contains("99"))
        let garbage: [(String, SkipReason?)] = [
            ("Splits/\(id(5)).json", nil),  // not JSON: the reason is the coder's, checked below
            (
                "Workouts/2026/11/\(id(6)).json",
                .undecodable(.unsupportedSchemaVersion(type: "WorkoutDocument", found: 99, supported: 2))
            ),
            ("Splits/\(id(7)).json", .idMismatch(fileName: id(7), document: id(8))),
            ("Splits/notes.txt", .unexpectedName),
            ("Splits/.DS_Store", .unexpectedName),
            ("Splits/\(id(9).rawValue.lowercased()).json", .unexpectedName),
            ("notes.txt", .unexpectedFile),
            ("Workouts/2026/stray.json", .unexpectedFile),
            ("Workouts/2026/10/\(id(10)).json", .misfiled(belongsIn: "Workouts/2026/11")),
            ("Stubs/\(id(11)).json", nil),  // a split where a tombstone belongs: fails to decode as one
        ]
        try fixture.plantFile("Splits/\(id(5)).json", "this is not JSON")
        try fixture.plantFile("Workouts/2026/11/\(id(6)).json", version99)
        try fixture.plantFile("Splits/\(id(7)).json", DocumentCoder.encodeForDisk(split(8)))
        try fixture.plantFile("Splits/notes.txt", "shopping list")
        try fixture.plantFile("Splits/.DS_Store", [0, 0, 0, 1])
        try fixture.plantFile("Splits/\(id(9).rawValue.lowercased()).json", DocumentCoder.encodeForDisk(split(9)))
        try fixture.plantFile("notes.txt", "hello")
        try fixture.plantFile("Workouts/2026/stray.json", "{}")
        try FileManager.default.createDirectory(
            atPath: fixture.path("Workouts/2026/10"), withIntermediateDirectories: true)
        try fixture.plantFile("Workouts/2026/10/\(id(10)).json", DocumentCoder.encodeForDisk(run(10)))
        try fixture.plantFile("Stubs/\(id(11)).json", DocumentCoder.encodeForDisk(split(11)))
        let folders = ["Workouts/misc", "Workouts/2026/13", "Splits/Archive", ".Trash"]
        for folder in folders {
            try FileManager.default.createDirectory(atPath: fixture.path(folder), withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(
            atPath: fixture.path("Splits/\(id(12)).json"), withDestinationPath: "/etc/passwd")
        let before = try fixture.tree()

        let (visited, report) = try fixture.scan()

        #expect(visited.count == 3)
        for document in [SyncEngine.ScannedDocument.split(split(1)), .workout(run(2)), .tombstone(stub(3))] {
            #expect(visited.contains(document))
        }
        let reasons = Dictionary(uniqueKeysWithValues: report.skipped.map { ($0.path, $0.reason) })
        for (path, expected) in garbage {
            let reason = try #require(reasons[path], "\(path) should be reported")
            if let expected { #expect(reason == expected, "\(path)") }
        }
        for folder in folders { #expect(reasons[folder] == .unexpectedFolder, "\(folder)") }
        #expect(reasons["Splits/\(id(12)).json"] == .notARegularFile)
        guard case .undecodable(.notJSON(type: "SplitDocument", _)) = reasons["Splits/\(id(5)).json"] else {
            Issue.record("not-JSON file reported as \(String(describing: reasons["Splits/\(id(5)).json"]))")
            return
        }
        guard case .undecodable(.malformed(type: "Tombstone", _, _)) = reasons["Stubs/\(id(11)).json"] else {
            Issue.record("split in Stubs reported as \(String(describing: reasons["Stubs/\(id(11)).json"]))")
            return
        }
        #expect(report.skippedCount == garbage.count + folders.count + 1)
        #expect(report.skipped.count == report.skippedCount)
        // The reason reads as the coder's description, with the path alongside.
        let unsupported = try #require(report.skipped.first { $0.path.hasSuffix("\(id(6)).json") })
        #expect(
            unsupported.description
                == "Workouts/2026/11/\(id(6)).json: WorkoutDocument: unsupported schemaVersion 99 (this build reads version 2)"
        )
        // Nothing was deleted or changed.
        #expect(try fixture.tree() == before)
    }

    @Test("leftover temporary files of interrupted writes are swept before listing; other hidden files stay")
    func sweepsTemporaryFiles() throws {
        let fixture = try Fixture()
        try fixture.documents.write(run(2))
        try fixture.plantFile("Splits/.\(id(1)).json.tmp-1f2e3d", "{ half a docu")
        try fixture.plantFile("Workouts/2026/11/.\(id(2)).json.tmp-abc", "{")
        try fixture.plantFile("Stubs/.keep", "")

        let (visited, report) = try fixture.scan()

        #expect(visited == [.workout(run(2))])
        #expect(report.sweptTemporaryFiles == 2)
        #expect(report.skipped == [SkippedEntry(path: "Stubs/.keep", reason: .unexpectedName)])
        #expect(!fixture.exists("Splits/.\(id(1)).json.tmp-1f2e3d"))
        #expect(!fixture.exists("Workouts/2026/11/.\(id(2)).json.tmp-abc"))
        #expect(fixture.exists("Stubs/.keep"))
    }

    @Test("only the first maximumListedSkips skipped entries are listed, all are counted")
    func skippedListIsCapped() throws {
        let fixture = try Fixture()
        let count = ScanReport.maximumListedSkips + 5
        for index in 0..<count { try fixture.plantFile("Splits/junk-\(index).txt", "") }
        let (_, report) = try fixture.scan()
        #expect(report.skippedCount == count)
        #expect(report.skipped.count == ScanReport.maximumListedSkips)
    }

    @Test("a layout folder that cannot be listed fails the scan, naming it")
    func unlistableFolderThrows() throws {
        let fixture = try Fixture()
        try FileManager.default.removeItem(atPath: fixture.path("Stubs"))
        #expect(throws: DocumentStoreError.self) { try fixture.scan() }
        let error = try #require(throws: DocumentStoreError.self) { try fixture.scan() }
        guard case .listFailed(let path, _) = error else {
            Issue.record("expected listFailed, got \(error)")
            return
        }
        #expect(path == fixture.path("Stubs"))
    }

    @Test("a scan of 10,000 run files across many months visits every one")
    func tenThousandRuns() throws {
        let fixture = try Fixture()
        let count = 10_000
        var expected = Set<DocumentID>()
        var folders = Set<String>()
        for index in 0..<count {
            // One run every 90 minutes: about 21 months of folders.
            let document = run(100 + index, startedAt: t0.advanced(by: .seconds(index * 5_400)))
            let path = fixture.documents.path(ofWorkout: document.id, startedAt: document.startedAt)
            let folder = String(path[..<path.lastIndex(of: "/")!])
            if folders.insert(folder).inserted {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try writePlainFile(path, DocumentCoder.encodeForDisk(document))
            expected.insert(document.id)
        }
        #expect(folders.count > 12)

        var visited = Set<DocumentID>()
        var visits = 0
        let clock = ContinuousClock()
        let started = clock.now
        let report = try fixture.documents.scan { document in
            visits += 1
            if case .workout(let run) = document { visited.insert(run.id) }
        }
        print("scanned \(count) run files in \(clock.now - started)")

        #expect(visits == count)
        #expect(visited == expected)
        #expect(report.workoutCount == count)
        #expect(report.skippedCount == 0)
    }

    @Test("progress is reported at most every interval, with entries scanned so far and seconds elapsed")
    func progressEveryInterval() throws {
        let fixture = try Fixture()
        for n in 1...5 { try fixture.documents.write(split(n)) }
        for n in 6...10 { try fixture.documents.write(run(n)) }
        try fixture.plantFile("Splits/notes.txt", "skipped, but scanned")
        // A fake clock one second further on each reading: readings 1…11 follow the start (0),
        // one per entry.
        var clock = -1.0
        var reports: [(scanned: Int, elapsed: Double)] = []
        let progress = ScanProgress(
            every: 3,
            now: {
                clock += 1
                return clock
            },
            report: { reports.append(($0, $1)) })
        var visited = 0
        let report = try fixture.documents.scan(progress: progress) { _ in visited += 1 }
        #expect(visited == 10 && report.skippedCount == 1)
        #expect(clock == 11)
        #expect(reports.map(\.scanned) == [3, 6, 9])
        #expect(reports.map(\.elapsed) == [3, 6, 9])
        #expect(ScanProgress.rate(scanned: 9, elapsedSeconds: 3) == 3)
        #expect(ScanProgress.rate(scanned: 9, elapsedSeconds: 0) == 0)
    }

    @Test("a scan shorter than the interval reports no progress")
    func noProgressWhenQuick() throws {
        let fixture = try Fixture()
        for n in 1...3 { try fixture.documents.write(split(n)) }
        var reports = 0
        let start = ScanProgress.monotonicSeconds()
        _ = try fixture.documents.scan(progress: ScanProgress(every: 3_600) { _, _ in reports += 1 }) { _ in }
        #expect(reports == 0)
        #expect(ScanProgress.monotonicSeconds() >= start)
    }
}
