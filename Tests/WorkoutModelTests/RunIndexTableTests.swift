import LinkProtocol
import Testing
import WorkoutModel

/// `RunIndex.upsert(contentsOf:)`, the start-up scan's bulk insert, against one `upsert` at a time.
@Suite("RunIndex: a batch of summaries indexes exactly as one upsert at a time")
struct RunIndexBatchTests {
    /// A summary of run `number` (IDs repeat across and within batches), active or completed, with an
    /// end anywhere in a day so batches overlap the completed list in every way.
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

    @Test("batches with repeats, out-of-order ends, active and completed runs", arguments: 0..<200)
    func batchEqualsOneAtATime(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var batched = RunIndex()
        var single = RunIndex()
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let batch = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                Self.summary(Int.random(in: 0..<60, using: &random), &random)
            }
            batched.upsert(contentsOf: batch)
            for summary in batch { single.upsert(summary) }
            #expect(batched == single, "seed \(seed)")
            // Removals between batches go through the same completed list.
            if let victim = batch.randomElement(using: &random) {
                batched.remove(victim.id)
                single.remove(victim.id)
            }
        }
        #expect(batched == single, "seed \(seed)")
        #expect(batched.completedIDs == single.completedIDs)
    }
}
