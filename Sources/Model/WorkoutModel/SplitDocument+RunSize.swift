extension WatchToPhoneMessage {
    /// The most bytes one message from the watch may take: WatchConnectivity's limit on a message and
    /// on a userInfo transfer (`LinkConfiguration.maximumMessageBytes` and `maximumUserInfoBytes`), the
    /// two ways the watch sends an edit. A workout update over it fails both with `payloadTooLarge`
    /// and never reaches the phone, so no split may make a run that large (`SplitDocument.ruleProblem`).
    package static let maximumBytes = 65_536
}

/// How large a run of a split can grow, worked out from the split alone, so that a split is refused
/// when created or changed, never its run's edits later.
///
/// A run's skeleton (names, targets, set counts, IDs) is fixed when it starts; what grows is what the
/// person enters. The worst case is measured, not estimated: a run of the split is built through the
/// same mutations an edit makes, with every value at its longest — every set done with the most reps
/// (`Int.max`: reps have no upper bound) and the longest weight, every log marked, the pauses allowed
/// for, metrics, an end, each stamp's counter at `Int.max` — and its workout update encoded as the
/// watch would send it. Every set of that run holds the same record, and every pause the same
/// interval, whatever the split: so the run is built with one set per exercise, and each further set
/// adds the bytes one more set adds to a one-exercise split (`bytesPerFurtherSet`, measured once).
/// That keeps the check cheap enough for every split operation, the start-up scan and the
/// simulator. Pauses are the one thing a person can add without bound; the measure allows for
/// `runSizePauseAllowance` of them.
extension SplitDocument {
    /// The pauses a run is allowed for in its worst case: one in every set of a long session and more,
    /// about 7 KB. A run paused more often than this can outgrow the bound its split was held to.
    package static let runSizePauseAllowance = 100

    /// Why a run of a split with `name` and `exercises` might not fit one watch update, or nil. Nil
    /// too for exercises a split file may not hold (`validate`): that is what is reported for them.
    static func runSizeProblem(name: String, exercises: [ExerciseTemplate]) -> String? {
        let probe = SplitDocument(
            id: DocumentID(bytes: [UInt8](repeating: 0, count: 16)), name: name, exercises: exercises,
            updatedAt: Timestamp(microsecondsSinceEpoch: 0))
        guard (try? probe.validate()) != nil else { return nil }
        let largest = largestRunUpdateBytes(name: name, exercises: exercises)
        guard largest > WatchToPhoneMessage.maximumBytes else { return nil }
        return "a run of this split could take \(grouped(largest)) bytes as one watch update (every set done "
            + "with the largest reps and weight, \(runSizePauseAllowance) pauses), over the "
            + "\(grouped(WatchToPhoneMessage.maximumBytes)) bytes a message or transfer from the watch may carry: "
            + "use fewer sets or exercises, or shorter names"
    }

    /// The bytes of the largest workout update a run of a split with `name` and `exercises` can make
    /// (see the extension's doc); `Int.max` for exercises no run can be started from (none, or a log
    /// without sets).
    package static func largestRunUpdateBytes(name: String, exercises: [ExerciseTemplate]) -> Int {
        let oneSetEach = exercises.map { exercise in
            var exercise = exercise
            exercise.targetSets = 1
            return exercise
        }
        guard exercises.allSatisfy({ $0.targetSets > 0 }), let base = largestUpdateBytes(name, oneSetEach) else {
            return Int.max
        }
        let furtherSets = exercises.reduce(0) { $0 + $1.targetSets - 1 }
        return base + furtherSets * bytesPerFurtherSet
    }

    /// What each set past an exercise's first adds to the largest workout update: the same for every
    /// split, as every set of the largest run holds the same record.
    static let bytesPerFurtherSet: Int = {
        var exercise = ExerciseTemplate(name: "x", equipment: "", targetSets: 1, targetReps: 0, targetWeight: 0)
        let one = largestUpdateBytes("x", [exercise])
        exercise.targetSets = 2
        let two = largestUpdateBytes("x", [exercise])
        // Constant input: a one-exercise split with sets always starts a run.
        guard let one, let two else { preconditionFailure("no run of a one-exercise split") }
        return two - one
    }()

    /// The bytes of the workout update of `largestRun`, or nil when no run can be started.
    private static func largestUpdateBytes(_ name: String, _ exercises: [ExerciseTemplate]) -> Int? {
        guard let run = largestRun(name: name, exercises: exercises) else { return nil }
        let runBytes = run.encodedJSON(pretty: false)
        return WatchToPhoneMessage.encodedUpdate(run, runBytes: runBytes, epoch: run.startedAt).count
    }

    /// A number that takes as many bytes as any finite double does but one: 17 significant digits and
    /// a three-digit exponent (`2.2250738585072014e-308`); negated, it is the longest.
    static let longestNumber = Double.leastNormalMagnitude

    /// The run of the split with every value at its longest, derived fields included (together even
    /// where no real run has them all at once).
    private static func largestRun(name: String, exercises: [ExerciseTemplate]) -> WorkoutDocument? {
        let origin = StampOrigin.allCases.max { $0.rawValue.utf8.count < $1.rawValue.utf8.count } ?? .watch
        // Any instant of a four-digit year is written in the same 27 bytes.
        var time = Timestamp(microsecondsSinceEpoch: 946_684_800_000_000)
        func stamp() -> Stamp {
            time = time.advanced(by: .microseconds(1))
            return Stamp(time: time, counter: Int.max, origin: origin)
        }
        let anyID = DocumentID(bytes: [UInt8](repeating: 0, count: 16))
        let split = SplitDocument(id: anyID, name: name, exercises: exercises, updatedAt: time)
        guard exercises.allSatisfy({ $0.targetSets > 0 }),
            var run = try? WorkoutDocument.start(from: split, id: anyID, at: stamp())
        else { return nil }
        // One set of each log completed through the mutation, then copied to the others: whatever a
        // completion records is in every set, and every set takes the same bytes.
        for index in run.logs.indices {
            let log = run.logs[index]
            try? run.completeSet(logID: log.id, setIndex: 0, reps: Int.max, weight: longestNumber, at: stamp())
            run.logs[index].sets = Array(repeating: run.logs[index].sets[0], count: log.sets.count)
        }
        run.recomputeDerived()
        for log in run.logs { try? run.reopenLog(logID: log.id, at: stamp()) }
        // One pause through the mutations, then as many as allowed of it.
        try? run.pause(at: stamp())
        try? run.resume(at: stamp())
        if let pause = run.pauses.last { run.pauses = Array(repeating: pause, count: runSizePauseAllowance) }
        run.recordMetrics(
            SessionMetrics(
                activeSeconds: -longestNumber, setsCompleted: Int.min, totalVolume: -longestNumber, recordedAt: time),
            at: stamp())
        try? run.endKeepingProgress(at: stamp())
        for index in run.logs.indices {
            run.logs[index].mark = LogMark.allCases.max { $0.rawValue.utf8.count < $1.rawValue.utf8.count }
            run.logs[index].resolution =
                LogResolution.allCases.max { $0.rawValue.utf8.count < $1.rawValue.utf8.count } ?? .inProgress
        }
        run.status = WorkoutStatus.allCases.max { $0.rawValue.utf8.count < $1.rawValue.utf8.count } ?? .inProgress
        run.currentStateIndex = Int.min
        return run
    }

    /// `65536` as `65,536`.
    private static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
