import Testing
import WorkoutModel

@Suite("RunIndexSnapshot")
struct RunIndexSnapshotTests {
    private func summaries() throws -> [RunIndex.RunSummary] {
        var active = try startedRun(100)
        try active.completeSet(
            logID: active.logs[0].id, setIndex: 0, reps: 5, weight: 100,
            at: Stamp(time: at(60), counter: 3, origin: .watch))
        var completed = try startedRun(101, at: at(-7_200))
        try completed.endKeepingProgress(at: Stamp(time: at(-3_600), origin: .phone))
        return [RunIndex.RunSummary(try startedRun(102)), RunIndex.RunSummary(active), RunIndex.RunSummary(completed)]
    }

    private func snapshot() throws -> RunIndexSnapshot {
        let fingerprint = FolderFingerprint(
            entryCount: 4, newestModificationNanoseconds: 1_764_000_000_123_456_789, digest: 0xDEAD_BEEF)
        return RunIndexSnapshot(
            root: "/home/a/Documents",
            folders: [
                "Workouts/2026/11": RunIndexSnapshot.Folder(
                    fingerprint: fingerprint, runs: try summaries(),
                    skipped: [.init(path: "Workouts/2026/11/notes.txt", reason: "file name is not <UUID>.json")]),
                "Workouts/2019/01": RunIndexSnapshot.Folder(
                    fingerprint: FolderFingerprint(entryCount: 0, newestModificationNanoseconds: 0, digest: 0),
                    runs: [],
                    skipped: []),
            ])
    }

    @Test("a snapshot survives encoding: every summary field, fingerprint and skipped note")
    func roundTrip() throws {
        let original = try snapshot()
        let decoded = try RunIndexSnapshot(decoding: original.encoded(), root: original.root)
        #expect(decoded == original)
        #expect(try decoded.folders["Workouts/2026/11"]?.runs() == summaries().sorted { $0.id < $1.id })
        #expect(decoded.runCount == 3)
    }

    @Test("a folder is reused only when its fingerprint is exactly the recorded one")
    func reuseNeedsTheSameFingerprint() throws {
        let snapshot = try snapshot()
        let recorded = try #require(snapshot.folders["Workouts/2026/11"]).fingerprint
        #expect(snapshot.reusable("Workouts/2026/11", current: recorded) != nil)
        var changed = recorded
        changed.entryCount += 1
        #expect(snapshot.reusable("Workouts/2026/11", current: changed) == nil)
        changed = recorded
        changed.digest &+= 1
        #expect(snapshot.reusable("Workouts/2026/11", current: changed) == nil)
        changed = recorded
        changed.newestModificationNanoseconds += 1
        #expect(snapshot.reusable("Workouts/2026/11", current: changed) == nil)
        #expect(snapshot.reusable("Workouts/2026/12", current: recorded) == nil)
    }

    @Test("every truncation, a foreign format and another directory are refused, never half-read")
    func damagedPayloadsAreRefused() throws {
        let original = try snapshot()
        let bytes = original.encoded()
        for length in 0..<bytes.count {
            #expect(throws: RunIndexSnapshotError.self) {
                try RunIndexSnapshot(decoding: Array(bytes[..<length]), root: original.root)
            }
        }
        #expect(throws: RunIndexSnapshotError.invalid("1 bytes after the table")) {
            try RunIndexSnapshot(decoding: bytes + [0], root: original.root)
        }
        var otherFormat = bytes
        otherFormat[0] = 99
        #expect(throws: RunIndexSnapshotError.unsupportedFormat(found: 99, supported: RunIndexSnapshot.formatVersion)) {
            try RunIndexSnapshot(decoding: otherFormat, root: original.root)
        }
        #expect(throws: RunIndexSnapshotError.otherDirectory(recorded: original.root)) {
            try RunIndexSnapshot(decoding: bytes, root: "/elsewhere")
        }
    }

    @Test("a payload with any one byte changed decodes to something or is refused; it never traps")
    func flippedBytesNeverTrap() throws {
        let original = try snapshot()
        let bytes = original.encoded()
        var refused = 0
        for position in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[position] ^= mask
                do {
                    _ = try RunIndexSnapshot(decoding: damaged, root: original.root)
                } catch {
                    refused += 1
                }
            }
        }
        // The file's checksum refuses the rest (RunIndexFile); the payload's own checks catch many.
        #expect(refused > 0)
    }
}
