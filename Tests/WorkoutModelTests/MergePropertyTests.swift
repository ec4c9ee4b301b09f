import LinkProtocol
import Testing
import WorkoutModel

/// Seeded random histories of edits made on both sides of one run, with copies exchanged in random
/// order, late and twice. The merge must be a state-based CRDT and never roll a register back.
@Suite("Merge: seeded property tests")
struct MergePropertyTests {
    /// One side's replica: its copy, its clock and a wall clock that may be skewed by up to an hour.
    struct Replica {
        var run: WorkoutDocument
        var clock: HybridLogicalClock
        var skew: Int64

        mutating func edit(_ random: inout SplitMix64, now: Int64) {
            clock.observe(run)
            let stamp = clock.stamp(at: Timestamp(microsecondsSinceEpoch: now + skew))
            let log = Int.random(in: 0..<run.logs.count, using: &random)
            let logID = run.logs[log].id
            let set = Int.random(in: 0..<run.logs[log].sets.count, using: &random)
            let value = Int.random(in: 1...50, using: &random)
            // A refused edit (a resolved log, no open pause, …) leaves the copy as it was.
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:
                try? run.completeSet(logID: logID, setIndex: set, reps: value, weight: Double(value), at: stamp)
            case 4: try? run.undoSet(logID: logID, setIndex: set, at: stamp)
            case 5: try? run.skipLog(logID: logID, at: stamp)
            case 6: try? run.reopenLog(logID: logID, at: stamp)
            case 7: try? run.endKeepingProgress(at: stamp)
            case 8: try? run.isPaused ? run.resume(at: stamp) : run.pause(at: stamp)
            default: run.recordMetrics(run.sessionMetrics(recordedAt: stamp.time), at: stamp)
            }
        }

        mutating func receive(_ copy: WorkoutDocument) throws {
            clock.observe(copy)
            run = try run.merged(with: copy)
        }
    }

    static let split = SplitDocument(
        id: DocumentID(bytes: [UInt8](repeating: 0x11, count: 16)), name: "Full body",
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 100),
            ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 2, targetReps: 10, targetWeight: 40),
            ExerciseTemplate(name: "Plank", equipment: "mat", targetSets: 1, targetReps: 1, targetWeight: 0),
        ],
        updatedAt: t0)

    /// Every copy either side held during one random history, in the order they were made.
    static func history(seed: UInt64) throws -> [WorkoutDocument] {
        var random = SplitMix64(seed: seed)
        var phoneClock = HybridLogicalClock(origin: .phone)
        let start = try WorkoutDocument.start(from: split, id: id(7), at: phoneClock.stamp(at: t0))
        let watchSkew = Int64.random(in: -3_600_000_000...3_600_000_000, using: &random)
        var sides = [
            Replica(run: start, clock: phoneClock, skew: 0),
            Replica(run: start, clock: HybridLogicalClock(origin: .watch), skew: watchSkew),
        ]
        var copies = [start]
        var now = t0.microsecondsSinceEpoch
        for _ in 0..<Int.random(in: 4...40, using: &random) {
            now += Int64.random(in: 0...2_000_000, using: &random)
            let side = Int.random(in: 0...1, using: &random)
            if Bool.random(using: &random) {
                sides[side].edit(&random, now: now)
            } else {
                // A copy the other side held at some point: late, reordered, or a duplicate.
                try sides[side].receive(copies.randomElement(using: &random)!)
            }
            copies.append(sides[side].run)
        }
        return copies
    }

    static func fold(_ copies: [WorkoutDocument]) throws -> WorkoutDocument {
        try copies.dropFirst().reduce(copies[0]) { try $0.merged(with: $1) }
    }

    @Test("merge is commutative, associative and idempotent over 2,000 random histories")
    func lattice() throws {
        for seed in UInt64(1)...2_000 {
            var random = SplitMix64(seed: seed &* 7_919)
            let copies = try Self.history(seed: seed)
            for _ in 0..<5 {
                let a = copies.randomElement(using: &random)!
                let b = copies.randomElement(using: &random)!
                let c = copies.randomElement(using: &random)!
                #expect(try a.merged(with: b) == b.merged(with: a), "seed \(seed): commutative")
                #expect(
                    try a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)),
                    "seed \(seed): associative")
                #expect(try a.merged(with: a) == a, "seed \(seed): idempotent")
                #expect(try a.merged(with: b).merged(with: b) == a.merged(with: b), "seed \(seed): absorbs duplicates")
            }
        }
    }

    @Test("replicas that saw the same copies, in any order and with duplicates, hold the same run")
    func convergence() throws {
        for seed in UInt64(1)...2_000 {
            var random = SplitMix64(seed: seed &* 104_729)
            let copies = try Self.history(seed: seed)
            let reference = try Self.fold(copies)
            var delivered = copies + (0..<copies.count / 2).map { _ in copies.randomElement(using: &random)! }
            delivered.shuffle(using: &random)
            let converged = try Self.fold(delivered)
            #expect(converged == reference, "seed \(seed)")
            #expect(converged.status == reference.status)
            // No register of any copy is rolled back: every copy is covered by the merge of all.
            for copy in copies where !copy.isCovered(by: converged) {
                Issue.record("seed \(seed): a copy at version \(copy.version) is not covered by the merge")
            }
        }
    }
}

@Suite("Merge: the rule per field")
struct MergeRuleTests {
    func started() throws -> WorkoutDocument {
        try WorkoutDocument.start(from: twoExerciseSplit(), id: id(100), at: Stamp(time: t0, origin: .phone))
    }

    func phone(_ seconds: Int) -> Stamp { Stamp(time: at(seconds), origin: .phone) }
    func watch(_ seconds: Int) -> Stamp { Stamp(time: at(seconds), origin: .watch) }

    @Test("concurrent edits of different sets both survive")
    func differentSets() throws {
        var phoneCopy = try started()
        var watchCopy = phoneCopy
        try phoneCopy.completeSet(logID: phoneCopy.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: phone(10))
        try watchCopy.completeSet(logID: watchCopy.logs[0].id, setIndex: 1, reps: 6, weight: 90, at: watch(5))
        let merged = try phoneCopy.merged(with: watchCopy)
        #expect(merged.logs[0].sets.map(\.reps) == [5, 6])
        #expect(merged.logs[0].resolution == .completed)
        #expect(merged.status == .inProgress)
    }

    @Test("the same set resolves to the later stamp on both sides; equal times break on origin")
    func sameSet() throws {
        var phoneCopy = try started()
        var watchCopy = phoneCopy
        try phoneCopy.completeSet(logID: phoneCopy.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: phone(10))
        try watchCopy.completeSet(logID: watchCopy.logs[0].id, setIndex: 0, reps: 7, weight: 80, at: watch(10))
        #expect(try phoneCopy.merged(with: watchCopy).logs[0].sets[0].reps == 7)
        #expect(try watchCopy.merged(with: phoneCopy).logs[0].sets[0].reps == 7)
    }

    @Test("ended survives a concurrent completion of a set, which lands in the ended run's log")
    func endSurvivesCompletion() throws {
        var phoneCopy = try started()
        var watchCopy = phoneCopy
        try phoneCopy.endKeepingProgress(at: phone(10))
        try watchCopy.completeSet(logID: watchCopy.logs[1].id, setIndex: 0, reps: 10, weight: 40, at: watch(20))
        try watchCopy.completeSet(logID: watchCopy.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: watch(21))
        for merged in [try phoneCopy.merged(with: watchCopy), try watchCopy.merged(with: phoneCopy)] {
            #expect(merged.status == .completed)
            #expect(merged.ending.at == at(10))
            // Never before the last completion (seams 5): the set done at 21 was done before the end.
            #expect(merged.endedAt == at(21))
            #expect(merged.logs.map(\.resolution) == [.skipped, .completed])
            #expect(merged.logs[0].sets[0].reps == 5)
        }
    }

    @Test("a later reopen beats the skip it reopens; a later undo clears the set it undoes")
    func laterEditsWin() throws {
        var run = try started()
        try run.skipLog(logID: run.logs[0].id, at: phone(1))
        var watchCopy = run
        try watchCopy.reopenLog(logID: run.logs[0].id, at: watch(2))
        #expect(try run.merged(with: watchCopy).logs[0].resolution == .inProgress)
        try run.completeSet(logID: run.logs[1].id, setIndex: 0, reps: 1, weight: 1, at: phone(3))
        var undone = run
        try undone.undoSet(logID: run.logs[1].id, setIndex: 0, at: watch(4))
        #expect(try run.merged(with: undone).logs[1].sets[0].isDone == false)
    }

    @Test("copies of different runs or skeletons are refused")
    func refusesOtherRuns() throws {
        let run = try started()
        let other = try WorkoutDocument.start(from: twoExerciseSplit(2), id: id(100), at: phone(0))
        #expect(throws: MergeError.self) { try run.merged(with: other) }
        let otherID = try WorkoutDocument.start(from: twoExerciseSplit(), id: id(101), at: phone(0))
        #expect(throws: MergeError.self) { try run.merged(with: otherID) }
    }
}

@Suite("Hybrid logical clock")
struct HybridLogicalClockTests {
    @Test("a clock an hour behind still stamps above every stamp it has seen")
    func skew() {
        var phone = HybridLogicalClock(origin: .phone)
        var watch = HybridLogicalClock(origin: .watch)
        let phoneStamp = phone.stamp(at: at(3_600))
        watch.observe(phoneStamp)
        let watchStamp = watch.stamp(at: at(0))
        #expect(watchStamp > phoneStamp)
        #expect(watchStamp == Stamp(time: at(3_600), counter: 1, origin: .watch))
        // Physical time catches up: the counter resets.
        #expect(watch.stamp(at: at(3_601)) == Stamp(time: at(3_601), counter: 0, origin: .watch))
    }

    @Test("restored from its high-water mark a clock never goes back, whatever the wall clock says")
    func restart() {
        var clock = HybridLogicalClock(origin: .watch)
        let last = clock.stamp(at: at(100))
        var restarted = HybridLogicalClock(origin: .watch, highWater: clock.last)
        #expect(restarted.stamp(at: at(50)) > last)
    }

    @Test("equal time and counter break on origin: watch above phone")
    func originTieBreak() {
        #expect(Stamp(time: t0, counter: 3, origin: .phone) < Stamp(time: t0, counter: 3, origin: .watch))
        #expect(Stamp(time: t0, counter: 4, origin: .phone) > Stamp(time: t0, counter: 3, origin: .watch))
    }

    @Test("the text form round-trips; anything else is refused")
    func text() {
        let stamp = Stamp(time: at(1), counter: 12, origin: .watch)
        #expect(Stamp(text: stamp.description) == stamp)
        #expect(stamp.description == "2026-11-29T12:00:01.000000Z/12/watch")
        for bad in [
            "", "2026-11-29T12:00:01Z/1", "2026-11-29T12:00:01Z/-1/phone", "2026-11-29T12:00:01Z/1/tablet",
            "2026-11-29T12:00:01Z/x/phone", "2026-11-29T12:00:01Z/1/phone/",
        ] {
            #expect(Stamp(text: bad) == nil, "\(bad)")
        }
    }
}
