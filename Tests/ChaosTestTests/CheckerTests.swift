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

    @Test("every edit's weight is one the CLIs accept, however many edits a long run makes")
    func weightsStayWithinTheCLIsBound() {
        // The 2-hour endurance run made 312,052 edits; from edit 100,001 on, a weight of the bare
        // number was refused by the CLI (exit 64) and counted as indeterminate.
        for number in [0, 1, 99_999, 100_000, 100_001, 312_008, 5_000_000] {
            for phone in [false, true] {
                let weight = WorkloadShape.weight(ofEdit: number, phone: phone)
                #expect(SetRecord.isValid(weight: weight), "edit \(number) weighs \(weight)")
            }
            #expect(
                WorkloadShape.weight(ofEdit: number, phone: false) != WorkloadShape.weight(ofEdit: number, phone: true))
        }
    }

    @Test("an edit the CLI refused for its command line (exit 64) fails the run, never passes as indeterminate")
    func malformedEditsFailTheRun() {
        let usage = CommandResult(
            status: 64, standardOutput: "",
            standardError: "Error: --weight must be a number from 0 to 100000\nUsage: watchctl complete …")
        #expect(EditOutcome(usage) == .malformed)
        let records = [
            EditRecord(
                number: 1, side: .watch, kind: .complete, run: "RUN", outcome: .malformed, detail: usage.transcript)
        ]
        let result = Checker.check(
            Checker.Inputs(records: records, phoneRuns: [], watchRuns: [], stubs: [], workoutFiles: [], phoneLog: ""))
        #expect(result.malformed == 1)
        #expect(result.indeterminate == 0)
        #expect(!result.passed)
        #expect(result.problems.contains { $0.contains("malformed: edit #1") && $0.contains("--weight") })
    }
}
