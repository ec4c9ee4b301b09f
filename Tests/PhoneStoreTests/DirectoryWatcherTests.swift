import Foundation
import Glibc
import PhoneStore
import SyncEngine
import TestSupport
import Testing
import WorkoutModel

/// One report from the watcher, whichever handler it came through.
enum Observed: Equatable, Sendable {
    case change(SyncEngine.ExternalChange)
    case skipped(SkippedEntry)
    case notice(WatcherNotice)
}

/// Starts a watcher on the fixture's directory that records everything it reports.
func watch(_ fixture: Fixture) throws -> (DirectoryWatcher, Recorder<Observed>) {
    let recorder = Recorder<Observed>()
    let watcher = try DirectoryWatcher(
        directory: fixture.documents,
        onChange: { recorder.record(.change($0)) },
        onSkipped: { recorder.record(.skipped($0)) },
        onNotice: { recorder.record(.notice($0)) })
    return (watcher, recorder)
}

extension Recorder where Value == Observed {
    /// Waits until `expected` has been reported (and returns everything reported so far).
    @discardableResult
    func wait(for expected: Observed) async throws -> [Observed] {
        try await wait(for: "\(expected)") { $0.contains(expected) }
    }
}

// Serialized: the descriptor check in `stopEndsTheThread` must not see another test's inotify
// descriptor reuse the number.
@Suite("DirectoryWatcher", .serialized)
struct DirectoryWatcherTests {
    @Test("a run written as a plain file is reported as changed")
    func plainFileAdded() async throws {
        let fixture = try Fixture()
        try FileManager.default.createDirectory(
            atPath: fixture.path("Workouts/2026/11"), withIntermediateDirectories: true)
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        try fixture.plantFile("Workouts/2026/11/\(id(2)).json", DocumentCoder.encodeForDisk(run(2)))
        try await recorder.wait(for: .change(.documentChanged(.workout(run(2)))))
    }

    @Test("a run renamed into place is reported once it lands; the temporary file is ignored")
    func renamedIntoPlace() async throws {
        let fixture = try Fixture()
        try fixture.documents.write(run(1))
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        let temporary = "Workouts/2026/11/.\(id(2)).json.tmp-42"
        try fixture.plantFile(temporary, DocumentCoder.encodeForDisk(run(2)))
        #expect(rename(fixture.path(temporary), fixture.path("Workouts/2026/11/\(id(2)).json")) == 0)
        let seen = try await recorder.wait(for: .change(.documentChanged(.workout(run(2)))))
        #expect(!seen.contains { if case .skipped = $0 { return true } else { return false } })
    }

    @Test("a changed run is reported with its new contents, and its removal as workoutRemoved")
    func changedThenRemoved() async throws {
        let fixture = try Fixture()
        try fixture.documents.write(run(2))
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        let edited = run(2, updatedAt: t0.advanced(by: .seconds(30)))
        try fixture.plantFile("Workouts/2026/11/\(id(2)).json", DocumentCoder.encodeForDisk(edited))
        try await recorder.wait(for: .change(.documentChanged(.workout(edited))))
        try FileManager.default.removeItem(atPath: fixture.path("Workouts/2026/11/\(id(2)).json"))
        try await recorder.wait(for: .change(.workoutRemoved(id(2), year: 2026, month: 11)))
    }

    @Test("this process's own write is passed over undecoded; its removal, and the same bytes put back, are seen")
    func ownWritesArePassedOver() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        try fixture.documents.write(split(1))
        // A second event for the same write, as when a child forked meanwhile closes its copy of the
        // temporary file's descriptor after the rename: a close under the target's name.
        let descriptor = open(fixture.path("Splits/\(id(1)).json"), O_WRONLY)
        #expect(descriptor >= 0)
        close(descriptor)
        // Events come in order: once a later external file is reported, the own write was handled.
        try fixture.plantFile("Splits/\(id(2)).json", DocumentCoder.encodeForDisk(split(2)))
        let seen = try await recorder.wait(for: .change(.documentChanged(.split(split(2)))))
        #expect(!seen.contains(.change(.documentChanged(.split(split(1))))), "\(seen)")
        try fixture.documents.removeSplit(id: id(1))
        try await recorder.wait(for: .change(.splitRemoved(id(1))))
        // The same bytes put back by someone else (a restore) are news again.
        try fixture.plantFile("Splits/\(id(1)).json", DocumentCoder.encodeForDisk(split(1)))
        try await recorder.wait(for: .change(.documentChanged(.split(split(1)))))
    }

    @Test("an external edit right after an own write is reported with its contents")
    func externalEditAfterOwnWrite() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        try fixture.documents.write(run(2))
        let edited = run(2, updatedAt: t0.advanced(by: .seconds(30)))
        try fixture.plantFile("Workouts/2026/11/\(id(2)).json", DocumentCoder.encodeForDisk(edited))
        try await recorder.wait(for: .change(.documentChanged(.workout(edited))))
    }

    @Test("a stub appearing is a tombstone change; a stub vanishing is only a notice")
    func stubs() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        try fixture.plantFile("Stubs/\(id(3)).json", DocumentCoder.encodeForDisk(stub(3)))
        try await recorder.wait(for: .change(.documentChanged(.tombstone(stub(3)))))
        try FileManager.default.removeItem(atPath: fixture.path("Stubs/\(id(3)).json"))
        let seen = try await recorder.wait(for: .notice(.stubRemoved(path: "Stubs/\(id(3)).json")))
        #expect(seen.filter { if case .change = $0 { return true } else { return false } }.count == 1)
    }

    @Test("a run in a month folder created after the watcher started is reported")
    func newMonthFolder() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        let may2030 = try #require(Timestamp(iso8601: "2030-05-02T10:00:00Z"))
        try FileManager.default.createDirectory(
            atPath: fixture.path("Workouts/2030/05"), withIntermediateDirectories: true)
        // Written once the folders exist: whether it beat the new watch or not, it is reported.
        try fixture.plantFile("Workouts/2030/05/\(id(7)).json", DocumentCoder.encodeForDisk(run(7, startedAt: may2030)))
        try await recorder.wait(for: .change(.documentChanged(.workout(run(7, startedAt: may2030)))))
        // And a later file in that folder is seen through the new watch.
        try fixture.plantFile("Workouts/2030/05/\(id(8)).json", DocumentCoder.encodeForDisk(run(8, startedAt: may2030)))
        try await recorder.wait(for: .change(.documentChanged(.workout(run(8, startedAt: may2030)))))
    }

    @Test("a year folder moved in whole is listed: files that landed before its watch are reported")
    func folderMovedIn() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        let february = try #require(Timestamp(iso8601: "2031-02-14T07:00:00Z"))
        let staging = fixture.temporary.appending("staging/2031/02")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try writePlainFile("\(staging)/\(id(9)).json", DocumentCoder.encodeForDisk(run(9, startedAt: february)))
        try writePlainFile("\(staging)/notes.txt", Array("hi".utf8))
        #expect(rename(fixture.temporary.appending("staging/2031"), fixture.path("Workouts/2031")) == 0)
        try await recorder.wait(for: .change(.documentChanged(.workout(run(9, startedAt: february)))))
        try await recorder.wait(
            for: .skipped(SkippedEntry(path: "Workouts/2031/02/notes.txt", reason: .unexpectedName)))
        try fixture.plantFile(
            "Workouts/2031/02/\(id(10)).json", DocumentCoder.encodeForDisk(run(10, startedAt: february)))
        try await recorder.wait(for: .change(.documentChanged(.workout(run(10, startedAt: february)))))
    }

    @Test("a garbage file is reported as skipped with its path and reason, not as a change")
    func garbageIsSkipped() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        defer { watcher.stop() }
        try fixture.plantFile("Splits/\(id(5)).json", DocumentCoder.encodeForDisk(split(6)))
        try await recorder.wait(
            for: .skipped(
                SkippedEntry(path: "Splits/\(id(5)).json", reason: .idMismatch(fileName: id(5), document: id(6)))))
        try fixture.plantFile("Splits/\(id(4)).json", "not JSON")
        let seen = try await recorder.wait(for: "the not-JSON split") {
            $0.contains { if case .skipped(let entry) = $0 { entry.path == "Splits/\(id(4)).json" } else { false } }
        }
        #expect(!seen.contains { if case .change = $0 { true } else { false } })
        try FileManager.default.createDirectory(
            atPath: fixture.path("Workouts/Archive"), withIntermediateDirectories: false)
        try await recorder.wait(for: .skipped(SkippedEntry(path: "Workouts/Archive", reason: .unexpectedFolder)))
    }

    @Test("stop() ends the thread and closes the inotify descriptor; it can be called again")
    func stopEndsTheThread() async throws {
        let fixture = try Fixture()
        let (watcher, recorder) = try watch(fixture)
        try fixture.plantFile("Splits/\(id(1)).json", DocumentCoder.encodeForDisk(split(1)))
        try await recorder.wait(for: .change(.documentChanged(.split(split(1)))))
        let descriptor = watcher.descriptor
        #expect(linkTarget(ofDescriptor: descriptor) == "anon_inode:inotify")
        #expect(watcher.isRunning)
        watcher.stop()
        #expect(!watcher.isRunning)
        #expect(linkTarget(ofDescriptor: descriptor) != "anon_inode:inotify")
        watcher.stop()
    }
}

/// What `/proc/self/fd/<descriptor>` points at, or nil when the descriptor is not open.
func linkTarget(ofDescriptor descriptor: Int32) -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
}
