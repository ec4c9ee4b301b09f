import LinkRuntime
import TestSupport
import Testing

@Suite("LinkStateDirectory starts")
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
}
