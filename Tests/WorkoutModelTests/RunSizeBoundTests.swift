import LinkProtocol
import Testing
import WorkoutModel

/// The phone refuses a split one of whose runs could outgrow a watch update (`SplitDocument.ruleProblem`):
/// every run a split it accepts can make — any sets done with any reps and weight an edit may enter,
/// any marks, pauses up to the allowance, metrics, an end, stamps with any counter — must fit one
/// message or userInfo transfer, or its edits could never reach the phone.
@Suite("Run size: every run a split can make fits one watch update")
struct RunSizeBoundTests {
    /// The weights and reps that take the most bytes, and some ordinary ones.
    static let weights: [Double] = [
        .leastNormalMagnitude, 0.00012345678901234567, 99_999.999_999_999_99, 12_345.678_901_234_567, 0.1 + 0.2, 0,
        100, SetRecord.maximumWeight, .leastNonzeroMagnitude,
    ]
    static let reps = [Int.max, 0, 5, 1_234_567_890_123]

    /// A split of `exercises` exercises, the sets of each chosen by `sets`, with names that take the
    /// most bytes the rules allow once escaped in JSON (a quote is written `\"`).
    static func split(exercises: Int, sets: (Int) -> Int) -> SplitDocument {
        let name = String(repeating: "\"", count: SplitDocument.maximumNameBytes)
        return SplitDocument(
            id: id(1), name: name,
            exercises: (0..<exercises).map { index in
                ExerciseTemplate(
                    name: name, equipment: name, targetSets: sets(index), targetReps: Int.max,
                    targetWeight: .leastNormalMagnitude)
            },
            updatedAt: t0)
    }

    /// The most sets (spread evenly over `exercises`) the rules accept; the split with one more is
    /// refused.
    static func largestAccepted(exercises: Int) throws -> (accepted: SplitDocument, refused: SplitDocument) {
        func make(_ total: Int) -> SplitDocument {
            split(exercises: exercises) { index in total / exercises + (index < total % exercises ? 1 : 0) }
        }
        func accepted(_ total: Int) -> Bool {
            SplitDocument.ruleProblem(name: make(total).name, exercises: make(total).exercises) == nil
        }
        // Bisection between a total accepted and one refused (100 sets an exercise is the reader's most).
        var (low, high) = (exercises, exercises * 100)
        try #require(accepted(low) && !accepted(high), "the bound falls within \(exercises) exercises")
        while high - low > 1 {
            let middle = (low + high) / 2
            if accepted(middle) { low = middle } else { high = middle }
        }
        return (make(low), make(high))
    }

    /// A run of `split` with random edits: sets done, redone and undone with extreme values, marks,
    /// pauses up to the allowance, metrics and an end, stamped with random counters on either side.
    static func randomRun(of split: SplitDocument, _ random: inout SplitMix64) throws -> WorkoutDocument {
        var time = t0
        func stamp() -> Stamp {
            time = time.advanced(by: .microseconds(Int64.random(in: 1...3_600_000_000, using: &random)))
            let counter = Bool.random(using: &random) ? Int.max : Int.random(in: 0...1_000, using: &random)
            return Stamp(time: time, counter: counter, origin: Bool.random(using: &random) ? .phone : .watch)
        }
        var run = try WorkoutDocument.start(from: split, id: id(2), at: stamp())
        var pauses = 0
        for _ in 0..<(run.totalSetCount * 2) {
            let log = Int.random(in: 0..<run.logs.count, using: &random)
            let logID = run.logs[log].id
            let set = Int.random(in: 0..<run.logs[log].sets.count, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<15:
                if run.logs[log].isResolved { try run.reopenLog(logID: logID, at: stamp()) }
                try run.completeSet(
                    logID: logID, setIndex: set, reps: reps.randomElement(using: &random)!,
                    weight: weights.randomElement(using: &random)!, at: stamp())
            case 15: try? run.undoSet(logID: logID, setIndex: set, at: stamp())
            case 16: try? run.skipLog(logID: logID, at: stamp())
            case 17: try? run.reopenLog(logID: logID, at: stamp())
            default:
                guard pauses < SplitDocument.runSizePauseAllowance, run.status != .completed else { continue }
                try run.pause(at: stamp())
                try run.resume(at: stamp())
                pauses += 1
            }
        }
        while pauses < SplitDocument.runSizePauseAllowance, run.status != .completed {
            try run.pause(at: stamp())
            try run.resume(at: stamp())
            pauses += 1
        }
        run.recordMetrics(
            SessionMetrics(
                activeSeconds: .leastNormalMagnitude, setsCompleted: Int.max, totalVolume: .leastNormalMagnitude,
                recordedAt: time),
            at: stamp())
        if Bool.random(using: &random), run.status != .completed { try run.endKeepingProgress(at: stamp()) }
        return run
    }

    /// What the watch sends for `run`: its whole encoding in a workout update naming an epoch.
    static func updateBytes(_ run: WorkoutDocument) -> Int {
        WatchToPhoneMessage.encodedUpdate(run, runBytes: run.encodedJSON(pretty: false), epoch: t0).count
    }

    @Test("the limit is 65,536 bytes, the link's limit on a message and on a userInfo transfer")
    func limit() {
        #expect(WatchToPhoneMessage.maximumBytes == 65_536)
        let link = LinkConfiguration(role: .watch)
        #expect(WatchToPhoneMessage.maximumBytes <= min(link.maximumMessageBytes, link.maximumUserInfoBytes))
    }

    @Test("14 exercises of 100 sets is refused, naming the run's worst case and the limit")
    func issueSplit() throws {
        let exercises = (1...14).map {
            ExerciseTemplate(
                name: "Lift \($0)", equipment: "barbell", targetSets: 100, targetReps: 5, targetWeight: 100)
        }
        let problem = try #require(SplitDocument.ruleProblem(name: "Everything", exercises: exercises))
        let worst = SplitDocument.largestRunUpdateBytes(name: "Everything", exercises: exercises)
        #expect(worst > 65_536)
        #expect(problem.contains("65,536 bytes") && problem.contains("one watch update"), "\(problem)")
        #expect(problem.contains("\(worst / 1000),\(String(worst % 1000 + 1000).dropFirst()) bytes"), "\(problem)")
    }

    @Test(
        "a split just under the bound makes runs whose worst case fits; one more set is refused",
        arguments: [4, 14, 40])
    func justUnderTheBound(exercises: Int) throws {
        let (accepted, refused) = try Self.largestAccepted(exercises: exercises)
        let bound = SplitDocument.largestRunUpdateBytes(name: accepted.name, exercises: accepted.exercises)
        #expect(bound <= WatchToPhoneMessage.maximumBytes)
        #expect(
            SplitDocument.largestRunUpdateBytes(name: refused.name, exercises: refused.exercises)
                > WatchToPhoneMessage.maximumBytes)
        let problem = SplitDocument.ruleProblem(name: refused.name, exercises: refused.exercises)
        #expect(problem?.contains("65,536 bytes") == true, "\(problem ?? "accepted")")

        var random = SplitMix64(seed: UInt64(exercises))
        for _ in 0..<8 {
            let run = try Self.randomRun(of: accepted, &random)
            #expect(Self.updateBytes(run) <= bound, "a run of \(Self.updateBytes(run)) bytes is over \(bound)")
        }
        // The bound is the worst case, not a guess far above what a run can reach.
        let worst = Self.updateBytes(try Self.worstRun(of: accepted))
        #expect(worst <= bound && Double(worst) > Double(bound) * 0.99, "\(worst) of \(bound)")
    }

    /// A run of `split` as large as this test can make it: every set done with the most reps and the
    /// longest weight, every log reopened, the pauses allowed, metrics, every stamp's counter at its
    /// largest.
    static func worstRun(of split: SplitDocument) throws -> WorkoutDocument {
        var time = t0
        func stamp() -> Stamp {
            time = time.advanced(by: .seconds(1))
            return Stamp(time: time, counter: Int.max, origin: .watch)
        }
        var run = try WorkoutDocument.start(from: split, id: id(2), at: stamp())
        for log in run.logs {
            for set in log.sets.indices {
                try run.completeSet(
                    logID: log.id, setIndex: set, reps: Int.max, weight: .leastNormalMagnitude, at: stamp())
            }
            try run.reopenLog(logID: log.id, at: stamp())
        }
        for _ in 0..<SplitDocument.runSizePauseAllowance {
            try run.pause(at: stamp())
            try run.resume(at: stamp())
        }
        run.recordMetrics(
            SessionMetrics(
                activeSeconds: .leastNormalMagnitude, setsCompleted: Int.max, totalVolume: .leastNormalMagnitude,
                recordedAt: time),
            at: stamp())
        try run.endKeepingProgress(at: stamp())
        return run
    }

    @Test("no finite number is written longer than the one the worst case uses")
    func longestNumber() {
        let longest = DocumentJSONWriter.number(-.leastNormalMagnitude).utf8.count
        #expect(longest == 24)
        var random = SplitMix64(seed: 7)
        for _ in 0..<100_000 {
            let value = Double(bitPattern: random.next())
            guard value.isFinite else { continue }
            #expect(DocumentJSONWriter.number(value).utf8.count <= longest, "\(value)")
        }
    }

    @Test("a split of ordinary size is far inside the bound")
    func ordinarySplit() {
        let exercises = (1...8).map {
            ExerciseTemplate(name: "Lift \($0)", equipment: "barbell", targetSets: 5, targetReps: 5, targetWeight: 100)
        }
        #expect(SplitDocument.ruleProblem(name: "Push", exercises: exercises) == nil)
        #expect(SplitDocument.largestRunUpdateBytes(name: "Push", exercises: exercises) < 65_536 / 2)
    }
}
