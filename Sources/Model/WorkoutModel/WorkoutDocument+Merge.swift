/// Why two copies of a run cannot be merged: they are not copies of the same run.
package struct MergeError: Error, Equatable, Sendable, CustomStringConvertible {
    package var run: DocumentID
    package var reason: String

    package init(run: DocumentID, reason: String) {
        self.run = run
        self.reason = reason
    }

    package var description: String { "run \(run): cannot merge: \(reason)" }
}

extension WorkoutDocument {
    /// Merges two copies of one run, register by register: each set's record, each log's mark, the
    /// pause list, the metrics and the ending take the copy with the later stamp (origin breaks
    /// ties; two different values under one stamp — possible only for migrated copies — resolve by
    /// their encoding), then the derived fields are recomputed from the merged registers.
    ///
    /// A state-based CRDT: commutative, associative and idempotent, so delivery order and
    /// duplicates cannot change the result. Throws when the copies' skeletons (IDs, names, targets,
    /// set counts, start) differ — they are not the same run.
    package func merged(with other: WorkoutDocument) throws(MergeError) -> WorkoutDocument {
        guard id == other.id else { throw MergeError(run: id, reason: "the other copy is run \(other.id)") }
        guard hasSameSkeleton(as: other) else {
            throw MergeError(run: id, reason: "the copies differ in their split, start or exercises")
        }
        var result = self
        for logIndex in logs.indices {
            let mine = logs[logIndex]
            let theirs = other.logs[logIndex]
            for setIndex in mine.sets.indices {
                result.logs[logIndex].sets[setIndex] = Self.later(
                    mine.sets[setIndex], theirs.sets[setIndex], stamp: { $0.stamp })
            }
            let mark = Self.later((mine.mark, mine.markStamp), (theirs.mark, theirs.markStamp))
            result.logs[logIndex].mark = mark.0
            result.logs[logIndex].markStamp = mark.1
        }
        (result.pauses, result.pausesStamp) = Self.later((pauses, pausesStamp), (other.pauses, other.pausesStamp))
        (result.metrics, result.metricsStamp) = Self.later(
            (metrics, metricsStamp), (other.metrics, other.metricsStamp))
        result.ending = Self.later(ending, other.ending, stamp: { $0.stamp })
        result.schemaVersion = max(schemaVersion, other.schemaVersion)
        result.recomputeDerived()
        return result
    }

    /// `self` with every register `edited` changed in place — another value under the same stamp,
    /// as a person editing the file by hand leaves it — taken from `edited` under `stamp`, a new edit;
    /// nil when the skeletons differ. A register under a different stamp is the merge's business,
    /// not an in-place edit: an older copy of the phone's own (a late echo) never counts.
    package func takingInPlaceEdits(from edited: WorkoutDocument, stamp: Stamp) -> WorkoutDocument? {
        guard id == edited.id, hasSameSkeleton(as: edited) else { return nil }
        var result = self
        for logIndex in logs.indices {
            let (mine, theirs) = (logs[logIndex], edited.logs[logIndex])
            for setIndex in mine.sets.indices {
                let (old, new) = (mine.sets[setIndex], theirs.sets[setIndex])
                if old.stamp == new.stamp, old != new {
                    result.logs[logIndex].sets[setIndex] = new
                    result.logs[logIndex].sets[setIndex].stamp = stamp
                }
            }
            if mine.markStamp == theirs.markStamp, mine.mark != theirs.mark {
                result.logs[logIndex].mark = theirs.mark
                result.logs[logIndex].markStamp = stamp
            }
        }
        if pausesStamp == edited.pausesStamp, pauses != edited.pauses {
            (result.pauses, result.pausesStamp) = (edited.pauses, stamp)
        }
        if metricsStamp == edited.metricsStamp, metrics != edited.metrics {
            (result.metrics, result.metricsStamp) = (edited.metrics, stamp)
        }
        if ending.stamp == edited.ending.stamp, ending != edited.ending {
            result.ending = Ending(at: edited.ending.at, stamp: stamp)
        }
        result.recomputeDerived()
        return result
    }

    /// Whether every register of `self` is at or below the same register of `other`: merging `self`
    /// into `other` would change nothing (the watch's "the phone has my edit" test).
    package func isCovered(by other: WorkoutDocument) -> Bool {
        (try? other.merged(with: self)) == other
    }

    /// The parts fixed when the run started: equal in every copy of one run.
    private func hasSameSkeleton(as other: WorkoutDocument) -> Bool {
        guard splitID == other.splitID, splitName == other.splitName, startedAt == other.startedAt,
            logs.count == other.logs.count
        else { return false }
        return zip(logs, other.logs).allSatisfy { mine, theirs in
            mine.id == theirs.id && mine.exerciseName == theirs.exerciseName && mine.equipment == theirs.equipment
                && mine.targetReps == theirs.targetReps && mine.targetWeight == theirs.targetWeight
                && mine.sets.count == theirs.sets.count
        }
    }

    private static func later<Value: Encodable & Equatable>(
        _ lhs: Value, _ rhs: Value, stamp: (Value) -> Stamp
    ) -> Value {
        let (left, right) = (stamp(lhs), stamp(rhs))
        if left != right { return left > right ? lhs : rhs }
        if lhs == rhs { return lhs }
        let (leftBytes, rightBytes) = (DocumentCoder.encodeCompact(lhs), DocumentCoder.encodeCompact(rhs))
        return leftBytes.lexicographicallyPrecedes(rightBytes) ? rhs : lhs
    }

    private static func later<Value: Encodable & Equatable>(_ lhs: (Value, Stamp), _ rhs: (Value, Stamp)) -> (
        Value, Stamp
    ) {
        let winner = later(
            StampedValue(value: lhs.0, stamp: lhs.1), StampedValue(value: rhs.0, stamp: rhs.1), stamp: { $0.stamp })
        return (winner.value, winner.stamp)
    }
}

/// A register's value with its stamp, for the tie-break by encoding.
private struct StampedValue<Value: Encodable & Equatable>: Encodable, Equatable {
    var value: Value
    var stamp: Stamp
}
