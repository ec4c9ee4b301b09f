import DaemonRuntime
import Foundation
import LinkRuntime
import TestSupport
import Testing

@Suite("State files: the live version")
struct StateFilesTests {
    @Test("absent: nil; a decimal version: read; anything else refuses the start, naming the file")
    func liveVersion() throws {
        let directory = try TemporaryDirectory("state")
        #expect(try StateFiles.liveVersion(stateDirectory: directory.path) == nil)
        let path = directory.appending("live-version")
        try Data("1780000000123".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try StateFiles.liveVersion(stateDirectory: directory.path) == 1_780_000_000_123)
        for garbage in ["garbage", "100000000000000000000000", "-5", ""] {
            try Data(garbage.utf8).write(to: URL(fileURLWithPath: path))
            #expect {
                try StateFiles.liveVersion(stateDirectory: directory.path)
            } throws: { error in
                "\(error)".contains("malformed state file \(path)")
            }
        }
    }
}
