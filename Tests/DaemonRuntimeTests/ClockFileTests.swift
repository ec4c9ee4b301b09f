import DaemonRuntime
import Foundation
import TestSupport
import Testing
import WorkoutModel

@Suite("The persisted clock high-water mark")
struct ClockFileTests {
    @Test("absent at first, then what was persisted, across a fresh reader (a restart)")
    func roundTrip() throws {
        let directory = try TemporaryDirectory("clock")
        let file = ClockFile(stateDirectory: directory.path)
        #expect(try file.read() == nil)
        let mark = Stamp(time: Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000), counter: 4, origin: .watch)
        try file.persist(mark)
        let restarted = ClockFile(stateDirectory: directory.path)
        #expect(try restarted.read() == mark)
        var clock = HybridLogicalClock(origin: .watch, highWater: try restarted.read())
        #expect(clock.stamp(at: Timestamp(microsecondsSinceEpoch: 0)) > mark)
    }

    @Test("a file that does not hold a stamp is an error naming the file")
    func garbage() throws {
        let directory = try TemporaryDirectory("clock")
        try Data("yesterday\n".utf8).write(to: URL(fileURLWithPath: directory.appending("clock")))
        let file = ClockFile(stateDirectory: directory.path)
        do {
            _ = try file.read()
            Issue.record("read a clock file without a stamp")
        } catch {
            #expect("\(error)".contains(directory.appending("clock")))
        }
    }
}
