import Testing
import WorkoutModel

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

    @Test("an acknowledged end counts as lost unless the phone's final copy of the run is completed")
    func acknowledgedEndMustLeaveTheRunCompleted() throws {
        let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!
        let split = SplitDocument(
            id: DocumentID(bytes: [UInt8](repeating: 0x11, count: 16)), name: "Split",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 1, targetReps: 5, targetWeight: 100)
            ],
            updatedAt: t0)
        func run(_ byte: UInt8) throws -> WorkoutDocument {
            try WorkoutDocument.start(
                from: split, id: DocumentID(bytes: [UInt8](repeating: byte, count: 16)),
                at: Stamp(time: t0, origin: .phone))
        }
        let ended = try {
            var run = try run(0x22)
            try run.endKeepingProgress(at: Stamp(time: t0.advanced(by: .seconds(60)), origin: .phone))
            return run
        }()
        let stillActive = try run(0x33)
        let records = [ended, stillActive].enumerated().map { number, run in
            EditRecord(number: number + 1, side: .phone, kind: .end, run: run.id.description, outcome: .acknowledged)
        }
        let result = Checker.check(
            Checker.Inputs(
                records: records, phoneRuns: [ended, stillActive], watchRuns: [], stubs: [], workoutFiles: [],
                phoneLog: ""))
        #expect(result.lost == 1)
        #expect(result.problems.contains { $0.contains("end #2") && $0.contains(stillActive.id.description) })
    }
}
