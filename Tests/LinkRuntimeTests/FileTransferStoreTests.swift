import Foundation
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

/// The link's files on disk: the outbox (copy, hash, record), partials, the inbox.
@Suite("FileTransferStore")
struct FileTransferStoreTests {
    private static func open(_ directory: TemporaryDirectory) throws -> FileTransferStore {
        try FileTransferStore(linkDirectory: directory.appending("link"), inbox: directory.appending("inbox"))
    }

    @Test("a queued file is copied with its SHA-256 and record, survives a reopen, reads back by range, and goes")
    func outbox() throws {
        let directory = try TemporaryDirectory("fstore")
        let store = try Self.open(directory)
        let file = try store.enqueue(.bytes(Array("abc".utf8)), metadata: "{\"k\":1}")
        // SHA-256("abc"), FIPS 180-2's first example.
        #expect(DataCommandHex.hex(file.digest) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let source = directory.appending("source.bin")
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(fileURLWithPath: source))
        let second = try store.enqueue(.file(path: source), metadata: "{}")
        #expect(second.sequence == file.sequence + 1 && second.size == 200_000)

        let reopened = try Self.open(directory)
        #expect(reopened.queue == store.queue)
        #expect(try reopened.pending() == [file, second])
        #expect(try reopened.read(sequence: second.sequence, offset: 65_536, length: 4) == [0, 1, 2, 3])
        try reopened.remove(sequence: file.sequence)
        #expect(try reopened.pending().map(\.sequence) == [second.sequence])
        try reopened.remove(sequence: second.sequence)
        // A sequence is never given twice, even once every file is gone.
        #expect(try reopened.enqueue(.bytes([1]), metadata: "{}").sequence == second.sequence + 1)
    }

    @Test("a file takes the engine's number when it is past every one given; a number given before is refused")
    func engineNumbers() throws {
        let directory = try TemporaryDirectory("fstore-numbers")
        let store = try Self.open(directory)
        #expect(try store.nextSequence() == 1)
        // A skipped number (an earlier copy that failed) is fine: numbers only have to grow.
        let file = try store.enqueue(.bytes([1]), metadata: "{}", sequence: 3)
        #expect(file.sequence == 3)
        #expect(try store.nextSequence() == 4)
        try store.remove(sequence: 3)
        #expect(try Self.open(directory).nextSequence() == 4, "never reused, even once its file is done")
        for reused: UInt64 in [3, 2] {
            #expect(throws: FileTransferStoreError.sequenceReused(reused, next: 4)) {
                try store.enqueue(.bytes([2]), metadata: "{}", sequence: reused)
            }
        }
        #expect(try store.pending().isEmpty)
    }

    @Test("a source that cannot be read is fileAccessDenied, and leaves nothing queued")
    func unreadable() throws {
        let directory = try TemporaryDirectory("fstore")
        let store = try Self.open(directory)
        #expect(throws: LinkError.self) {
            try store.enqueue(.file(path: directory.appending("missing")), metadata: "{}")
        }
        #expect(try store.pending().isEmpty)
    }

    @Test(
        "only a regular file is sent: a device, a FIFO or a directory is fileAccessDenied at once and leaves nothing",
        arguments: ["/dev/null", "/dev/zero", "fifo", "directory"])
    func notRegular(source: String) throws {
        let directory = try TemporaryDirectory("fstore")
        let store = try Self.open(directory)
        var path = source
        if source == "fifo" {
            path = directory.appending("fifo")
            #expect(mkfifo(path, 0o600) == 0)  // opened without O_NONBLOCK, this waits for a writer forever
        } else if source == "directory" {
            path = directory.path
        }
        #expect(throws: LinkError.self) { try store.enqueue(.file(path: path), metadata: "{}") }
        #expect(try store.pending().isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.appending("link/files/out")).filter {
                $0.hasSuffix(".data")
            }.isEmpty)
    }

    @Test("a partial grows chunk by chunk, is cut back on prepare, hashes whole, moves to the inbox and is discarded")
    func arriving() throws {
        let directory = try TemporaryDirectory("fstore")
        let store = try Self.open(directory)
        let key = TransferKey(queue: InstanceID(bytes: [UInt8](repeating: 9, count: 16))!, sequence: 3)
        try store.prepare(key, keeping: 0)
        try store.write(key, offset: 0, data: Array("ab".utf8))
        try store.write(key, offset: 2, data: Array("cX".utf8))
        #expect(try store.partials() == [key: 4])
        try store.prepare(key, keeping: 3)
        #expect(try Self.open(directory).partials() == [key: 3])
        #expect(
            DataCommandHex.hex(try store.digest(key))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        try store.deliver(key)
        #expect(try store.partials().isEmpty && store.inboxFiles() == [key])
        #expect(FileManager.default.contents(atPath: store.inboxPath(key)) == Data("abc".utf8))
        try store.discard(key)
        #expect(try store.inboxFiles().isEmpty)
    }
}

/// Lowercase hex for the digests above.
enum DataCommandHex {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
