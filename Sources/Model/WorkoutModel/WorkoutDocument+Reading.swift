/// Runs and workout updates read by `JSONReader`, without `JSONDecoder`, when their bytes are JSON as
/// the daemons write it. Each reader takes the keys the type's `Decodable` conformance takes, in any
/// order, skips the rest, and gives up (nil) where `JSONReader` does or where the value would not
/// decode; the caller then decodes with `JSONDecoder` (`DocumentCoder.decode`, `ContextDecoder`).

/// A document type `DocumentCoder.decode` reads with `JSONReader` first.
package protocol ReadByHand {
    /// The value `bytes` hold, when `JSONReader` reads them whole; nil sends the caller to `JSONDecoder`.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> Self?
}

extension ReadByHand {
    /// `read(_:)` for any contiguous bytes: an array, or the slice of a context that holds a run.
    package static func read(_ bytes: some Collection<UInt8>) -> Self? {
        bytes.withContiguousStorageIfAvailable { read($0) } ?? read(Array(bytes))
    }
}

extension WorkoutDocument: ReadByHand {
    package static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> WorkoutDocument? {
        var reader = JSONReader(bytes)
        guard let run = read(from: &reader), reader.atEnd() else { return nil }
        return run
    }

    /// A run of schema version 1 or 2 (others go to `JSONDecoder`, which gives their errors).
    static func read(from reader: inout JSONReader) -> WorkoutDocument? {
        guard let wire = WireRun.read(from: &reader), (1...2).contains(wire.schemaVersion) else { return nil }
        return try? WorkoutDocument(wire: wire) { (_: String) throws(MissingStamp) -> Never in throw MissingStamp() }
    }

    private struct MissingStamp: Error {}
}

extension WatchToPhoneMessage: ReadByHand {
    /// A workout update (a sync request, rare and small, is left to `JSONDecoder`).
    package static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> WatchToPhoneMessage? {
        var reader = JSONReader(bytes)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var (schemaVersion, update): (Int?, Bool) = (nil, false)
        var (run, epoch): (WorkoutDocument?, Timestamp??) = (nil, nil)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            switch key {
            case "schemaVersion":
                guard keys.insert(0), let value = reader.int() else { return nil }
                schemaVersion = value
            case "kind":
                guard keys.insert(1), let kind = reader.string() else { return nil }
                update = kind == "workoutUpdate"
            case "workout":
                guard keys.insert(2), let value = WorkoutDocument.read(from: &reader) else { return nil }
                run = value
            case "epoch":
                guard keys.insert(3), let value = reader.nullable({ $0.timestamp() }) else { return nil }
                epoch = value
            default: guard reader.skipValue() else { return nil }
            }
        }
        guard closed, reader.atEnd(), schemaVersion == currentSchemaVersion, update, let run else { return nil }
        return .workoutUpdate(run, epoch: epoch ?? nil)
    }
}

extension WireRun {
    static func read(from reader: inout JSONReader) -> WireRun? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var schemaVersion: Int?
        var (id, splitID): (DocumentID?, DocumentID?) = (nil, nil)
        var splitName: String?
        var (startedAt, updatedAt): (Timestamp?, Timestamp?) = (nil, nil)
        var endedAt: Timestamp?? = .some(nil)
        var logs: [WireLog]?
        var pauses: [PauseInterval]?
        var (pausesStamp, metricsStamp): (Stamp??, Stamp??) = (.some(nil), .some(nil))
        var metrics: SessionMetrics?? = .some(nil)
        var ending: Ending?? = .some(nil)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let fresh: Bool
            switch key {
            case "schemaVersion": (fresh, schemaVersion) = (keys.insert(0), reader.int())
            case "id": (fresh, id) = (keys.insert(1), reader.documentID())
            case "splitID": (fresh, splitID) = (keys.insert(2), reader.documentID())
            case "splitName": (fresh, splitName) = (keys.insert(3), reader.string())
            case "startedAt": (fresh, startedAt) = (keys.insert(4), reader.timestamp())
            case "endedAt": (fresh, endedAt) = (keys.insert(5), reader.nullable { $0.timestamp() })
            case "logs": (fresh, logs) = (keys.insert(6), reader.array { WireLog.read(from: &$0) })
            case "pauses": (fresh, pauses) = (keys.insert(7), reader.array { PauseInterval.read(from: &$0) })
            case "pausesStamp": (fresh, pausesStamp) = (keys.insert(8), reader.nullable { $0.stamp() })
            case "metrics": (fresh, metrics) = (keys.insert(9), reader.nullable { SessionMetrics.read(from: &$0) })
            case "metricsStamp": (fresh, metricsStamp) = (keys.insert(10), reader.nullable { $0.stamp() })
            case "ending": (fresh, ending) = (keys.insert(11), reader.nullable { Ending.read(from: &$0) })
            case "updatedAt": (fresh, updatedAt) = (keys.insert(12), reader.timestamp())
            default: fresh = reader.skipValue()
            }
            guard fresh else { return nil }
        }
        guard closed, let schemaVersion, let id, let splitID, let splitName, let startedAt, let endedAt, let logs,
            let pauses, let pausesStamp, let metrics, let metricsStamp, let ending, let updatedAt
        else { return nil }
        return WireRun(
            schemaVersion: schemaVersion, id: id, splitID: splitID, splitName: splitName, startedAt: startedAt,
            endedAt: endedAt, logs: logs, pauses: pauses, pausesStamp: pausesStamp, metrics: metrics,
            metricsStamp: metricsStamp, ending: ending, updatedAt: updatedAt)
    }
}

extension WireLog {
    static func read(from reader: inout JSONReader) -> WireLog? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var id: DocumentID?
        var (exerciseName, equipment): (String?, String?) = (nil, nil)
        var targetReps: Int?
        var targetWeight: Double?
        var sets: [WireSet]?
        var resolution: LogResolution?
        var mark: LogMark?? = .some(nil)
        var markStamp: Stamp?? = .some(nil)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let fresh: Bool
            switch key {
            case "id": (fresh, id) = (keys.insert(0), reader.documentID())
            case "exerciseName": (fresh, exerciseName) = (keys.insert(1), reader.string())
            case "equipment": (fresh, equipment) = (keys.insert(2), reader.string())
            case "targetReps": (fresh, targetReps) = (keys.insert(3), reader.int())
            case "targetWeight": (fresh, targetWeight) = (keys.insert(4), reader.double())
            case "sets": (fresh, sets) = (keys.insert(5), reader.array { WireSet.read(from: &$0) })
            case "resolution": (fresh, resolution) = (keys.insert(6), reader.string().flatMap(LogResolution.init))
            case "mark": (fresh, mark) = (keys.insert(7), reader.nullable { $0.string().flatMap(LogMark.init) })
            case "markStamp": (fresh, markStamp) = (keys.insert(8), reader.nullable { $0.stamp() })
            default: fresh = reader.skipValue()
            }
            guard fresh else { return nil }
        }
        guard closed, let id, let exerciseName, let equipment, let targetReps, let targetWeight, let sets,
            let resolution, let mark, let markStamp
        else { return nil }
        return WireLog(
            id: id, exerciseName: exerciseName, equipment: equipment, targetReps: targetReps,
            targetWeight: targetWeight, sets: sets, resolution: resolution, mark: mark, markStamp: markStamp)
    }
}

extension WireSet {
    static func read(from reader: inout JSONReader) -> WireSet? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var set = WireSet(reps: nil, weight: nil, completedAt: nil, stamp: nil)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            switch key {
            case "reps":
                guard keys.insert(0), let value = reader.nullable({ $0.int() }) else { return nil }
                set.reps = value
            case "weight":
                guard keys.insert(1), let value = reader.nullable({ $0.double() }) else { return nil }
                set.weight = value
            case "completedAt":
                guard keys.insert(2), let value = reader.nullable({ $0.timestamp() }) else { return nil }
                set.completedAt = value
            case "stamp":
                guard keys.insert(3), let value = reader.nullable({ $0.stamp() }) else { return nil }
                set.stamp = value
            default: guard reader.skipValue() else { return nil }
            }
        }
        return closed ? set : nil
    }
}

extension PauseInterval {
    static func read(from reader: inout JSONReader) -> PauseInterval? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var start: Timestamp?
        var end: Timestamp?? = .some(nil)
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let fresh: Bool
            switch key {
            case "start": (fresh, start) = (keys.insert(0), reader.timestamp())
            case "end": (fresh, end) = (keys.insert(1), reader.nullable { $0.timestamp() })
            default: fresh = reader.skipValue()
            }
            guard fresh else { return nil }
        }
        guard closed, let start, let end else { return nil }
        return PauseInterval(start: start, end: end)
    }
}

extension SessionMetrics {
    static func read(from reader: inout JSONReader) -> SessionMetrics? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var (activeSeconds, totalVolume): (Double?, Double?) = (nil, nil)
        var setsCompleted: Int?
        var recordedAt: Timestamp?
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let fresh: Bool
            switch key {
            case "activeSeconds": (fresh, activeSeconds) = (keys.insert(0), reader.double())
            case "setsCompleted": (fresh, setsCompleted) = (keys.insert(1), reader.int())
            case "totalVolume": (fresh, totalVolume) = (keys.insert(2), reader.double())
            case "recordedAt": (fresh, recordedAt) = (keys.insert(3), reader.timestamp())
            default: fresh = reader.skipValue()
            }
            guard fresh else { return nil }
        }
        guard closed, let activeSeconds, let setsCompleted, let totalVolume, let recordedAt else { return nil }
        return SessionMetrics(
            activeSeconds: activeSeconds, setsCompleted: setsCompleted, totalVolume: totalVolume,
            recordedAt: recordedAt)
    }
}

extension Ending {
    static func read(from reader: inout JSONReader) -> Ending? {
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var keys = KeySet()
        var at: Timestamp?? = .some(nil)
        var stamp: Stamp?
        var (first, closed) = (true, false)
        while let key = reader.nextKey(first: &first, closed: &closed) {
            let fresh: Bool
            switch key {
            case "at": (fresh, at) = (keys.insert(0), reader.nullable { $0.timestamp() })
            case "stamp": (fresh, stamp) = (keys.insert(1), reader.stamp())
            default: fresh = reader.skipValue()
            }
            guard fresh else { return nil }
        }
        guard closed, let at, let stamp else { return nil }
        return Ending(at: at, stamp: stamp)
    }
}

/// The keys an object reader has taken: a known key twice sends the bytes to `JSONDecoder`.
private struct KeySet {
    private var bits: UInt32 = 0

    /// Takes key number `index`; false when it was taken before.
    mutating func insert(_ index: Int) -> Bool {
        let bit: UInt32 = 1 << index
        defer { bits |= bit }
        return bits & bit == 0
    }
}

extension JSONReader {
    /// `.some(nil)` for `null`, `.some(value)` for what `read` reads, nil when it reads nothing.
    fileprivate mutating func nullable<Value>(_ read: (inout JSONReader) -> Value?) -> Value?? {
        if null() { return .some(nil) }
        guard let value = read(&self) else { return nil }
        return .some(value)
    }

    /// An array of what `read` reads, or nil.
    fileprivate mutating func array<Element>(_ read: (inout JSONReader) -> Element?) -> [Element]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var elements: [Element] = []
        var (first, closed) = (true, false)
        while nextElement(first: &first, closed: &closed) {
            guard let element = read(&self) else { return nil }
            elements.append(element)
        }
        return closed ? elements : nil
    }

    fileprivate mutating func timestamp() -> Timestamp? { string(Timestamp.parse) }

    fileprivate mutating func stamp() -> Stamp? { string(Stamp.parse) }

    fileprivate mutating func documentID() -> DocumentID? { string { DocumentID(utf8: $0) } }
}
