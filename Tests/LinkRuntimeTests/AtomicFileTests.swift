import Foundation
import LinkRuntime
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
}
