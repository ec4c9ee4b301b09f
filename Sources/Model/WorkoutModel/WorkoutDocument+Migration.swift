/// Reading a run: version 2 as written, version 1 (written before per-field stamps) migrated.
///
/// A version-1 document has one `updatedAt` for everything, so every register is stamped
/// `updatedAt/0/phone` (phoned wrote every version-1 file); a log's explicit decision is read back
/// from its stored resolution (skipped → `skipped`; in progress although its sets say otherwise →
/// `reopened`). The value in memory is version 2; the file is rewritten only by the run's next
/// write. Derived fields (`status`, `endedAt`, resolutions, `currentStateIndex`, `updatedAt`) are
/// recomputed from the registers, never trusted.
extension WorkoutDocument {
    package init(from decoder: any Decoder) throws {
        try self.init(wire: try WireRun(from: decoder)) { key in
            throw DecodingError.keyNotFound(
                WireKey(key), .init(codingPath: decoder.codingPath, debugDescription: "missing"))
        }
    }

    /// The run `wire` spells; `missing` is called with the path of a stamp a version-2 run lacks.
    init<Failure: Error>(wire: WireRun, missing: (String) throws(Failure) -> Never) throws(Failure) {
        let migrated = wire.schemaVersion < 2
        let fallback = Stamp(time: wire.updatedAt, counter: 0, origin: .phone)
        func stamp(_ value: Stamp?, _ key: String) throws(Failure) -> Stamp {
            if let value { return value }
            guard migrated else { try missing(key) }
            return fallback
        }
        var logs: [ExerciseLog] = []
        for (index, wireLog) in wire.logs.enumerated() {
            var log = ExerciseLog(
                id: wireLog.id, exerciseName: wireLog.exerciseName, equipment: wireLog.equipment,
                targetReps: wireLog.targetReps, targetWeight: wireLog.targetWeight, setCount: 0, stamp: fallback)
            for (setIndex, set) in wireLog.sets.enumerated() {
                log.sets.append(
                    SetRecord(
                        reps: set.reps, weight: set.weight, completedAt: set.completedAt,
                        stamp: try stamp(set.stamp, "logs[\(index)].sets[\(setIndex)].stamp")))
            }
            log.markStamp = try stamp(wireLog.markStamp, "logs[\(index)].markStamp")
            log.mark = migrated ? Self.migratedMark(wireLog.resolution, sets: log.sets) : wireLog.mark
            logs.append(log)
        }
        self.init(
            id: wire.id, splitID: wire.splitID, splitName: wire.splitName, startedAt: wire.startedAt, logs: logs,
            stamp: fallback)
        pauses = wire.pauses
        metrics = wire.metrics
        pausesStamp = try stamp(wire.pausesStamp, "pausesStamp")
        metricsStamp = try stamp(wire.metricsStamp, "metricsStamp")
        if let ending = wire.ending {
            self.ending = ending
        } else {
            ending = Ending(at: wire.endedAt, stamp: try stamp(nil, "ending"))
        }
        schemaVersion = wire.schemaVersion < 2 ? Self.currentSchemaVersion : wire.schemaVersion
        recomputeDerived()
    }

    /// The explicit decision a version-1 log's stored resolution implies.
    private static func migratedMark(_ resolution: LogResolution, sets: [SetRecord]) -> LogMark? {
        if resolution == .skipped { return .skipped }
        if resolution == .inProgress, !(sets.contains(where: \.isDone) && !sets.allSatisfy(\.isDone)) {
            return .reopened
        }
        return nil
    }
}

/// The JSON of a run of either version; stamps are optional here and required above for version 2.
struct WireRun: Decodable {
    var schemaVersion: Int
    var id: DocumentID
    var splitID: DocumentID
    var splitName: String
    var startedAt: Timestamp
    var endedAt: Timestamp?
    var logs: [WireLog]
    var pauses: [PauseInterval]
    var pausesStamp: Stamp?
    var metrics: SessionMetrics?
    var metricsStamp: Stamp?
    var ending: Ending?
    var updatedAt: Timestamp
}

struct WireLog: Decodable {
    var id: DocumentID
    var exerciseName: String
    var equipment: String
    var targetReps: Int
    var targetWeight: Double
    var sets: [WireSet]
    var resolution: LogResolution
    var mark: LogMark?
    var markStamp: Stamp?
}

struct WireSet: Decodable {
    var reps: Int?
    var weight: Double?
    var completedAt: Timestamp?
    var stamp: Stamp?
}

private struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
