import TestSupport
import WorkoutModel

/// A fixed instant tests count from: 2026-11-29T12:00:00Z.
let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!

/// A deterministic document ID: `n` in the last bytes.
func id(_ n: Int) -> DocumentID {
    var bytes = [UInt8](repeating: 0xAB, count: 16)
    bytes[12] = UInt8((n >> 24) & 0xFF)
    bytes[13] = UInt8((n >> 16) & 0xFF)
    bytes[14] = UInt8((n >> 8) & 0xFF)
    bytes[15] = UInt8(n & 0xFF)
    bytes[10] = 0x77  // keep clear of the 4 hex digits run-derived log IDs replace
    return DocumentID(bytes: bytes)
}

func at(_ seconds: Int) -> Timestamp { t0.advanced(by: .seconds(seconds)) }

/// A split with two exercises: 2 sets of squats, 1 set of rows.
func twoExerciseSplit(_ n: Int = 1) -> SplitDocument {
    SplitDocument(
        id: id(n), name: "Legs & Back",
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 100),
            ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 1, targetReps: 10, targetWeight: 40),
        ],
        updatedAt: t0)
}

func startedRun(_ n: Int = 100, at start: Timestamp = t0) throws -> WorkoutDocument {
    try WorkoutDocument.start(from: twoExerciseSplit(), id: id(n), at: start)
}
