import Foundation
import LinkProtocol
import PhoneStore
import SyncEngine
import TestSupport
import Testing
import WorkoutModel

/// An engine fed as phoned feeds it at start-up: every document the scan visits, the summaries it
/// reuses, then `gatherFinished`; loads the engine asks for are read from the directory and fed back.
private struct Gathered {
    var engine = SyncEngine(settings: nil)
    var actions: [SyncEngine.Action] = []
    var report = ScanReport()

    /// A start without a run index: the plain scan.
    init(fullScanOf documents: DocumentDirectory) throws {
        let engine = Box(self.engine)
        report = try documents.scan { _ = engine.value.handle(.documentScanned($0, now: t0)) }
        self.engine = engine.value
        try finish(documents)
    }

    /// A start reusing `previous`; `scan` is what the indexed scan found.
    init(indexedScanOf documents: DocumentDirectory, reusing previous: RunIndexSnapshot?) throws {
        let engine = Box(self.engine)
        settle()
        scan = try documents.scan(
            reusing: previous, settlingTime: settlingTime, { _ = engine.value.handle(.documentScanned($0, now: t0)) },
            recorded: { _ = engine.value.handle(.runTableScanned($0, now: t0)) })
        self.engine = engine.value
        report = scan!.report
        try finish(documents)
    }

    var scan: IndexedScan?

    private mutating func finish(_ documents: DocumentDirectory) throws {
        for action in engine.handle(.gatherFinished(now: t0)) {
            guard case .loadRuns(let wanted) = action else {
                actions.append(action)
                continue
            }
            let runs = try wanted.map { try documents.loadWorkout(id: $0.key, startedAt: $0.value) }
            actions += engine.handle(.runsLoaded(runs, unreadable: [], now: t0))
        }
    }

    /// What a restart must reproduce exactly, whichever way it read the directory.
    func expectSameState(as full: Gathered, _ comment: Comment? = nil) {
        #expect(engine.index == full.engine.index, comment)
        #expect(engine.splits == full.engine.splits, comment)
        #expect(engine.tombstones == full.engine.tombstones, comment)
        #expect(engine.clock.last == full.engine.clock.last, comment)
        for id in full.engine.index.activeIDs { #expect(engine.run(id) == full.engine.run(id), comment) }
        #expect(actions == full.actions, comment)
        #expect(report.description == full.report.description, comment)
        #expect(
            report.skipped.map(\.description).sorted() == full.report.skipped.map(\.description).sorted(), comment)
    }
}

/// How long a folder must have been unchanged to be recorded, in these tests (phoned: 2 s).
private let settlingTime: Duration = .milliseconds(30)

/// Waits until what was just written has settled, so the next scan records its folders.
private func settle() { usleep(40_000) }

/// Lets a scan's visitor closure feed the engine it fills.
private final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A run in the month of `month` (1-based, 2025–2026), completed or active.
private func storedRun(_ n: Int, month: Int, completed: Bool, edit: Int = 0) throws -> WorkoutDocument {
    let year = 2025 + (month - 1) / 12
    let start = Timestamp(iso8601: "\(year)-\(String(format: "%02d", (month - 1) % 12 + 1))-10T08:00:00Z")!
    var document = run(n, startedAt: start)
    let logID = document.logs[0].id
    for set in 0..<(completed ? 3 : 1) {
        try document.completeSet(
            logID: logID, setIndex: set, reps: 5 + edit, weight: 100,
            at: Stamp(time: start.advanced(by: .seconds(60 * (set + 1) + edit)), origin: .phone))
    }
    return document
}

@Suite("Run index")
struct RunIndexTests {
    /// A directory of one run, its first indexed scan, and where the index file goes.
    private func scannedOnce() throws -> (fixture: Fixture, scan: IndexedScan, path: String) {
        let fixture = try Fixture()
        try fixture.documents.write(storedRun(1, month: 3, completed: true))
        settle()
        let scan = try fixture.documents.scan(
            reusing: nil, settlingTime: settlingTime, { _ in }, recorded: { _ in })
        return (fixture, scan, fixture.temporary.appending(RunIndexFile.name))
    }

    @Test("the index file round-trips, and a missing one is no index")
    func fileRoundTrip() throws {
        let (fixture, scan, path) = try scannedOnce()
        #expect(try RunIndexFile.read(at: path, root: fixture.documents.root) == nil)
        try RunIndexFile.write(scan.snapshot, to: path)
        #expect(try RunIndexFile.read(at: path, root: fixture.documents.root) == scan.snapshot)
        #expect(scan.snapshot.runCount == 1)
    }

    @Test("after the gather the index is written and read back for the node to take; a failed write is noted")
    func writtenIndexIsTakenBack() throws {
        let (fixture, scan, path) = try scannedOnce()
        defer { withExtendedLifetime(fixture) {} }
        guard case .runTableWritten(let table) = RunIndexFile.writeAfterGather(scan.snapshot, to: path) else {
            Issue.record("the written index was not read back")
            return
        }
        #expect(table.entryCount == 1)
        var index = RunIndex()
        index.install(table)
        #expect(index[id(1)]?.id == id(1))
        guard
            case .runIndexNoted(let note, rebuilt: true) = RunIndexFile.writeAfterGather(
                scan.snapshot, to: "\(path)/no/such/folder")
        else {
            Issue.record("a failed write was not noted")
            return
        }
        #expect(note.hasPrefix("not written"))
    }

    @Test("a damaged, truncated or foreign index file is refused with a reason, so it is rebuilt")
    func damagedFileIsRefused() throws {
        let (fixture, scan, path) = try scannedOnce()
        try RunIndexFile.write(scan.snapshot, to: path)
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        var flipped = good
        flipped[good.count / 2] ^= 0x20
        let cases: [([UInt8], String)] = [
            (flipped, "checksum mismatch"), (Array(good.dropLast(3)), "the trailer says"),
            (Array(good.prefix(5)), "bad magic"),
            (Array("not an index at all, just text".utf8), "bad magic"),
        ]
        for (bytes, reason) in cases {
            try writePlainFile(path, bytes)
            let error = #expect(throws: RunIndexFileError.self) {
                try RunIndexFile.read(at: path, root: fixture.documents.root)
            }
            #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "no error")")
        }
        try RunIndexFile.write(scan.snapshot, to: path)
        #expect(throws: RunIndexFileError.self) { try RunIndexFile.read(at: path, root: "/another/Documents") }
    }

    @Test("only the month folder that changed since the index was recorded is decoded again")
    func staleFolderIsRefreshed() throws {
        let fixture = try Fixture()
        for n in 1...6 { try fixture.documents.write(storedRun(n, month: n % 3 + 1, completed: true)) }
        settle()
        let first = try fixture.documents.scan(
            reusing: nil, settlingTime: settlingTime, { _ in }, recorded: { _ in })
        #expect(first.decodedFolders == ["Workouts/2025/01", "Workouts/2025/02", "Workouts/2025/03"])
        #expect(first.reusedFolders.isEmpty)

        try fixture.documents.write(storedRun(7, month: 2, completed: false))
        var visited: [SyncEngine.ScannedDocument] = []
        var summarized: [RunIndex.RunSummary] = []
        var tables = 0
        settle()
        let second = try fixture.documents.scan(
            reusing: first.snapshot, settlingTime: settlingTime, { visited.append($0) },
            recorded: { table in
                tables += 1
                var index = RunIndex()
                index.install(table)
                index.forEachSummary { summarized.append($0) }
            })
        #expect(tables == 1)
        #expect(second.decodedFolders == ["Workouts/2025/02"])
        #expect(second.reusedFolders == ["Workouts/2025/01", "Workouts/2025/03"])
        let decodedRuns = visited.compactMap { document -> DocumentID? in
            if case .workout(let run) = document { return run.id }
            return nil
        }
        #expect(Set(decodedRuns) == [id(1), id(4), id(7)])
        #expect(Set(summarized.map(\.id)) == [id(2), id(3), id(5), id(6)])
        #expect(second.report.workoutCount == 7)
        #expect(second.snapshot.folders["Workouts/2025/02"]?.runs().count == 3)
        #expect(
            second.snapshot.folders["Workouts/2025/02"]?.fingerprint
                != first.snapshot.folders["Workouts/2025/02"]?.fingerprint)

        let third = try fixture.documents.scan(
            reusing: second.snapshot, settlingTime: settlingTime, { _ in }, recorded: { _ in })
        #expect(third.decodedFolders.isEmpty)
        #expect(third.snapshot == second.snapshot)
    }

    @Test("runs edited, added, removed or tombstoned while phoned was down are seen as a full scan sees them")
    func changesWhileDownAreSeen() throws {
        let fixture = try Fixture()
        try fixture.documents.write(split(1))
        for n in 10...15 { try fixture.documents.write(storedRun(n, month: 5, completed: n != 15)) }
        try fixture.plantFile("Workouts/2025/05/notes.txt", "kept, reported")
        let recorded = try Gathered(indexedScanOf: fixture.documents, reusing: nil).scan!.snapshot

        // Edited in place by someone else, same size, modification time set back: the change time
        // still tells.
        let edited = try storedRun(10, month: 5, completed: true, edit: 1)
        let editedPath = fixture.documents.path(ofWorkout: id(10), startedAt: edited.startedAt)
        let before = try FileManager.default.attributesOfItem(atPath: editedPath)[.modificationDate] as! Date
        try writePlainFile(editedPath, DocumentCoder.encodeForDisk(edited))
        try FileManager.default.setAttributes([.modificationDate: before], ofItemAtPath: editedPath)
        try fixture.documents.write(storedRun(16, month: 5, completed: false))  // added
        _ = try fixture.documents.removeWorkout(
            id: id(11), startedAt: storedRun(11, month: 5, completed: true).startedAt)
        try fixture.documents.write(Tombstone(id: id(12), kind: .workout, deletedAt: t0))  // tombstoned, file left

        let restarted = try Gathered(indexedScanOf: fixture.documents, reusing: recorded)
        let full = try Gathered(fullScanOf: fixture.documents)
        restarted.expectSameState(as: full)
        #expect(restarted.engine.index[id(10)]?.version == edited.version)
        #expect(restarted.engine.index[id(11)] == nil)
        #expect(restarted.engine.index[id(12)] == nil)
        #expect(restarted.engine.index.activeIDs == [id(15), id(16)])
        #expect(restarted.actions.contains(.removeWorkoutFile(id(12), startedAt: edited.startedAt)))
        #expect(restarted.report.skipped.map(\.path) == ["Workouts/2025/05/notes.txt"])
    }

    @Test("a folder changed just before the scan is decoded but not recorded, so an unseen rewrite cannot hide")
    func unsettledFolderIsNotRecorded() throws {
        let fixture = try Fixture()
        let original = try storedRun(1, month: 4, completed: true)
        try fixture.documents.write(original)
        let first = try fixture.documents.scan(reusing: nil, { _ in }, recorded: { _ in })
        #expect(first.decodedFolders == ["Workouts/2025/04"])
        #expect(first.snapshot.folders.isEmpty)
        // Rewritten in place at once, same size: whatever its times say, the next start reads it.
        let edited = try storedRun(1, month: 4, completed: true, edit: 1)
        try writePlainFile(
            fixture.documents.path(ofWorkout: id(1), startedAt: edited.startedAt), DocumentCoder.encodeForDisk(edited))
        var visited: [SyncEngine.ScannedDocument] = []
        let second = try fixture.documents.scan(reusing: first.snapshot, { visited.append($0) }, recorded: { _ in })
        #expect(second.decodedFolders == ["Workouts/2025/04"])
        #expect(visited == [.workout(edited)])
    }

    @Test("restart with the index ≡ full scan, over seeded random histories of changes made while down")
    func restartWithIndexEqualsFullScan() throws {
        var reused = 0
        var decoded = 0
        for seed in UInt64(1)...12 {
            var random = SplitMix64(seed: seed)
            let fixture = try Fixture()
            try fixture.documents.write(split(1))
            var live: [Int: WorkoutDocument] = [:]
            var next = 100
            var snapshot: RunIndexSnapshot?
            for restart in 0..<6 {
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let choice = Int.random(in: 0..<10, using: &random)
                    switch choice {
                    case 0...2:  // a new run, maybe in a month folder that did not exist
                        let document = try storedRun(
                            next, month: Int.random(in: 1...8, using: &random), completed: Bool.random(using: &random))
                        try fixture.documents.write(document)
                        live[next] = document
                        next += 1
                    case 3, 4:  // an edit (another device's sync, or phoned itself before it stopped)
                        guard let n = live.keys.sorted().randomElement(using: &random) else { continue }
                        let edited = try storedRun(
                            n,
                            month: live[n]!.startedAt.yearAndMonth.month + 12
                                * (live[n]!.startedAt.yearAndMonth.year - 2025),
                            completed: Bool.random(using: &random), edit: Int.random(in: 1...3, using: &random))
                        try writePlainFile(
                            fixture.documents.path(ofWorkout: id(n), startedAt: edited.startedAt),
                            DocumentCoder.encodeForDisk(edited))
                        live[n] = edited
                    case 5:  // an external delete without a stub
                        guard let n = live.keys.sorted().randomElement(using: &random) else { continue }
                        _ = try fixture.documents.removeWorkout(id: id(n), startedAt: live[n]!.startedAt)
                        live[n] = nil
                    case 6:  // a tombstone landing from another device, the live file still there
                        guard let n = live.keys.sorted().randomElement(using: &random) else { continue }
                        try fixture.documents.write(Tombstone(id: id(n), kind: .workout, deletedAt: t0))
                        live[n] = nil
                    case 7:  // a stray or a file this build cannot read
                        let month = Int.random(in: 1...8, using: &random)
                        let folder =
                            "Workouts/\(2025 + (month - 1) / 12)/\(String(format: "%02d", (month - 1) % 12 + 1))"
                        try FileManager.default.createDirectory(
                            atPath: fixture.path(folder), withIntermediateDirectories: true)
                        try fixture.plantFile("\(folder)/\(id(next)).json", "{ not a run")
                        next += 1
                    case 8:  // the index itself lost or damaged
                        snapshot = Bool.random(using: &random) ? nil : RunIndexSnapshot(root: fixture.documents.root)
                    default:  // nothing changed
                        break
                    }
                }
                let comment: Comment = "seed \(seed), restart \(restart)"
                let restarted = try Gathered(indexedScanOf: fixture.documents, reusing: snapshot)
                let full = try Gathered(fullScanOf: fixture.documents)
                restarted.expectSameState(as: full, comment)
                // phoned carries out the gather's removals (live files of tombstoned runs) and records
                // the index for the next start.
                for case .removeWorkoutFile(let id, let startedAt) in restarted.actions {
                    _ = try fixture.documents.removeWorkout(id: id, startedAt: startedAt)
                }
                snapshot = restarted.scan!.snapshot
                reused += restarted.scan!.reusedFolders.count
                decoded += restarted.scan!.decodedFolders.count
            }
        }
        // The histories exercise both paths, not only one.
        #expect(reused > 50 && decoded > 50, "\(reused) folders reused, \(decoded) decoded")
    }
}
