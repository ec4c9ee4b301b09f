import LinkProtocol
import Testing
import WorkoutModel

/// `RunIndex` over a recorded `RunTable` (some folders retired) with changes on top, against a plain
/// dictionary of what it should know.
@Suite("RunIndex: a recorded table under changes answers as a dictionary of the same runs")
struct RunIndexTableTests {
    /// A summary of run `number`, active or completed, with an end anywhere in a day so recorded and
    /// changed runs interleave in the completed order in every way.
    static func summary(_ number: Int, _ random: inout SplitMix64) -> RunIndex.RunSummary {
        let id = DocumentID(bytes: Array(repeating: 0x33, count: 15) + [UInt8(number)])
        let start = Timestamp(
            microsecondsSinceEpoch: 1_700_000_000_000_000 + Int64.random(in: 0..<86_400_000_000, using: &random))
        let completed = Bool.random(using: &random)
        let end = start.advanced(by: .seconds(Int.random(in: 1...7_200, using: &random)))
        return RunIndex.RunSummary(
            id: id, status: completed ? .completed : .inProgress, startedAt: start,
            endedAt: completed || Int.random(in: 0..<4, using: &random) == 0 ? end : nil, updatedAt: end,
            version: Stamp(time: end, counter: Int.random(in: 0..<3, using: &random), origin: .phone))
    }

    /// What the index must answer, from the runs it should know.
    static func expect(_ index: RunIndex, knows runs: [DocumentID: RunIndex.RunSummary], _ comment: Comment) {
        let completed = runs.values.filter(RunIndex.isCompleted).sorted { ($0.endedAt!, $0.id) < ($1.endedAt!, $1.id) }
        #expect(index.count == runs.count, comment)
        #expect(index.completedCount == completed.count, comment)
        #expect(index.completedIDs == completed.map(\.id), comment)
        #expect(index.activeIDs == Set(runs.values.filter { !RunIndex.isCompleted($0) }.map(\.id)), comment)
        for number in 0..<64 {
            let id = DocumentID(bytes: Array(repeating: 0x33, count: 15) + [UInt8(number)])
            #expect(index[id] == runs[id], comment)
        }
        var listed: [DocumentID: RunIndex.RunSummary] = [:]
        index.forEachSummary { listed[$0.id] = $0 }
        #expect(listed == runs, comment)
        let now = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000 + 86_400_000_000)
        let policy = PushPolicy(recentLimit: 5, recentWindow: .seconds(12 * 3_600))
        let active = runs.values.filter { !RunIndex.isCompleted($0) }.sorted {
            ($0.startedAt, $0.id) < ($1.startedAt, $1.id)
        }
        let recent = completed.reversed().prefix { $0.endedAt! >= now.advanced(by: .seconds(-12 * 3_600)) }.prefix(5)
        #expect(index.pushSelection(now: now, policy: policy) == active.map(\.id) + recent.map(\.id), comment)
    }

    @Test("recorded runs in live and retired folders, then upserts and removals", arguments: 0..<200)
    func tableUnderChanges(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        // Each run recorded in one of three folders (or not at all).
        var folders: [[RunIndex.RunSummary]] = [[], [], []]
        for number in 0..<60 where Int.random(in: 0..<4, using: &random) > 0 {
            folders[Int.random(in: 0..<3, using: &random)].append(Self.summary(number, &random))
        }
        let fingerprint = FolderFingerprint(entryCount: 0, newestModificationNanoseconds: 0, digest: 0)
        let recorded = RunIndexSnapshot(
            root: "/",
            folders: Dictionary(
                uniqueKeysWithValues: folders.enumerated().map {
                    (
                        "Workouts/2026/0\($0.offset + 1)",
                        RunIndexSnapshot.Folder(fingerprint: fingerprint, runs: $0.element, skipped: [])
                    )
                }))
        var table = try RunIndexSnapshot(decoding: recorded.encoded(), root: "/").table
        var runs: [DocumentID: RunIndex.RunSummary] = [:]
        for (number, folder) in folders.enumerated() {
            if Int.random(in: 0..<3, using: &random) == 0 {
                table.retire(folder: number)
            } else {
                for summary in folder { runs[summary.id] = summary }
            }
        }
        var index = RunIndex()
        index.install(table)
        Self.expect(index, knows: runs, "seed \(seed), installed")
        for step in 0..<Int.random(in: 1...40, using: &random) {
            let number = Int.random(in: 0..<64, using: &random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                let id = DocumentID(bytes: Array(repeating: 0x33, count: 15) + [UInt8(number)])
                index.remove(id)
                runs[id] = nil
            } else {
                let summary = Self.summary(number, &random)
                index.upsert(summary)
                runs[summary.id] = summary
            }
            if step % 8 == 0 { Self.expect(index, knows: runs, "seed \(seed), step \(step)") }
        }
        Self.expect(index, knows: runs, "seed \(seed), end")
        #expect(index == RunIndex(runs.values), "seed \(seed)")

        // A newer file, written from an earlier state: some runs as known, some otherwise, some
        // missing, some that are gone. Rebased onto it, the index knows exactly what it knew.
        var written: [RunIndex.RunSummary] = []
        for number in 0..<64 {
            let id = DocumentID(bytes: Array(repeating: 0x33, count: 15) + [UInt8(number)])
            switch Int.random(in: 0..<4, using: &random) {
            case 0: if let known = runs[id] { written.append(known) }
            case 1: written.append(Self.summary(number, &random))
            default: break
            }
        }
        index.rebase(onto: .recording(written))
        Self.expect(index, knows: runs, "seed \(seed), rebased")
        for _ in 0..<Int.random(in: 1...20, using: &random) {
            let summary = Self.summary(Int.random(in: 0..<64, using: &random), &random)
            if Bool.random(using: &random) {
                index.upsert(summary)
                runs[summary.id] = summary
            } else {
                index.remove(summary.id)
                runs[summary.id] = nil
            }
        }
        Self.expect(index, knows: runs, "seed \(seed), after the rebase")
    }
}
