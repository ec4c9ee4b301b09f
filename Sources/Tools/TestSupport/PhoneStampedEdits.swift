import WorkoutModel

/// Test shorthand: a run edit at a wall-clock instant, stamped as a phone edit with counter 0
/// (`Stamp(time: time, origin: .phone)`). Tests that care about origins or counters pass a `Stamp`.
extension WorkoutDocument {
    package static func start(
        from split: SplitDocument, id: DocumentID, at time: Timestamp
    ) throws(MutationError) -> WorkoutDocument {
        try start(from: split, id: id, at: Stamp(time: time, origin: .phone))
    }

    package mutating func completeSet(
        logID: DocumentID, setIndex: Int, reps: Int, weight: Double, at time: Timestamp
    ) throws(MutationError) {
        try completeSet(
            logID: logID, setIndex: setIndex, reps: reps, weight: weight, at: Stamp(time: time, origin: .phone))
    }

    package mutating func undoSet(logID: DocumentID, setIndex: Int, at time: Timestamp) throws(MutationError) {
        try undoSet(logID: logID, setIndex: setIndex, at: Stamp(time: time, origin: .phone))
    }

    package mutating func skipLog(logID: DocumentID, at time: Timestamp) throws(MutationError) {
        try skipLog(logID: logID, at: Stamp(time: time, origin: .phone))
    }

    package mutating func reopenLog(logID: DocumentID, at time: Timestamp) throws(MutationError) {
        try reopenLog(logID: logID, at: Stamp(time: time, origin: .phone))
    }

    package mutating func endKeepingProgress(at time: Timestamp) throws(MutationError) {
        try endKeepingProgress(at: Stamp(time: time, origin: .phone))
    }

    package mutating func pause(at time: Timestamp) throws(MutationError) {
        try pause(at: Stamp(time: time, origin: .phone))
    }

    package mutating func resume(at time: Timestamp) throws(MutationError) {
        try resume(at: Stamp(time: time, origin: .phone))
    }

    package mutating func recordMetrics(_ metrics: SessionMetrics, at time: Timestamp) {
        recordMetrics(metrics, at: Stamp(time: time, origin: .phone))
    }
}
