import DurableFiles
import Foundation
import LinkProtocol
import POSIX
import TestSupport
import Testing

@Suite("RecordFile: two halves written in turn in place")
struct RecordFileTests {
    /// A fresh directory and a record file's path in it, kept while this lives.
    struct Scratch {
        let directory: TemporaryDirectory
        var path: String { directory.appending("slot") }
        init() throws { directory = try TemporaryDirectory("record") }
    }

    static func bytes(_ path: String) throws -> [UInt8] { try #require(try AtomicFile.read(path)) }

    static func inode(_ path: String) throws -> UInt64 {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }

    /// The sealed record the format before RecordFile wrote: the record, its CRC32C.
    static func sealed(_ record: [UInt8]) -> [UInt8] {
        var bytes = record
        BigEndian.append(CRC32C.checksum(record), to: &bytes)
        return bytes
    }

    @Test(
        "the first write makes a file of two blank halves; later writes go in place, in turn, and a reopen reads the newest"
    )
    func inPlace() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        #expect(try file.read() == nil)
        try file.write(Array("one".utf8))
        #expect(try Self.bytes(path).count == 8192)
        #expect(try file.read() == RecordFile.Contents(record: Array("one".utf8), otherHalfDamaged: false))
        let inode = try Self.inode(path)
        for word in ["two", "three", "four"] {
            try file.write(Array(word.utf8))
            #expect(try Self.inode(path) == inode, "rewritten in place, not replaced")
            #expect(try RecordFile(path: path).read()?.record == Array(word.utf8))
        }
        // "four" is in half 1 and "three" in half 0: a new instance goes on from the newest.
        #expect(try Self.bytes(path)[4096..<4100].elementsEqual([0x57, 0x53, 0x52, 0x01]))
        let reopened = RecordFile(path: path)
        try reopened.write(Array("five".utf8))
        try reopened.write(Array("six".utf8))
        #expect(try RecordFile(path: path).read()?.record == Array("six".utf8))
        #expect(try Self.inode(path) == inode)
    }

    @Test("writers on many threads never pick the same half: both halves stay whole, the newest wins")
    func concurrentWriters() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        try file.write([0])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 1...25 { try? file.write([UInt8(thread), UInt8(round)]) }
        }
        let contents = try #require(try RecordFile(path: path).read())
        #expect(!contents.otherHalfDamaged)
        #expect(contents.record.count == 2 && contents.record[1] == 25, "\(contents.record)")
        // 1 + 8 × 25 writes, each with the next sequence: the newest half holds 201.
        let bytes = try Self.bytes(path)
        let sequences = [0, 4096].map { BigEndian.read(UInt64.self, from: Array(bytes[($0 + 4)..<($0 + 12)]), at: 0) }
        #expect(sequences.max() == 201 && sequences.min() == 200, "\(sequences)")
    }

    @Test("a file removed under a writer is made again by its next write")
    func removedUnderWriter() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        try file.write([1])
        try FileSystem.removeFile(path)
        try file.write([2])
        #expect(try RecordFile(path: path).read() == RecordFile.Contents(record: [2], otherHalfDamaged: false))
    }

    @Test("a write torn by a crash loses only itself: the other half's record is read, the damage reported")
    func tornWrite() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        try file.write(Array("older".utf8))
        try file.write(Array("newer".utf8))
        var bytes = try Self.bytes(path)
        // The newer record is in half 1; a crash tore the write of a third record over it.
        bytes[4096 + 18] ^= 0xFF
        try AtomicFile.write(bytes, to: path)
        #expect(
            try RecordFile(path: path).read()
                == RecordFile.Contents(record: Array("older".utf8), otherHalfDamaged: true))

        // Both halves damaged: an error naming the file, never a silent reset.
        bytes[18] ^= 0xFF
        try AtomicFile.write(bytes, to: path)
        #expect(throws: StateFileError.self) { try RecordFile(path: path).read() }
    }

    @Test("a write without a flush never overwrites the last flushed record: a power loss leaves it whole")
    func unflushed() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        try file.write(Array("zero".utf8))
        try file.write(Array("flushed".utf8))
        // Both go to half 0, the one the flushed record (in half 1) is not in.
        try file.write(Array("cached one".utf8), flushed: false)
        try file.write(Array("cached two".utf8), flushed: false)
        #expect(try RecordFile(path: path).read()?.record == Array("cached two".utf8))
        var bytes = try Self.bytes(path)
        #expect(bytes[4096 + 16..<4096 + 23].elementsEqual("flushed".utf8))
        // A power loss tore the last one: the flushed record is read.
        bytes[18] ^= 0xFF
        try AtomicFile.write(bytes, to: path)
        let reopened = RecordFile(path: path)
        #expect(try reopened.read() == RecordFile.Contents(record: Array("flushed".utf8), otherHalfDamaged: true))
        // The next flushed write goes to the torn half; the one after it back to half 1.
        try reopened.write(Array("flushed again".utf8))
        try reopened.write(Array("cached three".utf8), flushed: false)
        bytes = try Self.bytes(path)
        #expect(bytes[16..<29].elementsEqual("flushed again".utf8))
        #expect(try RecordFile(path: path).read()?.record == Array("cached three".utf8))
    }

    @Test("a record that outgrows its half remakes the file larger; a smaller one goes back in place")
    func growth() throws {
        let scratch = try Scratch()
        let path = scratch.path
        let file = RecordFile(path: path)
        try file.write([1, 2, 3])
        let large = [UInt8](repeating: 0xAB, count: 10_000)
        try file.write(large)
        #expect(try Self.bytes(path).count == 2 * 16_384)
        #expect(try RecordFile(path: path).read()?.record == large)
        let inode = try Self.inode(path)
        try file.write([4])
        #expect(try Self.inode(path) == inode)
        #expect(try RecordFile(path: path).read() == RecordFile.Contents(record: [4], otherHalfDamaged: false))
    }

    @Test("a file in the earlier format (the record, its CRC32C) is read, and the next write converts it")
    func earlierFormat() throws {
        let scratch = try Scratch()
        let path = scratch.path
        try AtomicFile.write(Self.sealed(Array("old".utf8)), to: path)
        let file = RecordFile(path: path)
        #expect(try file.read() == RecordFile.Contents(record: Array("old".utf8), otherHalfDamaged: false))
        try file.write(Array("new".utf8))
        #expect(try Self.bytes(path).count == 8192)
        #expect(try RecordFile(path: path).read()?.record == Array("new".utf8))

        try AtomicFile.write(Array(Self.sealed(Array("old".utf8)).dropLast()), to: path)
        #expect(throws: StateFileError.self) { try RecordFile(path: path).read() }
    }

    @Test("any bytes read as a record or as an error, never a trap", arguments: 0..<200)
    func arbitraryBytes(seed: Int) throws {
        let scratch = try Scratch()
        let path = scratch.path
        var random = SplitMix64(seed: UInt64(seed))
        let size = [0, 3, 4, 100, 8192, 16_384][seed % 6]
        var bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if size >= 8192 {
            // Headers that look right, with lengths and sequences anywhere.
            bytes.replaceSubrange(0..<4, with: [0x57, 0x53, 0x52, 0x01])
            bytes.replaceSubrange((size / 2)..<(size / 2 + 4), with: [0x57, 0x53, 0x52, 0x01])
        }
        try AtomicFile.write(bytes, to: path)
        _ = try? RecordFile(path: path).read()
        try RecordFile(path: path).write([9])
        #expect(try RecordFile(path: path).read()?.record == [9])
    }
}
