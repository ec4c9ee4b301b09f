import Testing

@testable import chaostest

/// The testers' end-of-run checks (issue 14, item 19).
@Suite("chaostest checks")
struct CheckerTests {
    @Test("a failed read of the phone's final state fails the run as unread, never as lost edits")
    func unreadFinalStateIsNotLoss() {
        let records = (1...3).map { number in
            EditRecord(number: number, side: .watch, kind: .complete, run: "RUN", outcome: .acknowledged)
        }
        let inputs = Checker.Inputs(
            records: records, phoneRuns: nil, watchRuns: [], stubs: [], workoutFiles: [], phoneLog: "")
        let result = Checker.check(inputs)
        #expect(result.lost == 0)
        #expect(result.acknowledged == 3)
        #expect(result.finalStateUnread)
        #expect(!result.passed)
        #expect(result.problems.contains { $0.contains("could not read the phone's final state") })
    }
}
