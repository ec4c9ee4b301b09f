import TestSupport
import Testing
import WorkoutModel

@Suite("The workout-status rule (seed 001)")
struct WorkoutStatusTests {
    @Test("a new run is not started, with no end and the flow at its first set")
    func newRun() throws {
        let run = try startedRun()
        #expect(run.status == .notStarted)
        #expect(run.endedAt == nil)
        #expect(run.currentStateIndex == 0)
        #expect(run.logs.map(\.resolution) == [.notStarted, .notStarted])
    }

    @Test("notStarted → inProgress when any log starts")
    func startsOnFirstSet() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        #expect(run.status == .inProgress)
        #expect(run.logs[0].resolution == .inProgress)
        #expect(run.currentStateIndex == 1)
        #expect(run.updatedAt == at(10))
    }

    @Test("notStarted → inProgress when the first log is skipped")
    func startsOnSkip() throws {
        var run = try startedRun()
        try run.skipLog(logID: run.logs[0].id, at: at(10))
        #expect(run.status == .inProgress)
        #expect(run.currentStateIndex == 2)
    }

    @Test("inProgress → completed when every log is resolved, end stamped at the resolving edit")
    func completesWhenAllResolved() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        try run.completeSet(logID: run.logs[0].id, setIndex: 1, reps: 4, weight: 100, at: at(20))
        #expect(run.logs[0].resolution == .completed)
        #expect(run.status == .inProgress)
        try run.skipLog(logID: run.logs[1].id, at: at(30))
        #expect(run.status == .completed)
        #expect(run.endedAt == at(30))
        #expect(run.currentStateIndex == run.totalSetCount)
        #expect(!run.isActive)
    }

    @Test("inProgress → notStarted when every log is reset")
    func resetsToNotStarted() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        try run.undoSet(logID: run.logs[0].id, setIndex: 0, at: at(20))
        #expect(run.status == .notStarted)
        #expect(run.logs[0].resolution == .notStarted)
        #expect(run.endedAt == nil)
        #expect(run.currentStateIndex == 0)
    }

    @Test("completed → inProgress when a completed log is reopened, end cleared")
    func reopenClearsEnd() throws {
        var run = try finishedRun()
        try run.reopenLog(logID: run.logs[0].id, at: at(100))
        #expect(run.status == .inProgress)
        #expect(run.endedAt == nil)
        #expect(run.logs[0].resolution == .inProgress)
        try run.completeSet(logID: run.logs[0].id, setIndex: 1, reps: 6, weight: 100, at: at(110))
        #expect(run.status == .completed)
        #expect(run.endedAt == at(110))
    }

    @Test("completed → inProgress when a skipped log is reopened")
    func reopenSkipped() throws {
        var run = try startedRun()
        try run.skipLog(logID: run.logs[0].id, at: at(1))
        try run.skipLog(logID: run.logs[1].id, at: at(2))
        #expect(run.status == .completed)
        try run.reopenLog(logID: run.logs[1].id, at: at(3))
        #expect(run.status == .inProgress)
        #expect(run.currentStateIndex == 2)
    }

    @Test("undoing a set of a completed run reopens it")
    func undoReopens() throws {
        var run = try finishedRun()
        try run.undoSet(logID: run.logs[0].id, setIndex: 1, at: at(100))
        #expect(run.status == .inProgress)
        #expect(run.logs[0].resolution == .inProgress)
        #expect(run.currentStateIndex == 1)
    }

    @Test("refused edits leave the run unchanged")
    func refusedEdits() throws {
        let run = try startedRun()
        var copy = run
        #expect(throws: MutationError.unknownLog(id(999))) {
            try copy.completeSet(logID: id(999), setIndex: 0, reps: 1, weight: 1, at: at(1))
        }
        #expect(throws: MutationError.setOutOfRange(log: run.logs[1].id, index: 1, count: 1)) {
            try copy.completeSet(logID: run.logs[1].id, setIndex: 1, reps: 1, weight: 1, at: at(1))
        }
        #expect(throws: MutationError.self) {
            try copy.completeSet(logID: run.logs[0].id, setIndex: 0, reps: -1, weight: 1, at: at(1))
        }
        #expect(throws: MutationError.self) {
            try copy.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 1, weight: .nan, at: at(1))
        }
        #expect(throws: MutationError.setNotDone(log: run.logs[0].id, index: 0)) {
            try copy.undoSet(logID: run.logs[0].id, setIndex: 0, at: at(1))
        }
        #expect(throws: MutationError.logNotResolved(run.logs[0].id)) {
            try copy.reopenLog(logID: run.logs[0].id, at: at(1))
        }
        #expect(throws: MutationError.notPaused) { try copy.resume(at: at(1)) }
        #expect(copy == run)
        try copy.skipLog(logID: run.logs[0].id, at: at(2))
        let skipped = copy
        #expect(throws: MutationError.logAlreadyResolved(run.logs[0].id)) {
            try copy.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 1, weight: 1, at: at(3))
        }
        #expect(copy == skipped)
    }

    private func finishedRun() throws -> WorkoutDocument {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        try run.completeSet(logID: run.logs[0].id, setIndex: 1, reps: 5, weight: 100, at: at(20))
        try run.completeSet(logID: run.logs[1].id, setIndex: 0, reps: 10, weight: 40, at: at(30))
        #expect(run.status == .completed)
        return run
    }
}

@Suite("Person-level mutations")
struct MutationTests {
    @Test("a run is a snapshot: editing the split afterwards never rewrites it")
    func snapshotIndependence() throws {
        var split = twoExerciseSplit()
        let run = try WorkoutDocument.start(from: split, id: id(100), at: t0)
        let before = run
        split.name = "Renamed"
        split.exercises[0].targetReps = 12
        split.exercises.remove(at: 1)
        #expect(run == before)
        #expect(run.splitName == "Legs & Back")
        #expect(run.logs.map(\.exerciseName) == ["Squat", "Row"])
        #expect(run.logs[0].targetReps == 5)
        #expect(run.logs[0].sets.count == 2)
    }

    @Test("log IDs are distinct, valid and derived from the run ID")
    func logIDs() throws {
        let run = try startedRun()
        #expect(Set(run.logs.map(\.id)).count == 2)
        #expect(run.logs.allSatisfy { $0.id.rawValue.hasPrefix(String(run.id.rawValue.dropLast(4))) })
    }

    @Test("a split without exercises cannot start a run")
    func emptySplit() {
        let split = SplitDocument(id: id(1), name: "Empty", exercises: [], updatedAt: t0)
        #expect(throws: MutationError.splitHasNoExercises(split: id(1))) {
            try WorkoutDocument.start(from: split, id: id(2), at: t0)
        }
    }

    @Test("end keeping progress skips unfinished logs, keeps done sets, and completes the run")
    func endKeepingProgress() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))
        try run.endKeepingProgress(at: at(20))
        #expect(run.status == .completed)
        #expect(run.endedAt == at(20))
        #expect(run.logs.map(\.resolution) == [.skipped, .skipped])
        #expect(run.logs[0].sets[0].reps == 5)
        #expect(throws: MutationError.runCompleted(run.id)) { try run.endKeepingProgress(at: at(30)) }
    }

    @Test("end keeping progress keeps already completed logs completed")
    func endKeepsCompletedLogs() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[1].id, setIndex: 0, reps: 10, weight: 40, at: at(10))
        try run.endKeepingProgress(at: at(20))
        #expect(run.logs.map(\.resolution) == [.skipped, .completed])
    }

    @Test("paused time is excluded from the active duration")
    func pauseArithmetic() throws {
        var run = try startedRun()
        try run.pause(at: at(60))
        #expect(run.isPaused)
        #expect(throws: MutationError.alreadyPaused) { try run.pause(at: at(61)) }
        try run.resume(at: at(90))
        try run.pause(at: at(120))
        #expect(run.activeDuration(until: at(150)) == .seconds(120 - 30))  // second pause still open
        try run.resume(at: at(180))
        #expect(run.activeDuration(until: at(200)) == .seconds(200 - 30 - 60))
    }

    @Test("a run that completes while paused closes the pause at its end")
    func completeWhilePaused() throws {
        var run = try startedRun()
        try run.pause(at: at(60))
        try run.endKeepingProgress(at: at(100))
        #expect(!run.isPaused)
        #expect(run.activeDuration() == .seconds(60))
        #expect(throws: MutationError.runCompleted(run.id)) { try run.pause(at: at(120)) }
    }

    @Test("session metrics: active duration without pauses, sets done and volume")
    func metrics() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(30))
        try run.pause(at: at(40))
        try run.resume(at: at(100))
        try run.completeSet(logID: run.logs[1].id, setIndex: 0, reps: 10, weight: 42.5, at: at(160))
        try run.endKeepingProgress(at: at(200))
        let metrics = run.sessionMetrics(recordedAt: at(205))
        #expect(metrics == SessionMetrics(activeSeconds: 140, setsCompleted: 2, totalVolume: 925, recordedAt: at(205)))
        run.recordMetrics(metrics, at: at(206))
        #expect(run.metrics == metrics)
        #expect(run.status == .completed)
        #expect(run.updatedAt == at(206))
    }

    @Test("flow positions map state indexes to log and set")
    func positions() throws {
        let run = try startedRun()
        #expect(run.position(ofStateIndex: 0)! == (0, 0))
        #expect(run.position(ofStateIndex: 1)! == (0, 1))
        #expect(run.position(ofStateIndex: 2)! == (1, 0))
        #expect(run.position(ofStateIndex: 3) == nil)
    }
}
