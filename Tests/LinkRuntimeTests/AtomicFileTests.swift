import DurableFiles
import Foundation
import POSIX
import TestSupport
import Testing

@Suite("AtomicFile")
struct AtomicFileTests {
    @Test("writes, reads back and overwrites whole contents")
    func writeReadOverwrite() throws {
        let dir = try TemporaryDirectory("atomic")
        let path = dir.appending("state")
        #expect(try AtomicFile.read(path) == nil)
        try AtomicFile.write([1, 2, 3, 4, 5], to: path)
        #expect(try AtomicFile.read(path) == [1, 2, 3, 4, 5])
        try AtomicFile.write([9], to: path)
        #expect(try AtomicFile.read(path) == [9])
        try AtomicFile.write([], to: path)
        #expect(try AtomicFile.read(path) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["state"])
    }

    @Test("sweeping removes leftover temporary files and nothing else")
    func sweep() throws {
        let dir = try TemporaryDirectory("atomic")
        try AtomicFile.write([7], to: dir.appending("state"))
        for leftover in [".state.tmp-1f2e", ".other.tmp-abc"] {
            #expect(FileManager.default.createFile(atPath: dir.appending(leftover), contents: Data([0])))
        }
        #expect(FileManager.default.createFile(atPath: dir.appending(".hidden"), contents: Data([0])))
        #expect(try AtomicFile.sweepTemporaryFiles(in: dir.path) == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == [".hidden", "state"])
        #expect(try AtomicFile.sweepTemporaryFiles(in: dir.path) == 0)
        #expect(try AtomicFile.read(dir.appending("state")) == [7])
    }

    @Test("a write into a missing directory fails naming the path")
    func missingDirectory() throws {
        let dir = try TemporaryDirectory("atomic")
        let error = try #require(throws: SystemCallError.self) {
            try AtomicFile.write([1], to: dir.appending("absent/state"))
        }
        #expect(error.call == "open")
        #expect(error.path?.hasPrefix(dir.appending("absent/")) == true)
        #expect(error.description.contains("No such file or directory"))
    }

    @Test("with a spare, the file a replace frees nothing: the one it replaced is written next time")
    func spareReused() throws {
        let dir = try TemporaryDirectory("atomic")
        let (path, spare) = (dir.appending("run.json"), dir.appending("spares/run.json"))
        try FileManager.default.createDirectory(atPath: dir.appending("spares"), withIntermediateDirectories: true)
        try AtomicFile.writeUnsynced(Array("one".utf8), to: path, reusing: spare)
        let first = try FileStatus(of: path).inode
        try AtomicFile.writeUnsynced(Array("two, longer".utf8), to: path, reusing: spare)
        let second = try FileStatus(of: path).inode
        #expect(second != first)
        #expect(try FileStatus(of: spare).inode == first)
        #expect(try AtomicFile.read(spare) == Array("one".utf8))
        try AtomicFile.writeUnsynced(Array("three".utf8), to: path, reusing: spare)
        #expect(try FileStatus(of: path).inode == first)
        #expect(try FileStatus(of: path).linkCount == 1)
        #expect(try AtomicFile.read(path) == Array("three".utf8))
        #expect(try AtomicFile.read(spare) == Array("two, longer".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["run.json", "spares"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.appending("spares")) == ["run.json"])
    }

    @Test("a spare that is a link, has a second name or is in the way is passed over; what it named is untouched")
    func hostileSpare() throws {
        let dir = try TemporaryDirectory("atomic")
        let (path, spare, victim) = (dir.appending("run.json"), dir.appending("spare"), dir.appending("victim"))
        try AtomicFile.write(Array("theirs".utf8), to: victim)
        let planted: [(String, () throws -> Void)] = [
            (
                "a symbolic link",
                { try FileManager.default.createSymbolicLink(atPath: spare, withDestinationPath: victim) }
            ),
            ("a second name", { try FileSystem.link(victim, to: spare) }),
            (
                "a folder",
                {
                    try FileManager.default.createDirectory(
                        atPath: "\(spare)/inside", withIntermediateDirectories: true)
                }
            ),
        ]
        for (index, (what, plant)) in planted.enumerated() {
            try? FileManager.default.removeItem(atPath: spare)
            try plant()
            let text = "ours \(index)"
            try AtomicFile.writeUnsynced(Array(text.utf8), to: path, reusing: spare)
            #expect(try AtomicFile.read(path) == Array(text.utf8), "\(what)")
            #expect(try AtomicFile.read(victim) == Array("theirs".utf8), "\(what)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.contains(".tmp-") })
    }

    @Test("a leftover of a replace cut short does not stop the next one")
    func leftoverPrevious() throws {
        let dir = try TemporaryDirectory("atomic")
        let (path, spare) = (dir.appending("run.json"), dir.appending("spare"))
        try AtomicFile.writeUnsynced(Array("one".utf8), to: path, reusing: spare)
        // A crash between the link and the last rename leaves the replaced file under this name.
        try AtomicFile.write(Array("stale".utf8), to: dir.appending("%previous"))
        try AtomicFile.writeUnsynced(Array("two".utf8), to: path, reusing: spare)
        try AtomicFile.writeUnsynced(Array("three".utf8), to: path, reusing: spare)
        #expect(try AtomicFile.read(path) == Array("three".utf8))
        #expect(try AtomicFile.read(spare) == Array("two".utf8))
        #expect(!FileManager.default.fileExists(atPath: dir.appending("%previous")))
    }
}
