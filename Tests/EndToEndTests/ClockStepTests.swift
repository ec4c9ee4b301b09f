import Foundation
import TestSupport
import Testing
import WorkoutModel

/// Each daemon's wall clock stepped by hours while a run is live, as an administrator's `date -s`
/// or a bad NTP server would: libfaketime makes each process read `CLOCK_REALTIME` shifted by
/// what its file says, re-read at every call; the monotonic clock (heartbeats, timeouts) is left
/// alone, as a real step leaves it. Skipped where libfaketime is not installed
/// (scripts/install-deps installs it).
@Suite("Wall clocks stepped by hours", .enabled(if: FakeTime.library != nil))
struct ClockStepTests {
    @Test(
        "the watch stepped back 3 h and the phone forward 5 h mid-run: no set lost, no time before the one it follows")
    func stepsMidRun() async throws {
        let system = try SyncSystem("clock-step")
        let phoneClock = FakeTime(system.directory.appending("phone-clock"))
        let watchClock = FakeTime(system.directory.appending("watch-clock"))
        try phoneClock.set("+0")
        try watchClock.set("+0")
        try await system.startPhoned(environment: phoneClock.environment)
        try await system.startWatchd(environment: watchClock.environment)
        try await system.waitUntilLinked()
        let split = try await system.createSplit("Legs", ["Squat:5x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        _ = try await system.watch("complete", run, "1", "1")
        try await system.waitForPhoneRun(run, "has set 1") { $0.logs[0].sets[0].isDone }
        try watchClock.set("-3h")
        _ = try await system.watch("complete", run, "1", "2")
        try await system.waitForPhoneRun(run, "has set 2") { $0.logs[0].sets[1].isDone }
        try phoneClock.set("+5h")
        _ = try await system.phone("complete", run, "1", "3")
        try await system.waitForWatchRun(run, "has set 3") { $0.logs[0].sets[2].isDone }
        _ = try await system.watch("complete", run, "1", "4")
        try watchClock.set("+0")
        _ = try await system.watch("complete", run, "1", "5")

        let done = try await system.waitForPhoneRun(run, "is completed by its fifth set") {
            $0.status == .completed && $0.logs[0].sets.allSatisfy(\.isDone)
        }
        // Each recorded time is at or after the one it follows, whatever each clock said.
        let completions = done.logs[0].sets.compactMap(\.completedAt)
        #expect(completions.count == 5)
        #expect(completions.allSatisfy { $0 >= done.startedAt }, "\(completions) start \(done.startedAt)")
        let ended = try #require(done.endedAt)
        #expect(completions.allSatisfy { $0 <= ended }, "\(completions) end \(ended)")
        // The phone's step forward is time its person saw pass; nothing adds more than that.
        let lasted = done.startedAt.duration(to: ended)
        #expect(
            lasted >= .zero && lasted <= .seconds(5 * 3600 + 600),
            "\(lasted): start \(done.startedAt), \(completions), end \(ended)")
        #expect(done.activeDuration() <= lasted)
        #expect(try await system.watchRun(run)?.logs[0].sets.allSatisfy(\.isDone) == true)
        try await system.expectLinkNeverDropped()
    }
}

/// A process's wall clock shifted by libfaketime (`FAKETIME_TIMESTAMP_FILE`, read at every call).
struct FakeTime {
    /// The multithreaded build of the preload library, where Debian's libfaketime puts it.
    static let library: String? = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"].first {
        FileManager.default.fileExists(atPath: $0)
    }

    let file: String
    init(_ file: String) { self.file = file }

    /// `+0`, `-3h`, `+5h`: the offset from the real wall clock from now on.
    func set(_ offset: String) throws {
        try Data("\(offset)\n".utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }

    var environment: [String: String] {
        [
            "LD_PRELOAD": Self.library ?? "", "FAKETIME_TIMESTAMP_FILE": file, "FAKETIME_NO_CACHE": "1",
            "DONT_FAKE_MONOTONIC": "1",
        ]
    }
}
