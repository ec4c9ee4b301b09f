import Testing

@testable import Simulation

@Suite("The simulated outbox: unsynced appends, torn at a power loss, opened by the real reading")
struct SimOutboxTests {
    @Test("a commit cut at any byte keeps exactly the whole records before the cut; appends go on after them")
    func tornAtEveryByte() throws {
        var synced = SimOutbox()
        _ = synced.append(sequence: 1, [1, 1], enqueuedAtMicros: 1)
        _ = synced.sync()
        _ = synced.append(sequence: 2, [2, 2, 2], enqueuedAtMicros: 2)
        _ = synced.append(sequence: 3, [3], enqueuedAtMicros: 3)
        let unsynced = synced.unsyncedByteCount
        #expect(unsynced == 2 * 24 + 4)
        for kept in 0...unsynced {
            var outbox = synced
            outbox.lose(keepingUnsynced: kept)
            let note = try outbox.open()
            let whole = kept >= 2 * 24 + 4 ? 2 : kept >= 24 + 3 ? 1 : 0
            #expect(outbox.pending.map(\.sequence) == Array(1...UInt64(1 + whole)), "kept \(kept) bytes")
            #expect((note != nil) == (kept != 0 && kept != 24 + 3 && kept != unsynced), "kept \(kept) bytes")
            #expect(outbox.nextSequence == UInt64(2 + whole))
            let appended = outbox.append(sequence: UInt64(2 + whole), [4], enqueuedAtMicros: 4)
            #expect(appended)
            _ = outbox.sync()
            #expect(try outbox.open() == nil, "the cut left a clean end to append after")
            #expect(outbox.pending.last?.payload == [4])
        }
    }

    @Test("resolved records are not pending after an open, and a fully resolved segment starts afresh")
    func resolution() throws {
        var outbox = SimOutbox()
        for payload: UInt8 in 1...3 { _ = outbox.append(sequence: UInt64(payload), [payload], enqueuedAtMicros: 0) }
        _ = outbox.sync()
        outbox.resolve([1, 2])
        _ = try outbox.open()
        #expect(outbox.pending.map(\.sequence) == [3])
        outbox.resolve([3])
        #expect(outbox.firstSequence == 4 && outbox.pending.isEmpty)
        #expect(outbox.nextSequence == 4)
        let appended = outbox.append(sequence: 4, [9], enqueuedAtMicros: 0)
        #expect(appended)
    }

    @Test("an append numbered other than the next sequence is refused and writes nothing, as the real log refuses it")
    func outOfOrder() {
        var outbox = SimOutbox()
        let early = outbox.append(sequence: 2, [1], enqueuedAtMicros: 0)
        #expect(!early)
        #expect(outbox.unsyncedByteCount == 0 && outbox.pending.isEmpty)
        let next = outbox.append(sequence: 1, [1], enqueuedAtMicros: 0)
        #expect(next)
        let again = outbox.append(sequence: 1, [2], enqueuedAtMicros: 0)
        #expect(!again)
        #expect(outbox.pending.map(\.sequence) == [1])
    }
}
