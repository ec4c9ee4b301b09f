import DurableFiles
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

@Suite("ReceivedTransfers")
struct ReceivedTransfersTests {
    let phone: [UInt8] = Array(repeating: 0xA1, count: 16)
    let resetPhone: [UInt8] = Array(repeating: 0xB2, count: 16)

    @Test("detects duplicates at or below the mark and keeps queues independent")
    func duplicates() throws {
        let dir = try TemporaryDirectory("received")
        let store = try ReceivedTransfers(path: dir.appending("received"))
        #expect(!store.isDuplicate(queueID: phone, sequence: 1))
        try store.markApplied(queueID: phone, sequence: 1)
        try store.markApplied(queueID: phone, sequence: 2)
        #expect(store.isDuplicate(queueID: phone, sequence: 1))
        #expect(store.isDuplicate(queueID: phone, sequence: 2))
        #expect(!store.isDuplicate(queueID: phone, sequence: 3))
        #expect(!store.isDuplicate(queueID: resetPhone, sequence: 1))
        try store.markApplied(queueID: phone, sequence: 1)
        #expect(store.highestApplied(queueID: phone) == 2)
    }

    @Test("marks are rewritten in place; a write cut short leaves the marks before it; the earlier format is read")
    func recordFile() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        // The format before RecordFile: u32 count, entries, u32 CRC32C.
        var earlier: [UInt8] = [0, 0, 0, 1, 16] + phone + [0, 0, 0, 0, 0, 0, 0, 7]
        BigEndian.append(CRC32C.checksum(earlier), to: &earlier)
        try AtomicFile.write(earlier, to: path)
        let store = try ReceivedTransfers(path: path)
        #expect(store.highestApplied(queueID: phone) == 7)
        try store.markApplied(queueID: phone, sequence: 8)  // converts: half 0
        let inode = try RecordFileTests.inode(path)
        try store.markApplied(queueID: phone, sequence: 9)  // half 1, in place
        #expect(try RecordFileTests.inode(path) == inode)
        #expect(try ReceivedTransfers(path: path).highestApplied(queueID: phone) == 9)

        var bytes = try RecordFileTests.bytes(path)
        bytes[4096 + 20] ^= 0xFF
        try AtomicFile.write(bytes, to: path)
        // The transfer marked 9 was not acknowledged to its sender when the write was cut: it comes
        // again and is taken once.
        #expect(try ReceivedTransfers(path: path).highestApplied(queueID: phone) == 8)
    }

    @Test("marks survive reopening")
    func persistence() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        do {
            let store = try ReceivedTransfers(path: path)
            try store.markApplied(queueID: phone, sequence: 41)
            try store.markApplied(queueID: resetPhone, sequence: 3)
        }
        let reopened = try ReceivedTransfers(path: path)
        #expect(reopened.highestApplied(queueID: phone) == 41)
        #expect(reopened.highestApplied(queueID: resetPhone) == 3)
        #expect(reopened.isDuplicate(queueID: phone, sequence: 41))
        #expect(!reopened.isDuplicate(queueID: phone, sequence: 42))
    }

    @Test("a damaged file refuses to load, naming it")
    func damaged() throws {
        let dir = try TemporaryDirectory("received")
        let path = dir.appending("received")
        try ReceivedTransfers(path: path).markApplied(queueID: phone, sequence: 5)
        var bytes = try #require(try AtomicFile.read(path))
        bytes[6] ^= 0x01
        try AtomicFile.write(bytes, to: path)
        #expect(throws: StateFileError.malformed(file: path, reason: "checksum mismatch")) {
            try ReceivedTransfers(path: path)
        }
    }
}
