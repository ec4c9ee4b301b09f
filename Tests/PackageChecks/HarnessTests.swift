import Foundation
import TestSupport
import Testing

@Suite("Test harness")
struct HarnessTests {
    @Test("a spawned process is awaited by its readiness line and stopped by a signal")
    func readinessAndStop() async throws {
        // Sleeps far longer than any stall: a full run once resumed this test after its 60 s sleep
        // had ended by itself (exit 0), so the SIGTERM found nothing to stop.
        let child = try DaemonProcess(
            executable: "/bin/sh", arguments: ["-c", "echo starting; sleep 0.2; echo ready port=4242; exec sleep 3600"])
        let line = try await child.waitForLine(containing: "ready port=")
        #expect(line == "ready port=4242")
        child.send(SIGTERM)
        let status = try await child.waitForExit()
        #expect(status == SIGTERM)
        #expect(!child.isRunning)
    }

    @Test("waiting on a process that exits first fails with its output")
    func exitBeforeReadiness() async throws {
        let child = try DaemonProcess(executable: "/bin/sh", arguments: ["-c", "echo config error >&2; exit 3"])
        await #expect(throws: DaemonProcess.Failure.self) {
            _ = try await child.waitForLine(containing: "ready")
        }
        #expect(try await child.waitForExit() == 3)
        #expect(child.standardError.contains("config error"))
    }

    @Test("a hang guard judges a check by when it began: a late answer to an early check gets another check")
    func pollingJudgesByStart() async throws {
        // The first check begins in time but answers after the deadline (its task waited for a
        // thread); the condition holds by the next. CI failed a link test this way, status stale.
        var checks = 0
        try await pollUntil(timeout: .milliseconds(50), every: .milliseconds(1)) {
            checks += 1
            if checks == 1 { try await Task.sleep(for: .milliseconds(200)) }
            return checks > 1
        } expired: {
            HangGuardExpired(waitingFor: "the second check", recorded: checks)
        }
        #expect(checks == 2)
        // A condition that never holds still expires, on a check begun after the deadline.
        let start = ContinuousClock.now
        await #expect(throws: HangGuardExpired.self) {
            try await pollUntil(timeout: .milliseconds(50), every: .milliseconds(5)) {
                false
            } expired: {
                HangGuardExpired(waitingFor: "never", recorded: 0)
            }
        }
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test("the manual clock wakes sleepers only when advanced past their deadline")
    func manualClock() async throws {
        let clock = ManualClock()
        let woke = Task { () -> ManualClock.Instant in
            try await clock.sleep(until: clock.now.advanced(by: .seconds(5)))
            return clock.now
        }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        #expect(try await woke.value == ManualClock.Instant(offset: .seconds(5)))
    }

    @Test("temporary directories are unique and removed with their owner")
    func temporaryDirectories() throws {
        var path = ""
        do {
            let first = try TemporaryDirectory("harness")
            let second = try TemporaryDirectory("harness")
            #expect(first.path != second.path)
            path = first.path
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try freeLoopbackPort() > 0)
    }
}
