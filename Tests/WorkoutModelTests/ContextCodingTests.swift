import Foundation
import LinkProtocol
import Testing
import WorkoutModel

/// `ContextEncoder` and `ContextDecoder` reuse pieces of earlier contexts; they must give exactly what
/// `DocumentCoder` gives — the same bytes, the same value, the same error — for any context and any bytes.
@Suite("Context coding: seeded property tests")
struct ContextCodingTests {
    /// Text with everything JSON escapes or structures: quotes, backslashes, brackets, commas, slashes,
    /// control characters, non-ASCII and emoji.
    static let names = [
        "Legs", "Push \"heavy\"", #"back\slash"#, "a]b}c{d[e", "x,y:z", "fast/slow", "tab\tnew\nline",
        "\u{1}\u{1F}", "Übung é e\u{301}", "💪🏽 day", "", "workouts", #"\"workouts\":[]"#,
    ]

    static func randomSplit(_ random: inout SplitMix64, n: Int) -> SplitDocument {
        let exercises = (0..<Int.random(in: 1...4, using: &random)).map { _ in
            ExerciseTemplate(
                name: names.randomElement(using: &random)!, equipment: names.randomElement(using: &random)!,
                targetSets: Int.random(in: 1...4, using: &random), targetReps: Int.random(in: 0...20, using: &random),
                targetWeight: [0, 2.5, 100, 1e-7, 99_999.789, 0.1].randomElement(using: &random)!)
        }
        return SplitDocument(
            id: id(n), name: names.randomElement(using: &random)!, exercises: exercises,
            updatedAt: t0.advanced(by: .microseconds(Int64.random(in: 0...1_000_000_000, using: &random))))
    }

    /// A run of `split` with a few random edits on either side.
    static func randomRun(_ random: inout SplitMix64, of split: SplitDocument, n: Int) throws -> WorkoutDocument {
        var clock = HybridLogicalClock(origin: .phone)
        var run = try WorkoutDocument.start(from: split, id: id(n), at: clock.stamp(at: t0))
        var now = t0.microsecondsSinceEpoch
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            now += Int64.random(in: 0...3_000_000, using: &random)
            edit(&run, &random, stamp: clock.stamp(at: Timestamp(microsecondsSinceEpoch: now)))
        }
        return run
    }

    static func edit(_ run: inout WorkoutDocument, _ random: inout SplitMix64, stamp: Stamp) {
        let log = Int.random(in: 0..<run.logs.count, using: &random)
        let logID = run.logs[log].id
        let set = Int.random(in: 0..<run.logs[log].sets.count, using: &random)
        let reps = Int.random(in: 0...30, using: &random)
        let weight = [0, 0.5, 62.5, 1_000.25, 3.141_592_653_589_793].randomElement(using: &random)!
        switch Int.random(in: 0..<9, using: &random) {
        case 0...3: try? run.completeSet(logID: logID, setIndex: set, reps: reps, weight: weight, at: stamp)
        case 4: try? run.undoSet(logID: logID, setIndex: set, at: stamp)
        case 5: try? run.skipLog(logID: logID, at: stamp)
        case 6: try? run.endKeepingProgress(at: stamp)
        case 7: try? run.isPaused ? run.resume(at: stamp) : run.pause(at: stamp)
        default: run.recordMetrics(run.sessionMetrics(recordedAt: stamp.time), at: stamp)
        }
    }

    static func randomContext(_ random: inout SplitMix64, runs: [WorkoutDocument], splits: [SplitDocument])
        -> ApplicationContext
    {
        var context = ApplicationContext(
            splits: splits.filter { _ in Bool.random(using: &random) },
            workouts: runs.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }.shuffled(using: &random),
            settings: Settings(
                restSeconds: Int.random(in: 0...300, using: &random), doneCountdownSeconds: 5,
                weightUnit: Bool.random(using: &random) ? .kilograms : .pounds),
            editLocks: EditLocks(editingWorkoutID: Bool.random(using: &random) ? runs.first?.id : nil))
        if Bool.random(using: &random) { context.heldBackRunIDs = runs.prefix(2).map(\.id) }
        if Bool.random(using: &random) { context.epoch = at(Int.random(in: 0...100_000, using: &random)) }
        return context
    }

    /// A sequence of contexts as a phone would push them: the same runs, some edited between pushes.
    static func pushes(seed: UInt64) throws -> [ApplicationContext] {
        var random = SplitMix64(seed: seed)
        let splits = (0..<Int.random(in: 1...4, using: &random)).map { randomSplit(&random, n: 1 + $0) }
        var runs = try (0..<Int.random(in: 0...8, using: &random)).map {
            try randomRun(&random, of: splits.randomElement(using: &random)!, n: 100 + $0)
        }
        var clock = HybridLogicalClock(origin: .watch)
        var contexts: [ApplicationContext] = []
        for step in 0..<8 {
            if !runs.isEmpty {
                let which = Int.random(in: 0..<runs.count, using: &random)
                clock.observe(runs[which])
                edit(&runs[which], &random, stamp: clock.stamp(at: at(3_600 + step)))
            }
            contexts.append(randomContext(&random, runs: runs, splits: splits))
        }
        return contexts
    }

    @Test("the encoder's bytes are JSONEncoder's, fresh and with cached runs and frames, over 300 seeds")
    func encoderMatches() throws {
        for seed in UInt64(1)...300 {
            var encoder = ContextEncoder()
            for context in try Self.pushes(seed: seed) {
                let expected = DocumentCoder.encodeCompact(context)
                #expect(encoder.encode(context) == expected, "seed \(seed)")
                var fresh = ContextEncoder()
                #expect(fresh.encode(context) == expected, "seed \(seed)")
                for run in context.workouts {
                    #expect(encoder.bytes(of: run) == DocumentCoder.encodeCompact(run), "seed \(seed)")
                }
            }
        }
    }

    @Test("the decoder gives DocumentCoder's value, fresh and with cached pieces, over 300 seeds")
    func decoderMatches() throws {
        for seed in UInt64(1)...300 {
            var decoder = ContextDecoder()
            let contexts = try Self.pushes(seed: seed)
            for context in contexts {
                let bytes = DocumentCoder.encodeCompact(context)
                #expect(try decoder.decode(bytes) == DocumentCoder.decode(ApplicationContext.self, from: bytes))
                var fresh = ContextDecoder()
                #expect(try fresh.decode(bytes) == context, "seed \(seed)")
            }
            // Every one of them was decoded by its parts, not whole.
            #expect(decoder.decodedByParts == contexts.count, "seed \(seed)")
        }
    }

    @Test("runs expected by their bytes are taken as they are and give DocumentCoder's value, over 300 seeds")
    func expectedRunsMatch() throws {
        for seed in UInt64(1)...300 {
            var decoder = ContextDecoder()
            let contexts = try Self.pushes(seed: seed)
            // The first context's runs are decoded; after it, only the runs too many to keep expecting.
            var mustDecode = contexts.first?.workouts.count ?? 0
            for (step, context) in contexts.enumerated() {
                if step > 0 {
                    // The runs this step changed, as the watch that made the edits sent them.
                    let changed = context.workouts.filter { !contexts[step - 1].workouts.contains($0) }
                    for run in changed { decoder.expect(run, encodedAs: DocumentCoder.encodeCompact(run)) }
                    mustDecode += max(0, changed.count - ContextDecoder.keptExpected)
                }
                let bytes = DocumentCoder.encodeCompact(context)
                #expect(try decoder.decode(bytes) == DocumentCoder.decode(ApplicationContext.self, from: bytes))
            }
            #expect(decoder.decodedByParts == contexts.count, "seed \(seed)")
            #expect(decoder.runsDecoded == mustDecode, "seed \(seed)")
        }
    }

    @Test("a run expected in an older version than the context's is decoded, not taken, over 100 seeds")
    func expectedOlderVersion() throws {
        for seed in UInt64(1)...100 {
            let contexts = try Self.pushes(seed: seed)
            for (older, newer) in zip(contexts, contexts.dropFirst()) {
                // Each older version of a run the newer context changed.
                let stale = older.workouts.filter { run in !newer.workouts.contains(run) }
                var decoder = ContextDecoder()
                for run in stale { decoder.expect(run, encodedAs: DocumentCoder.encodeCompact(run)) }
                #expect(try decoder.decode(DocumentCoder.encodeCompact(newer)) == newer, "seed \(seed)")
                #expect(decoder.runsDecoded == newer.workouts.count, "seed \(seed)")
            }
        }
    }

    static func outcome(_ decode: () throws(DocumentError) -> ApplicationContext) -> Result<
        ApplicationContext, DocumentError
    > {
        do throws(DocumentError) {
            return .success(try decode())
        } catch {
            return .failure(error)
        }
    }

    /// Damaged, reformatted and hand-made variants of a context's bytes.
    static func variants(of bytes: [UInt8], _ random: inout SplitMix64) -> [[UInt8]] {
        let structural = Array(#"{}[],:"\ 0a"#.utf8)
        var variants: [[UInt8]] = []
        for _ in 0..<12 {
            var damaged = bytes
            let position = Int.random(in: 0..<damaged.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: damaged[position] = structural.randomElement(using: &random)!
            case 1: damaged.insert(structural.randomElement(using: &random)!, at: position)
            case 2:
                damaged.removeSubrange(position..<min(damaged.count, position + Int.random(in: 1...40, using: &random)))
            default:
                let end = min(damaged.count, position + Int.random(in: 1...200, using: &random))
                damaged.insert(
                    contentsOf: damaged[position..<end], at: Int.random(in: 0...damaged.count, using: &random))
            }
            variants.append(damaged)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for (from, to) in [
            (#"{"#, #"{"workouts":[],"#), (#"{"#, #"{"work\u0073uts":[],"#), (#"{"#, #" {"#), (#"":"#, #"" : "#),
            (#"},{"#, #"} ,{"#), (#"},{"#, #"},,{"#), (#""workouts":["#, #""workouts":[ "#),
            (#""workouts":["#, #""workouts":{"a":"#), (#""schemaVersion":2"#, #""schemaVersion":3"#),
            (#""schemaVersion":1"#, #""schemaVersion":"1""#), (#"}]}"#, #"}]}x"#), (#"]}"#, #"],"workouts":[]}"#),
        ] {
            if let range = text.range(of: from) {
                variants.append(Array(text.replacingCharacters(in: range, with: to).utf8))
            }
            variants.append(Array(text.replacingOccurrences(of: from, with: to).utf8))
        }
        return variants
    }

    @Test("damaged and unusual bytes decode to DocumentCoder's value or error, over 25 seeds")
    func decoderMatchesOnAnyBytes() throws {
        for seed in UInt64(1)...25 {
            var random = SplitMix64(seed: seed &* 7_919)
            var decoder = ContextDecoder()
            for context in try Self.pushes(seed: seed).suffix(3) {
                let bytes = DocumentCoder.encodeCompact(context)
                _ = Self.outcome { () throws(DocumentError) in try decoder.decode(bytes) }
                var candidates = Self.variants(of: bytes, &random)
                candidates.append(DocumentCoder.encodeForDisk(context))
                for candidate in candidates {
                    let expected = Self.outcome { () throws(DocumentError) in
                        try DocumentCoder.decode(ApplicationContext.self, from: candidate)
                    }
                    let warm = Self.outcome { () throws(DocumentError) in try decoder.decode(candidate) }
                    var cold = ContextDecoder()
                    let fresh = Self.outcome { () throws(DocumentError) in try cold.decode(candidate) }
                    #expect(warm == expected, "seed \(seed): \(String(decoding: candidate, as: UTF8.self))")
                    #expect(fresh == expected, "seed \(seed): \(String(decoding: candidate, as: UTF8.self))")
                }
            }
        }
    }

    @Test("a workout update spliced around its run's encoding is the message's encoding, over 300 seeds")
    func updateSplice() throws {
        for seed in UInt64(1)...300 {
            var random = SplitMix64(seed: seed &* 31)
            for context in try Self.pushes(seed: seed).suffix(2) {
                for run in context.workouts {
                    let epoch = Bool.random(using: &random) ? context.epoch : nil
                    #expect(
                        WatchToPhoneMessage.encodedUpdate(run, runBytes: DocumentCoder.encodeCompact(run), epoch: epoch)
                            == WatchToPhoneMessage.workoutUpdate(run, epoch: epoch).encoded(), "seed \(seed)")
                }
            }
        }
    }

    @Test("a run of an older schema inside a context decodes as it does whole")
    func olderRunInside() throws {
        let run = try startedRun()
        let context = ApplicationContext(splits: [], workouts: [run], settings: Settings(), editLocks: EditLocks())
        var text = String(decoding: DocumentCoder.encodeCompact(context), as: UTF8.self)
        text = text.replacingOccurrences(of: #""schemaVersion":2"#, with: #""schemaVersion":1"#)
        let bytes = Array(text.utf8)
        var decoder = ContextDecoder()
        #expect(
            Self.outcome { () throws(DocumentError) in try decoder.decode(bytes) }
                == Self.outcome { () throws(DocumentError) in
                    try DocumentCoder.decode(ApplicationContext.self, from: bytes)
                })
    }
}
