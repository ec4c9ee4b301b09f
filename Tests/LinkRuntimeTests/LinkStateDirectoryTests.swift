import Dispatch
import DurableFiles
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

@Suite("LinkStateDirectory starts and fsync latency")
struct LinkStateDirectoryTests {
    private static func open(_ root: String) throws -> LinkStateDirectory {
        try LinkStateDirectory(root: root) { [UInt8](repeating: 7, count: 16) }
    }

    @Test("each open counts one start, kept in <state>/starts")
    func startsCount() throws {
        let directory = try TemporaryDirectory("starts")
        #expect(try Self.open(directory.path).starts == 1)
        #expect(try Self.open(directory.path).starts == 2)
        #expect(try AtomicFile.read(directory.appending("starts")) == Array("2\n".utf8))
    }

    @Test("the watch state survives a reopen; a damaged watch-state file stops opening with an error naming it")
    func watchStateRoundTrip() throws {
        let directory = try TemporaryDirectory("wstate")
        #expect(try Self.open(directory.path).restore().watchState == nil, "never set: read as installed")
        let unpaired = WatchState(isPaired: false, isWatchAppInstalled: true, isComplicationEnabled: false)
        try Self.open(directory.path).persist(unpaired)
        #expect(try Self.open(directory.path).restore().watchState == unpaired)
        try AtomicFile.write([0x01, 0x02], to: directory.appending("link/watch-state"))
        let error = try #require(throws: StateFileError.self) { try Self.open(directory.path).restore() }
        guard case .malformed(let file, _) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(file == directory.appending("link/watch-state"))
    }

    @Test("a context slot write cut short: the slot before it, its generation one higher, and a note")
    func tornSlotWrite() throws {
        let directory = try TemporaryDirectory("slot")
        let state = try Self.open(directory.path)
        try state.persist(ContextSlot(generation: 4, payload: Array("four".utf8), acknowledgedGeneration: 4))
        try state.persist(ContextSlot(generation: 5, payload: Array("five".utf8), acknowledgedGeneration: 4))
        #expect(try Self.open(directory.path).restore().contextSlot?.generation == 5)
        // Generation 5 went to half 1; a crash tore it.
        let path = directory.appending("link/context-slot")
        var bytes = try #require(try AtomicFile.read(path))
        bytes[4096 + 20] ^= 0xFF
        try AtomicFile.write(bytes, to: path)

        let reopened = try Self.open(directory.path)
        // Generation 5 may have been sent: the slot reads as 5 with generation 4's payload, unacknowledged,
        // so the next push is 6 and the watch takes it.
        let slot = try #require(try reopened.restore().contextSlot)
        #expect(slot == ContextSlot(generation: 5, payload: Array("four".utf8), acknowledgedGeneration: 4))
        #expect(reopened.recoveryNotes.contains { $0.contains("context slot") }, "\(reopened.recoveryNotes)")
    }

    @Test("a clean stop is marked once there is a slot, and only the next start reads the mark")
    func cleanStop() throws {
        let directory = try TemporaryDirectory("state")
        let first = try Self.open(directory.path)
        #expect(!first.slotCurrent)
        try first.markStoppedCleanly()
        #expect(try !Self.open(directory.path).slotCurrent, "no slot: nothing marked")
        let second = try Self.open(directory.path)
        try second.persist(ContextSlot(generation: 3, payload: [3], acknowledgedGeneration: 3), flushed: false)
        try second.markStoppedCleanly()
        let third = try Self.open(directory.path)
        #expect(third.slotCurrent)
        #expect(try third.restore().contextSlotCurrent)
        #expect(try third.restore().contextSlot?.generation == 3)
        // The mark went with that start: a crash now leaves none.
        #expect(try !Self.open(directory.path).slotCurrent)
    }

    @Test("a received context with a damaged half is set aside whole, as a damaged one is")
    func tornReceivedContext() throws {
        let directory = try TemporaryDirectory("received")
        let state = try Self.open(directory.path)
        let phone = try #require(InstanceID(bytes: [UInt8](repeating: 9, count: 16)))
        try state.persist(ReceivedContext(sender: phone, generation: 1, payload: Array("one".utf8)))
        try state.persist(ReceivedContext(sender: phone, generation: 2, payload: Array("two".utf8)))
        #expect(try Self.open(directory.path).readReceivedContext()?.payload == Array("two".utf8))
        let path = directory.appending("link/received-context")
        var bytes = try #require(try AtomicFile.read(path))
        bytes[20] ^= 0xFF  // generation 1, in half 0
        try AtomicFile.write(bytes, to: path)

        let reopened = try Self.open(directory.path)
        #expect(try reopened.readReceivedContext() == nil)
        #expect(try AtomicFile.read("\(path).damaged") == bytes)
        #expect(reopened.recoveryNotes.contains { $0.contains("set aside a damaged received context") })
    }

    @Test("a starts file that is not a count stops opening with an error naming it")
    func malformedStarts() throws {
        let directory = try TemporaryDirectory("starts")
        _ = try Self.open(directory.path)
        try AtomicFile.write(Array("many\n".utf8), to: directory.appending("starts"))
        let error = try #require(throws: StateFileError.self) { try Self.open(directory.path) }
        guard case .malformed(let file, _) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(file == directory.appending("starts"))
    }

    @Test("an atomic write records its two syncs (file, directory) in the process-wide fsync histogram")
    func atomicWriteRecordsFsyncs() throws {
        let directory = try TemporaryDirectory("fsync")
        let before = LatencyRecorder.fsync.snapshot.count
        try AtomicFile.write([1], to: directory.appending("file"))
        // Other tests write concurrently, so at least two more.
        #expect(LatencyRecorder.fsync.snapshot.count >= before + 2)
    }

    @Test("a recorder adds up observations from many threads and times what it runs")
    func recorder() throws {
        let recorder = LatencyRecorder(bounds: [0.001, 10])
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in recorder.record(seconds: 0.0005) }
        #expect(recorder.snapshot.count == 1_000)
        #expect(recorder.snapshot.cumulativeCounts.map(\.count) == [1_000, 1_000])
        recorder.record(.milliseconds(20))
        #expect(recorder.snapshot.cumulativeCounts.map(\.count) == [1_000, 1_001])
        struct Failed: Error {}
        #expect(throws: Failed.self) { try recorder.time { throw Failed() } }
        #expect(recorder.time { 42 } == 42)
        #expect(recorder.snapshot.count == 1_003)
    }
}
