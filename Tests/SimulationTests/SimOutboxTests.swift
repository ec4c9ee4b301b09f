import Testing

@testable import Simulation

@Suite("The simulated outbox: unsynced appends, torn at a power loss, opened by the real reading")
struct SimOutboxTests {
    @Test("a commit cut at any byte keeps exactly the whole records before the cut; appends go on after them")
    func tornAtEveryByte() throws {
        var synced = SimOutbox()
        _ = synced.append([1, 1], enqueuedAtMicros: 1)
        _ = synced.sync()
        _ = synced.append([2, 2, 2], enqueuedAtMicros: 2)
        _ = synced.append([3], enqueuedAtMicros: 3)
        let unsynced = synced.unsyncedByteCount
        #expect(unsynced == 2 * 24 + 4)
        for kept in 0...unsynced {
            var outbox = synced
            outbox.lose(keepingUnsynced: kept)
            let note = try outbox.open()
            let whole = kept >= 2 * 24 + 4 ? 2 : kept >= 24 + 3 ? 1 : 0
            #expect(outbox.pending.map(\.sequence) == Array(1...UInt64(1 + whole)), "kept \(kept) bytes")
            #expect((note != nil) == (kept != 0 && kept != 24 + 3 && kept != unsynced), "kept \(kept) bytes")
            let next = outbox.append([4], enqueuedAtMicros: 4)
            #expect(next == UInt64(2 + whole))
            _ = outbox.sync()
            #expect(try outbox.open() == nil, "the cut left a clean end to append after")
            #expect(outbox.pending.last?.payload == [4])
        }
    }

    @Test("resolved records are not pending after an open, and a fully resolved segment starts afresh")
    func resolution() throws {
        var outbox = SimOutbox()
        for payload: UInt8 in 1...3 { _ = outbox.append([payload], enqueuedAtMicros: 0) }
        _ = outbox.sync()
        outbox.resolve([1, 2])
        _ = try outbox.open()
        #expect(outbox.pending.map(\.sequence) == [3])
        outbox.resolve([3])
        #expect(outbox.firstSequence == 4 && outbox.pending.isEmpty)
        #expect(outbox.append([9], enqueuedAtMicros: 0) == 4)
    }
}
