import DurableFiles
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

@Suite("ReceivedTransfers")
struct ReceivedTransfersTests {
    let phone: [UInt8] = Array(repeating: 0xA1, count: 16)
    let resetPhone: [UInt8] = Array(repeating: 0xB2, count: 16)

    static func mark(_ sequences: ClosedRange<UInt64>, digest: UInt64 = 7) -> QueueMark {
        var mark = QueueMark()
        for sequence in sequences { mark.apply(sequence: sequence, digest: digest, window: 128) }
        return mark
    }

    @Test("keeps each queue's mark with its digests; a mark with a lower highest sequence is not written")
    func marks() throws {
        let dir = try TemporaryDirectory("received")
        let store = try ReceivedTransfers(path: dir.appending("received"))
        #expect(store.highestApplied(queueID: phone) == 0)
        try store.persist(queueID: phone, Self.mark(1...2))
        #expect(store.allMarks == [phone: Self.mark(1...2)])
        #expect(store.highestApplied(queueID: resetPhone) == 0)
        try store.persist(queueID: phone, Self.mark(1...1))
        #expect(store.highestApplied(queueID: phone) == 2)
        // A sender that went back: the same highest, a new digest for 1.
        var back = Self.mark(1...2)
        back.apply(sequence: 1, digest: 9, window: 128)
        try store.persist(queueID: phone, back)
        #expect(try ReceivedTransfers(path: dir.appending("received")).allMarks == [phone: back])
    }

    @Test("marks are rewritten in place; a write cut short leaves the marks before it; earlier formats are read")
    func recordFile() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        // The format before RecordFile: u32 count, entries, u32 CRC32C.
        var earlier: [UInt8] = [0, 0, 0, 1, 16] + phone + [0, 0, 0, 0, 0, 0, 0, 7]
        BigEndian.append(CRC32C.checksum(earlier), to: &earlier)
        try AtomicFile.write(earlier, to: path)
        let store = try ReceivedTransfers(path: path)
        #expect(store.allMarks == [phone: QueueMark(highest: 7)], "a mark without digests")
        try store.persist(queueID: phone, Self.mark(8...8))  // converts: half 0
        let inode = try RecordFileTests.inode(path)
        try store.persist(queueID: phone, Self.mark(8...9))  // half 1, in place
        #expect(try RecordFileTests.inode(path) == inode)
        #expect(try ReceivedTransfers(path: path).highestApplied(queueID: phone) == 9)

        var bytes = try RecordFileTests.bytes(path)
        bytes[4096 + 20] ^= 0xFF
        try AtomicFile.write(bytes, to: path)
        // The transfer marked 9 was not acknowledged to its sender when the write was cut: it comes
        // again and is taken once.
        #expect(try ReceivedTransfers(path: path).highestApplied(queueID: phone) == 8)
    }

    @Test("marks survive reopening; the format before digests reads as marks without them")
    func persistence() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        do {
            let store = try ReceivedTransfers(path: path)
            try store.persist(queueID: phone, Self.mark(1...41))
            try store.persist(queueID: resetPhone, Self.mark(3...3, digest: 1))
        }
        let reopened = try ReceivedTransfers(path: path)
        #expect(reopened.allMarks == [phone: Self.mark(1...41), resetPhone: Self.mark(3...3, digest: 1)])

        // The record before digests: u32 count, then length, ID, u64 mark.
        let before = dir.appending("before")
        try RecordFile(path: before).write([0, 0, 0, 1, 16] + phone + [0, 0, 0, 0, 0, 0, 0, 41])
        #expect(try ReceivedTransfers(path: before).allMarks == [phone: QueueMark(highest: 41)])
    }

    @Test("a damaged file refuses to load, naming it")
    func damaged() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        try ReceivedTransfers(path: path).persist(queueID: phone, Self.mark(5...5))
        var bytes = try #require(try AtomicFile.read(path))
        bytes[6] ^= 0x01
        try AtomicFile.write(bytes, to: path)
        #expect(throws: StateFileError.malformed(file: path, reason: "checksum mismatch")) {
            try ReceivedTransfers(path: path)
        }
    }
}
