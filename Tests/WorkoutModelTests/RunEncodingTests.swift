import Foundation
import LinkProtocol
import Testing
import WorkoutModel

/// `WorkoutDocument.encodedJSON(pretty:)` writes a run's JSON by hand; it must be exactly what
/// `JSONEncoder` writes with sorted keys, compact and pretty, whatever the run holds — valid or not.
@Suite("Run encoding: the hand-written JSON is JSONEncoder's, byte for byte")
struct RunEncodingTests {
    /// `JSONEncoder` itself (not `DocumentCoder`, which may use the encoder under test).
    static func reference(_ run: WorkoutDocument, pretty: Bool) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys]
        return Array(try encoder.encode(run))
    }

    /// Nil when the bytes are equal; else where they first differ, with some text around it.
    static func difference(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
        guard actual != expected else { return nil }
        let offset = zip(actual, expected).prefix { $0 == $1 }.count
        func around(_ bytes: [UInt8]) -> String {
            String(decoding: bytes[max(0, offset - 40)..<min(bytes.count, offset + 40)], as: UTF8.self).debugDescription
        }
        return "differ at byte \(offset) of \(actual.count) (expected \(expected.count)): "
            + "\(around(actual)) vs JSONEncoder's \(around(expected))"
    }

    static func expectSameBytes(_ run: WorkoutDocument, _ label: String) throws {
        for pretty in [false, true] {
            let difference = difference(run.encodedJSON(pretty: pretty), try reference(run, pretty: pretty))
            #expect(difference == nil, "\(label), pretty: \(pretty): \(difference ?? "")")
        }
    }

    /// Text from a pool of what JSON escapes or passes through: printable ASCII, every control
    /// character, DEL, non-ASCII letters, a combining mark, line and paragraph separators, a BOM, emoji.
    static func randomText(_ random: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] =
            (0x00...0x7F).map { Unicode.Scalar(UInt8($0)) }
            + ["é", "ß", "€", "\u{301}", "\u{2028}", "\u{2029}", "\u{FEFF}", "😀", "💪", "\u{1F3FD}"]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...16, using: &random) { text.append(pool.randomElement(using: &random)!) }
        return String(text)
    }

    /// A random run from `seed`: a random split's run with random edits (sets, skips, reopens, pauses,
    /// ends, metrics), some of its names replaced by random text.
    static func randomRun(seed: UInt64) throws -> WorkoutDocument {
        var random = SplitMix64(seed: seed)
        let split = ContextCodingTests.randomSplit(&random, n: Int(seed))
        var run = try ContextCodingTests.randomRun(&random, of: split, n: 10_000 + Int(seed))
        var clock = HybridLogicalClock(origin: Bool.random(using: &random) ? .phone : .watch)
        clock.observe(run)
        for step in 0..<Int.random(in: 0...10, using: &random) {
            let stamp = clock.stamp(at: at(7_200 + 37 * step))
            if Int.random(in: 0..<4, using: &random) == 0, let log = run.logs.first(where: \.isResolved) {
                try? run.reopenLog(logID: log.id, at: stamp)
            } else {
                ContextCodingTests.edit(&run, &random, stamp: stamp)
            }
        }
        if Bool.random(using: &random) { run.splitName = randomText(&random) }
        for index in run.logs.indices where Bool.random(using: &random) {
            run.logs[index].exerciseName = randomText(&random)
            run.logs[index].equipment = randomText(&random)
        }
        return run
    }

    @Test("600 seeded random runs: the same bytes as JSONEncoder, compact and pretty")
    func randomRuns() throws {
        var seen: [String: Int] = [:]
        for seed in UInt64(1)...600 {
            let run = try Self.randomRun(seed: seed)
            try Self.expectSameBytes(run, "seed \(seed)")
            let marks = run.logs.compactMap(\.mark)
            let sets = run.logs.flatMap(\.sets)
            for (feature, present) in [
                ("metrics", run.metrics != nil), ("no metrics", run.metrics == nil),
                ("no pauses", run.pauses.isEmpty), ("open pause", run.pauses.contains { $0.end == nil }),
                ("closed pause", run.pauses.contains { $0.end != nil }), ("ended", run.endedAt != nil),
                ("ending at", run.ending.at != nil), ("skipped", marks.contains(.skipped)),
                ("reopened", marks.contains(.reopened)), ("done set", sets.contains { $0.completedAt != nil }),
                ("open set", sets.contains { $0.completedAt == nil }),
            ] where present {
                seen[feature, default: 0] += 1
            }
        }
        // The runs cover what the encoder treats differently.
        for feature in [
            "metrics", "no metrics", "no pauses", "open pause", "closed pause", "ended", "ending at", "skipped",
            "reopened", "done set", "open set",
        ] {
            #expect(seen[feature, default: 0] >= 10, "only \(seen[feature, default: 0]) runs with \(feature)")
        }
    }

    @Test("the pretty and compact encodings of 600 random runs decode to the same run")
    func roundTrips() throws {
        for seed in UInt64(1)...600 {
            let run = try Self.randomRun(seed: seed)
            #expect(try DocumentCoder.decode(WorkoutDocument.self, from: run.encodedJSON(pretty: true)) == run)
            #expect(try DocumentCoder.decode(WorkoutDocument.self, from: run.encodedJSON(pretty: false)) == run)
        }
    }

    static let edgeDoubles: [Double] = [
        0, -0.0, 0.1, 1e-7, 1e20, 99_999.789, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, 100, 2.5,
        -1.5, 1e16, 1e15, 123_456.000_001, .leastNormalMagnitude, 1 / 3, 0.000_1, 1e-5,
    ]
    static let edgeInts: [Int] = [0, 1, -1, 9, 10, 99, 100, 1_000_000, Int.max, Int.min, Int.min + 1]
    static let edgeTexts: [String] =
        ["", "/", "//", String((0x00...0x1F).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}", "a\u{0}b"]
        + ContextCodingTests.names
    static let edgeTimes: [Timestamp] = [
        Timestamp(microsecondsSinceEpoch: 0), Timestamp(microsecondsSinceEpoch: 1), at(-1),
        Timestamp(microsecondsSinceEpoch: 253_402_300_799_999_999),  // 9999-12-31T23:59:59.999999Z
        Timestamp(microsecondsSinceEpoch: 253_402_300_800_000_000),  // year 10000: the slow text form
        Timestamp(microsecondsSinceEpoch: -62_167_219_200_000_001),  // just before year 0
        Timestamp(microsecondsSinceEpoch: -100_000_000_000_000_000),
    ]

    /// Runs with one field, or one combination of optionals, set by hand to each edge value.
    static func edgeRuns() throws -> [(String, WorkoutDocument)] {
        let base = try startedRun()
        let stamp = Stamp(time: at(1), counter: 3, origin: .watch)
        var runs: [(String, WorkoutDocument)] = [("started", base)]
        func variant(_ label: String, _ change: (inout WorkoutDocument) -> Void) {
            var run = base
            change(&run)
            runs.append((label, run))
        }
        for value in edgeDoubles {
            variant("double \(value)") { run in
                run.logs[0].targetWeight = value
                run.logs[1].sets[0] = SetRecord(reps: 1, weight: value, completedAt: at(1), stamp: stamp)
                run.metrics = SessionMetrics(
                    activeSeconds: value, setsCompleted: 1, totalVolume: -value, recordedAt: at(2))
            }
        }
        for value in edgeInts {
            variant("int \(value)") { run in
                run.logs[0].targetReps = value
                run.logs[0].sets[1] = SetRecord(reps: value, weight: 1, completedAt: at(1), stamp: stamp)
                run.logs[1].markStamp = Stamp(time: at(2), counter: value, origin: .phone)
                run.metrics = SessionMetrics(activeSeconds: 1, setsCompleted: value, totalVolume: 1, recordedAt: at(2))
                run.currentStateIndex = value
                run.schemaVersion = value
            }
        }
        for text in edgeTexts {
            variant("text \(text.debugDescription)") { run in
                run.splitName = text
                run.logs[0].exerciseName = text
                run.logs[1].equipment = text
            }
        }
        for time in edgeTimes {
            variant("time \(time)") { run in
                run.startedAt = time
                run.endedAt = time
                run.updatedAt = time
                run.ending = Ending(at: time, stamp: Stamp(time: time, origin: .watch))
                run.pauses = [PauseInterval(start: time, end: time), PauseInterval(start: time)]
                run.pausesStamp = Stamp(time: time, counter: 7, origin: .phone)
                run.logs[0].sets[0] = SetRecord(reps: 1, weight: 1, completedAt: time, stamp: stamp)
            }
        }
        let pauseLists: [[PauseInterval]] = [
            [], [PauseInterval(start: at(5))], [PauseInterval(start: at(5), end: at(6))],
            [PauseInterval(start: at(5), end: at(6)), PauseInterval(start: at(7))],
        ]
        let metrics = SessionMetrics(activeSeconds: 61.5, setsCompleted: 3, totalVolume: 1_250, recordedAt: at(9))
        let sets = [
            SetRecord(stamp: stamp), SetRecord(reps: 8, weight: 22.5, completedAt: at(3), stamp: stamp),
            SetRecord(reps: 8, stamp: stamp), SetRecord(weight: 0, stamp: stamp),
            SetRecord(completedAt: at(3), stamp: stamp),
        ]
        for (index, pauses) in pauseLists.enumerated() {
            for withMetrics in [false, true] {
                for endingAt in [nil, at(10)] {
                    for endedAt in [nil, at(11)] {
                        for mark in [nil, LogMark.skipped, .reopened] {
                            let label =
                                "pauses \(index), metrics \(withMetrics), ending.at \(endingAt != nil), "
                                + "endedAt \(endedAt != nil), mark \(mark.map(\.rawValue) ?? "nil")"
                            variant(label) { run in
                                run.pauses = pauses
                                run.metrics = withMetrics ? metrics : nil
                                run.ending.at = endingAt
                                run.endedAt = endedAt
                                run.logs[0].mark = mark
                                run.logs[0].sets = sets
                            }
                        }
                    }
                }
            }
        }
        variant("one log, one empty set, every optional nil") { run in
            run.logs = [run.logs[1]]
            run.logs[0].sets = [SetRecord(stamp: stamp)]
        }
        variant("no logs") { run in run.logs = [] }
        variant("a log with no sets") { run in run.logs[1].sets = [] }
        variant("every status and resolution") { run in
            run.status = .completed
            run.logs[0].resolution = .skipped
            run.logs[1].resolution = .inProgress
        }
        return runs
    }

    @Test("edge values set by hand: the same bytes as JSONEncoder, compact and pretty")
    func edgeValues() throws {
        let runs = try Self.edgeRuns()
        #expect(runs.count > 100)
        for (label, run) in runs { try Self.expectSameBytes(run, label) }
    }

    @Test("an empty array, pretty, is JSONEncoder's: the bracket, two newlines, the indent, the bracket")
    func emptyArrayLayout() throws {
        var run = try startedRun()
        run.pauses = []
        let text = String(decoding: run.encodedJSON(pretty: true), as: UTF8.self)
        #expect(text.contains("\n  \"pauses\" : [\n\n  ],\n"))
        #expect(run.encodedJSON(pretty: true) == (try Self.reference(run, pretty: true)))
    }
}
