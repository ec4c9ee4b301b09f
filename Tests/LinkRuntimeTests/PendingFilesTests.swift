import DurableFiles
import Foundation
import POSIX
import Synchronization
import TestSupport
import Testing

@Suite("PendingFiles: durable in a record, published without a sync, put back after a crash")
struct PendingFilesTests {
    /// A root with a `Runs` folder and the record beside it.
    struct Scratch {
        let directory: TemporaryDirectory
        var root: String { directory.appending("root") }
        var record: String { directory.appending("pending") }
        init() throws {
            directory = try TemporaryDirectory("pending")
            try FileManager.default.createDirectory(atPath: "\(root)/Runs", withIntermediateDirectories: true)
        }
        func open() throws -> PendingFiles { try PendingFiles(record: record, root: root) }
        func file(_ name: String) throws -> String? {
            try AtomicFile.read("\(root)/Runs/\(name)").map { String(decoding: $0, as: UTF8.self) }
        }
        /// A change by someone else, in place (the inode a publish left; every publish makes a new one).
        func edit(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: "\(root)/Runs/\(name)"))
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("a write leaves the file until its publish; a second publish with nothing new does nothing")
    func writeThenPublish() throws {
        let scratch = try Scratch()
        let pending = try scratch.open()
        try pending.write(Self.bytes("one"), at: "Runs/a")
        #expect(try scratch.file("a") == nil)
        #expect(pending.unpublished(at: "Runs/a") == Self.bytes("one"))
        pending.publish("Runs/a")
        #expect(try scratch.file("a") == "one")
        #expect(pending.unpublished(at: "Runs/a") == nil)
        try scratch.edit("a", "theirs")
        pending.publish("Runs/a")
        #expect(try scratch.file("a") == "theirs")
    }

    @Test("a write whose publish never took effect is put back at the next open, new file or replaced")
    func putBack() throws {
        let scratch = try Scratch()
        let first = try scratch.open()
        try first.write(Self.bytes("old"), at: "Runs/b")
        first.publish("Runs/b")
        // A kill between the write and the publish: a new file, and a file replaced twice over.
        try first.write(Self.bytes("new"), at: "Runs/a")
        try first.write(Self.bytes("newer"), at: "Runs/b")
        try first.write(Self.bytes("newest"), at: "Runs/b")
        _ = try scratch.open()
        #expect(try scratch.file("a") == "new")
        #expect(try scratch.file("b") == "newest")
        // The record is empty once they are back: a later change is the file's own.
        try scratch.edit("b", "theirs")
        _ = try scratch.open()
        #expect(try scratch.file("b") == "theirs")
    }

    @Test("a file changed or removed by someone else after the publish is left as it is (but a new one removed)")
    func othersChangesKept() throws {
        let scratch = try Scratch()
        let first = try scratch.open()
        try first.write(Self.bytes("mine"), at: "Runs/a")
        first.publish("Runs/a")
        try first.write(Self.bytes("mine"), at: "Runs/b")
        first.publish("Runs/b")
        _ = try scratch.open()
        try first.write(Self.bytes("mine again"), at: "Runs/a")
        first.publish("Runs/a")
        try first.write(Self.bytes("mine too"), at: "Runs/b")
        first.publish("Runs/b")
        try first.write(Self.bytes("new"), at: "Runs/c")
        first.publish("Runs/c")
        // The daemon is down (a crash: the record still holds both); someone edits one, removes the other.
        try scratch.edit("a", "theirs")
        try FileManager.default.removeItem(atPath: "\(scratch.root)/Runs/b")
        try FileManager.default.removeItem(atPath: "\(scratch.root)/Runs/c")
        _ = try scratch.open()
        #expect(try scratch.file("a") == "theirs")
        #expect(try scratch.file("b") == nil)
        // A file that was new at its write, missing now, cannot be told from a publish that never
        // took effect: it comes back (docs/PROTOCOL.md, "On disk").
        #expect(try scratch.file("c") == "new")
    }

    @Test("a removal leaves the record first: the next open never brings the file back")
    func removal() throws {
        let scratch = try Scratch()
        let pending = try scratch.open()
        try pending.write(Self.bytes("one"), at: "Runs/a")
        try pending.remove("Runs/a")
        #expect(pending.unpublished(at: "Runs/a") == nil)
        _ = try scratch.open()
        #expect(try scratch.file("a") == nil)
    }

    @Test("at most 8 stay pending: the ninth write publishes and syncs the others and drops them")
    func bounded() throws {
        let scratch = try Scratch()
        let pending = try scratch.open()
        for index in 1...9 { try pending.write(Self.bytes("run \(index)"), at: "Runs/\(index)") }
        for index in 1...8 {
            #expect(try scratch.file("\(index)") == "run \(index)")
            #expect(pending.unpublished(at: "Runs/\(index)") == nil)
        }
        #expect(try scratch.file("9") == nil)
        #expect(pending.unpublished(at: "Runs/9") == Self.bytes("run 9"))
        // Only the ninth is in the record: the others' changes since are theirs.
        for index in 1...8 { try scratch.edit("\(index)", "theirs") }
        _ = try scratch.open()
        #expect(try scratch.file("1") == "theirs")
        #expect(try scratch.file("9") == "run 9")
    }

    @Test("a publish that fails leaves the file; the next open puts the bytes back")
    func failedPublish() throws {
        let scratch = try Scratch()
        let fail = Atomic(true)
        let pending = try PendingFiles(record: scratch.record, root: scratch.root) { path, _, bytes in
            if fail.load(ordering: .relaxed) { throw PendingRecordError(description: "injected") }
            try AtomicFile.writeUnsynced(bytes, to: path)
        }
        try pending.write(Self.bytes("one"), at: "Runs/a")
        pending.publish("Runs/a")
        #expect(try scratch.file("a") == nil)
        fail.store(false, ordering: .relaxed)
        _ = try scratch.open()
        #expect(try scratch.file("a") == "one")
    }

    @Test(
        "files their folder refuses (a read-only file system) stay pending past the limit, durable in the record, until a write settles them"
    )
    func folderRefuses() throws {
        let scratch = try Scratch()
        let refuse = Atomic(true)
        let open = {
            try PendingFiles(record: scratch.record, root: scratch.root) { path, _, bytes in
                if refuse.load(ordering: .relaxed) {
                    throw SystemCallError(call: "rename", errno: EROFS, path: path)
                }
                try AtomicFile.writeUnsynced(bytes, to: path)
            }
        }
        let pending = try open()
        // Before: the ninth write's settle threw, and the daemon stopped on a failed durable write.
        for index in 1...12 {
            try pending.write(Self.bytes("run \(index)"), at: "Runs/\(index)")
            pending.publish("Runs/\(index)")
        }
        #expect(pending.settleFailure?.contains("Read-only file system") == true, "\(pending.settleFailure ?? "nil")")
        for index in 1...12 {
            #expect(try scratch.file("\(index)") == nil)
            #expect(pending.unpublished(at: "Runs/\(index)") == Self.bytes("run \(index)"))
        }
        // A kill meanwhile loses nothing: the record holds all twelve (put back once writable).
        refuse.store(false, ordering: .relaxed)
        let reopened = try open()
        for index in 1...12 { #expect(try scratch.file("\(index)") == "run \(index)") }
        #expect(reopened.settleFailure == nil)

        // Without a restart: the first write once the folder takes files again settles them all.
        refuse.store(true, ordering: .relaxed)
        for index in 1...10 { try reopened.write(Self.bytes("again \(index)"), at: "Runs/\(index)") }
        #expect(reopened.settleFailure != nil)
        refuse.store(false, ordering: .relaxed)
        try reopened.write(Self.bytes("after"), at: "Runs/11")
        #expect(reopened.settleFailure == nil)
        for index in 1...10 {
            #expect(try scratch.file("\(index)") == "again \(index)")
            #expect(reopened.unpublished(at: "Runs/\(index)") == nil)
        }
        #expect(reopened.unpublished(at: "Runs/11") == Self.bytes("after"))
    }

    @Test("a damaged or hostile record is reported, puts nothing back, and the next write replaces it")
    func damaged() throws {
        let records = [
            Self.bytes("garbage"), Self.entry("../escape"), Self.entry("Runs//a"), Self.entry("Runs/a\u{0}b"),
            Self.entry(name: Array("Runs/".utf8) + [0xFF]),
        ]
        for record in records {
            let scratch = try Scratch()
            try RecordFile(path: scratch.record).write(record)
            let pending = try scratch.open()
            #expect(pending.damage != nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: "\(scratch.root)/Runs").isEmpty)
            #expect(!FileManager.default.fileExists(atPath: "\(scratch.directory.path)/escape"))
            try pending.write(Self.bytes("one"), at: "Runs/a")
            let reopened = try scratch.open()
            #expect(reopened.damage == nil)
            #expect(try scratch.file("a") == "one")
        }
    }

    /// One record entry for `path`, no file before it, bytes "x".
    static func entry(_ path: String) -> [UInt8] { entry(name: Array(path.utf8)) }

    /// One record entry named by raw bytes, no file before it, bytes "x".
    static func entry(name: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes += withUnsafeBytes(of: UInt32(name.count).bigEndian, Array.init)
        bytes += name
        bytes.append(0)
        bytes += withUnsafeBytes(of: UInt32(1).bigEndian, Array.init)
        bytes.append(UInt8(ascii: "x"))
        return bytes
    }

    @Test("spares: one per published file, named apart, gone with their file and at the next open")
    func spares() throws {
        let scratch = try Scratch()
        let spares = scratch.directory.appending("spares")
        let pending = try PendingFiles(record: scratch.record, root: scratch.root, spares: spares)
        #expect(pending.spares == spares)
        try FileManager.default.createDirectory(atPath: "\(scratch.root)/Runs/a", withIntermediateDirectories: true)
        for (relative, text) in [("Runs/c", "1"), ("Runs/c", "2"), ("Runs/b", "3"), ("Runs/b", "4"), ("Runs/a/b", "5")]
        {
            try pending.write(Self.bytes(text), at: relative)
            pending.publish(relative)
        }
        #expect(try scratch.file("c") == "2")
        #expect(try scratch.file("b") == "4")
        #expect(try scratch.file("a/b") == "5")
        #expect(PendingFiles.spareName("Runs/a/b") != PendingFiles.spareName("Runs/a%2Fb"))
        let names = try FileManager.default.contentsOfDirectory(atPath: spares).sorted()
        #expect(names == ["Runs%2Fb", "Runs%2Fc"].sorted())
        #expect(try AtomicFile.read("\(spares)/Runs%2Fc") == Self.bytes("1"))
        try pending.remove("Runs/c")
        #expect(!FileManager.default.fileExists(atPath: "\(spares)/Runs%2Fc"))
        _ = try scratch.open()
        let reopened = try PendingFiles(record: scratch.record, root: scratch.root, spares: spares)
        #expect(reopened.spares == spares)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spares).isEmpty)
        #expect(try scratch.file("b") == "4")
    }

    @Test("spares: only those of the files published last are kept")
    func sparesBounded() throws {
        let scratch = try Scratch()
        let spares = scratch.directory.appending("spares")
        let pending = try PendingFiles(record: scratch.record, root: scratch.root, spares: spares, sparesKept: 2)
        for relative in ["Runs/a", "Runs/b", "Runs/c", "Runs/a", "Runs/b", "Runs/c", "Runs/a", "Runs/d", "Runs/d"] {
            try pending.write(Self.bytes(relative), at: relative)
            pending.publish(relative)
        }
        // A spare is the file a publish replaced (none at a file's first publish); each publish
        // past the second most recent file's drops the spare of the one published longest ago.
        #expect(try FileManager.default.contentsOfDirectory(atPath: spares).sorted() == ["Runs%2Fa", "Runs%2Fd"])
        #expect(try scratch.file("c") == "Runs/c" && scratch.file("a") == "Runs/a")
    }

    @Test("spares on another file system than the files are not used")
    func sparesElsewhere() throws {
        let scratch = try Scratch()
        // /dev/shm is a tmpfs; the scratch folder is not.
        let elsewhere = "/dev/shm/watchsync-spares-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let pending = try PendingFiles(record: scratch.record, root: scratch.root, spares: elsewhere)
        let apart = try FileStatus(of: "/dev/shm").device != FileStatus(of: scratch.root).device
        #expect((pending.spares == nil) == apart)
        try pending.write(Self.bytes("one"), at: "Runs/a")
        pending.publish("Runs/a")
        #expect(try scratch.file("a") == "one")
    }
}
