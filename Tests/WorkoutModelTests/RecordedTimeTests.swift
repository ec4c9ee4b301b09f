import Testing
import WorkoutModel

/// The times a person reads (start, completions, pauses, end) are the wall-clock times of their
/// actions, recorded beside the stamps that order the edits (the Seams issue, items 4 and 5).
@Suite("Recorded times")
struct RecordedTimeTests {
    func phone(_ seconds: Int, counter: Int = 0) -> Stamp { Stamp(time: at(seconds), counter: counter, origin: .phone) }
    func watch(_ seconds: Int) -> Stamp { Stamp(time: at(seconds), origin: .watch) }

    @Test(
        "a hybrid clock held an hour ahead by a peer never freezes a run done on the phone: its times are the wall clock's"
    )
    func frozenMergeClock() throws {
        // The phone's clock has seen the watch's, an hour fast: every stamp it issues has that time.
        let ahead = 3_600
        var run = try WorkoutDocument.start(
            from: twoExerciseSplit(), id: id(100), at: phone(ahead, counter: 1), time: at(0))
        try run.completeSet(
            logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: phone(ahead, counter: 2), time: at(30))
        try run.pause(at: phone(ahead, counter: 3), time: at(40))
        try run.resume(at: phone(ahead, counter: 4), time: at(50))
        try run.endKeepingProgress(at: phone(ahead, counter: 5), time: at(64))
        #expect(run.startedAt == at(0))
        #expect(run.logs[0].sets[0].completedAt == at(30))
        #expect(run.pauses == [PauseInterval(start: at(40), end: at(50))])
        #expect(run.endedAt == at(64))
        #expect(run.activeDuration() == .seconds(54))
        #expect(run.updatedAt == at(ahead), "the stamps still order the edits")
    }

    @Test("a clock stepped back never records a time before the one it follows: durations are never negative")
    func steppedBack() throws {
        var run = try WorkoutDocument.start(from: twoExerciseSplit(), id: id(100), at: phone(100), time: at(100))
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: phone(101), time: at(20))
        #expect(run.logs[0].sets[0].completedAt == at(100))
        try run.pause(at: phone(102), time: at(10))
        try run.resume(at: phone(103), time: at(5))
        #expect(run.pauses == [PauseInterval(start: at(100), end: at(100))])
        try run.endKeepingProgress(at: phone(104), time: at(0))
        #expect(run.endedAt == at(100))
        #expect(run.activeDuration() == .zero)
    }

    @Test(
        "the edit that completes a run stamps the end with its own time, even when a merge left an older end behind"
    )
    func staleEndingIsReplaced() throws {
        let start = try startedRun()
        let (squat, row) = (start.logs[0].id, start.logs[1].id)
        // The phone completes every set by 10 (ended at 10); the watch, concurrently, completed the
        // first squat at 5 and undid it at 12: the merge is in progress, with the phone's end at 10.
        var phoneCopy = start
        try phoneCopy.completeSet(logID: squat, setIndex: 0, reps: 5, weight: 100, at: phone(8))
        try phoneCopy.completeSet(logID: squat, setIndex: 1, reps: 5, weight: 100, at: phone(9))
        try phoneCopy.completeSet(logID: row, setIndex: 0, reps: 10, weight: 40, at: phone(10))
        var watchCopy = start
        try watchCopy.completeSet(logID: squat, setIndex: 0, reps: 5, weight: 100, at: watch(5))
        try watchCopy.undoSet(logID: squat, setIndex: 0, at: watch(12))
        var merged = try phoneCopy.merged(with: watchCopy)
        #expect(merged.status == .inProgress)
        #expect(merged.ending.at == at(10), "the concurrent end's time is still in the register")
        // Two days later the squat is done again: the run ends now, not two days early.
        let later = 2 * 86_400
        try merged.completeSet(logID: squat, setIndex: 0, reps: 6, weight: 100, at: phone(later))
        #expect(merged.status == .completed)
        #expect(merged.endedAt == at(later))
        #expect(merged.activeDuration() == .seconds(later))
    }
}

/// The helper's item 9 left one way past the run-size bound open: pauses.
@Suite("Pauses are bounded")
struct PauseBoundTests {
    @Test("a run pauses at most as often as its split's size bound allows for; the next pause is refused")
    func pauseBound() throws {
        var run = try startedRun()
        for index in 0..<SplitDocument.runSizePauseAllowance {
            try run.pause(at: Stamp(time: at(2 * index + 1), origin: .phone))
            try run.resume(at: Stamp(time: at(2 * index + 2), origin: .phone))
        }
        let before = run
        #expect(throws: MutationError.tooManyPauses(limit: SplitDocument.runSizePauseAllowance)) {
            try run.pause(at: Stamp(time: at(1_000), origin: .phone))
        }
        #expect(run == before)
    }
}
