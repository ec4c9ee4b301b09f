import TestSupport
import WatchEngine
import WorkoutModel

/// A fixed instant tests count from: 2026-11-29T12:00:00Z.
let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!

/// The instant `seconds` after `t0`.
func at(_ seconds: Int) -> Timestamp { t0.advanced(by: .seconds(seconds)) }

/// A deterministic document ID: `n` in the last bytes.
func id(_ n: Int) -> DocumentID {
    var bytes = [UInt8](repeating: 0xCD, count: 16)
    bytes[10] = 0x77  // keep clear of the 4 hex digits run-derived log IDs replace
    bytes[12] = UInt8((n >> 24) & 0xFF)
    bytes[13] = UInt8((n >> 16) & 0xFF)
    bytes[14] = UInt8((n >> 8) & 0xFF)
    bytes[15] = UInt8(n & 0xFF)
    return DocumentID(bytes: bytes)
}

/// A split with two exercises: 2 sets of squats (5 × 100), 1 set of rows (10 × 40).
func twoExerciseSplit(_ n: Int = 1) -> SplitDocument {
    SplitDocument(
        id: id(n), name: "Legs & Back",
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 100),
            ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 1, targetReps: 10, targetWeight: 40),
        ],
        updatedAt: t0)
}

/// A not-started run of `twoExerciseSplit(split)` minted at `start`.
func newRun(_ n: Int = 100, split: Int = 1, at start: Timestamp = t0) throws -> WorkoutDocument {
    try WorkoutDocument.start(from: twoExerciseSplit(split), id: id(n), at: start)
}

/// A context holding `runs`, the default split and settings, and `locks`.
func context(
    _ runs: [WorkoutDocument], splits: [SplitDocument] = [twoExerciseSplit()], settings: Settings = Settings(),
    locks: EditLocks = EditLocks()
) -> ApplicationContext {
    ApplicationContext(splits: splits, workouts: runs, settings: settings, editLocks: locks)
}

/// The wire bytes of a context, as the phone sends them.
func bytes(_ context: ApplicationContext) -> [UInt8] { DocumentCoder.encodeCompact(context) }

/// The phone's side of a run: mutations stamped by the phone's own clock.
extension WorkoutDocument {
    /// The log ID at `index`.
    func log(_ index: Int) -> DocumentID { logs[index].id }

    /// A copy with every set done as planned and the run completed at `stamp` (the phone finished it).
    func completedOnPhone(at stamp: Timestamp) throws -> WorkoutDocument {
        var run = self
        var tick = stamp
        for (logIndex, log) in logs.enumerated() {
            for setIndex in log.sets.indices where !log.sets[setIndex].isDone {
                try run.completeSet(
                    logID: log.id, setIndex: setIndex, reps: logs[logIndex].targetReps,
                    weight: logs[logIndex].targetWeight, at: tick)
                tick = tick.advanced(by: .microseconds(1))
            }
        }
        return run
    }

    /// A copy with one set done on the phone at `stamp`.
    func setDoneOnPhone(log index: Int, set: Int = 0, at stamp: Timestamp) throws -> WorkoutDocument {
        var run = self
        try run.completeSet(logID: logs[index].id, setIndex: set, reps: 5, weight: 100, at: stamp)
        return run
    }
}

/// A watch edit's stamp at `seconds` after `t0` (counter 0: the watch's clock is ahead of every stamp seen).
func w(_ seconds: Int) -> Stamp { Stamp(time: at(seconds), origin: .watch) }
