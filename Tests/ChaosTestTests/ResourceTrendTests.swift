import Testing

@testable import chaostest

/// The endurance test's slope fit and its bounds: a series in, a verdict out.
@Suite("Endurance slopes and bounds")
struct ResourceTrendTests {
    /// A sample every minute for `hours`, `value(hours)` at each.
    private func series(hours: Double, _ value: (Double) -> Double) -> [TrendPoint] {
        stride(from: 0.0, through: hours, by: 1.0 / 60).map { TrendPoint(hours: $0, value: value($0)) }
    }

    /// Points from (hours, value) pairs, one life.
    private func points(_ pairs: [(Double, Double)]) -> [TrendPoint] {
        pairs.map { TrendPoint(hours: $0.0, value: $0.1) }
    }

    @Test("an exact line is fitted exactly: slope per hour, no error, the window it spans")
    func exactLine() throws {
        let line = try #require(TrendLine.fit(points([(0, 10), (0.5, 15), (1, 20), (2, 30)])))
        #expect(abs(line.slopePerHour - 10) < 1e-9)
        #expect(line.standardError < 1e-9)
        #expect(line.points == 4)
        #expect(line.windowHours == 2)
    }

    @Test("fewer than two points, or all at one instant, have no line")
    func noLine() {
        #expect(TrendLine.fit([]) == nil)
        #expect(TrendLine.fit(points([(1, 5)])) == nil)
        #expect(TrendLine.fit(points([(1, 5), (1, 7)])) == nil)
    }

    @Test("RSS growing 2 MiB/h over 2 hours exceeds its 1 MiB/h bound")
    func rssLeak() {
        let verdict = TrendVerdict.judge(series(hours: 2) { 50_000_000 + $0 * 2_097_152 }, against: .rss("phoned"))
        #expect(verdict.outcome == .exceeded)
        #expect(verdict.failed)
        #expect(verdict.text.hasPrefix("phoned rss: +2.00 MiB/h"))
    }

    @Test("RSS that climbs while warming up and then stays flat is within its bound: only the second half is fitted")
    func warmUpIgnored() {
        let verdict = TrendVerdict.judge(
            series(hours: 2) { 40_000_000 + min($0, 0.8) * 20_000_000 }, against: .rss("watchd"))
        #expect(verdict.outcome == .withinBound)
        #expect(abs(verdict.line?.slopePerHour ?? 1) < 1)
        #expect(abs((verdict.line?.windowHours ?? 0) - 1) < 0.02)
    }

    @Test("descriptors that come and go (admin connections, files in flight) are noise, not growth")
    func descriptorNoise() {
        let samples = stride(from: 0.0, through: 2.0 / 60, by: 2.0 / 3600).map { hours in
            TrendPoint(hours: hours, value: Double(20 + (Int((hours * 3600).rounded()) % 14 == 0 ? 2 : 0)))
        }
        let verdict = TrendVerdict.judge(samples, against: .count("phoned", "fds"))
        #expect(verdict.outcome == .withinBound)
    }

    @Test("one descriptor more every 10 seconds is a leak, even over a 2-minute run")
    func descriptorLeak() {
        let verdict = TrendVerdict.judge(
            stride(from: 0.0, through: 2.0 / 60, by: 2.0 / 3600).map {
                TrendPoint(hours: $0, value: 20 + ($0 * 360).rounded(.down))
            },
            against: .count("watchd", "fds"))
        #expect(verdict.outcome == .exceeded)
    }

    @Test("a 2-minute run reports RSS and bytes slopes without judging them")
    func shortWindowNotJudged() {
        let samples = stride(from: 0.0, through: 2.0 / 60, by: 2.0 / 3600).map {
            TrendPoint(hours: $0, value: 1e6 + $0 * 1e9)
        }
        #expect(TrendVerdict.judge(samples, against: .rss("phoned")).outcome == .notJudged)
        #expect(TrendVerdict.judge(samples, against: .stateBytes("phone-state")).outcome == .notJudged)
        #expect(!TrendVerdict.judge(samples, against: .stateBytes("phone-state")).failed)
    }

    @Test("a series with fewer than three samples in its second half is too short to fit")
    func tooFew() {
        #expect(TrendVerdict.judge(points([(0, 1), (1, 2)]), against: .rss("phoned")).outcome == .tooFewSamples)
        #expect(TrendVerdict.judge([], against: .rss("phoned")).outcome == .tooFewSamples)
    }

    @Test(
        "samples in, verdicts out: a document directory growing with its documents is explained; state growing is not")
    func fromSamples() {
        let samples = stride(from: 0.0, through: 2.0, by: 1.0 / 60).map { hours in
            let documents = 10 + Int(hours * 100)
            let process = ProcessSample(pid: 1, rssBytes: 30_000_000, fileDescriptors: 20, threads: 6)
            return ResourceSample(
                seconds: hours * 3600, daemons: ["phoned": process, "watchd": process],
                directories: [
                    "phone-state": DirectorySample(bytes: 100_000 + Int(hours * 4_000_000), documents: 0),
                    "watch-state": DirectorySample(bytes: 100_000, documents: 0),
                    "documents": DirectorySample(bytes: documents * 3000, documents: documents),
                    "watch-cache": DirectorySample(bytes: 30_000, documents: 10),
                ])
        }
        let verdicts = EnduranceVerdicts.judge(samples)
        let failed = verdicts.filter(\.failed).map(\.bound.series)
        #expect(failed == ["phone-state bytes"])
        #expect(verdicts.count == 10)
        #expect(verdicts.allSatisfy { $0.outcome != .notJudged && $0.outcome != .tooFewSamples })
        let csv = EnduranceVerdicts.csv(Array(samples.prefix(2))).split(separator: "\n")
        #expect(csv.count == 3)
        #expect(csv[0].hasPrefix("seconds,phoned_rss,phoned_fds,phoned_threads,watchd_rss"))
    }

    @Test("a restart's new baseline is neither growth nor shrinkage: each life has its own level, one slope")
    func restartIsNotGrowth() throws {
        // Flat at 14 descriptors in the first life, flat at 17 in the second (the restart at 0.75 h,
        // inside the second half that is fitted).
        let flat = stride(from: 0.0, through: 1.0, by: 1.0 / 60).map {
            TrendPoint(hours: $0, value: $0 < 0.75 ? 14 : 17, life: $0 < 0.75 ? 100 : 200)
        }
        let line = try #require(TrendLine.fit(flat))
        #expect(abs(line.slopePerHour) < 1e-9)
        #expect(TrendVerdict.judge(flat, against: .count("phoned", "fds")).outcome == .withinBound)
        // Growing 10 per hour within each life, reset by the restart: a leak, though the two ends are level.
        let leaking = stride(from: 0.0, through: 1.0, by: 1.0 / 60).map { hours in
            TrendPoint(
                hours: hours, value: 14 + 10 * (hours < 0.75 ? hours : hours - 0.75), life: hours < 0.75 ? 100 : 200)
        }
        #expect(abs((TrendLine.fit(leaking)?.slopePerHour ?? 0) - 10) < 1e-6)
        #expect(TrendVerdict.judge(leaking, against: .count("phoned", "fds")).outcome == .exceeded)
    }

    @Test("one more thread that stays (a pool growing on demand) is a step, not growth; two steps are")
    func oneStep() {
        let samples = stride(from: 0.0, through: 2.0 / 60, by: 2.0 / 3600).map {
            TrendPoint(hours: $0, value: $0 < 1.5 / 60 ? 5 : 6)
        }
        #expect(TrendVerdict.judge(samples, against: .count("watchd", "threads")).outcome == .withinBound)
        let twice = stride(from: 0.0, through: 2.0 / 60, by: 2.0 / 3600).map {
            TrendPoint(hours: $0, value: $0 < 1.3 / 60 ? 5 : $0 < 1.6 / 60 ? 6 : 7)
        }
        #expect(TrendVerdict.judge(twice, against: .count("watchd", "threads")).outcome == .exceeded)
    }

    @Test("short lives that each start one more pool thread are steps, not growth, though their shared slope is steep")
    func manyLivesOneStepEach() {
        // The 2-hour run's phoned: killed every 5 to 20 minutes, each life at 7 threads and some
        // stepping to 8 (a dispatch worker) and staying; the shared slope came to +3/h ± 0.66.
        let lives: [(start: Double, step: Double?)] = [
            (0, nil), (1.0, 1.1), (1.2, nil), (1.3, 1.45), (1.5, 1.55), (1.65, 1.75), (1.85, 1.9),
        ]
        let samples = stride(from: 0.0, to: 2.0, by: 1.0 / 60).map { hours in
            let index = lives.lastIndex { $0.start <= hours }!
            let stepped = lives[index].step.map { hours >= $0 } ?? false
            return TrendPoint(hours: hours, value: stepped ? 8 : 7, life: Int32(index + 1))
        }
        let line = TrendLine.fit(samples.filter { $0.hours >= 1 })!
        #expect(line.lowerBoundPerHour > 0)
        #expect(TrendVerdict.largestRise(samples) == 1)
        #expect(TrendVerdict.judge(samples, against: .count("phoned", "threads")).outcome == .withinBound)
        // The same lives, one of which takes a second step: growth.
        let twice = samples.map { point in
            var point = point
            if point.life == 4, point.hours >= 1.48 { point.value = 9 }
            return point
        }
        #expect(TrendVerdict.judge(twice, against: .count("phoned", "threads")).outcome == .exceeded)
    }

    @Test(
        "RSS: each life's first 15 minutes are its warm-up; a life that levels is flat, one that keeps climbing is not")
    func lifeWarmUp() {
        // Killed at 1.2 h: the new life climbs 8 MiB in its first 12 minutes, then levels.
        let mib = 1_048_576.0
        func series(_ after: (Double) -> Double) -> [TrendPoint] {
            stride(from: 0.0, through: 2.0, by: 1.0 / 60).map { hours in
                hours < 1.2
                    ? TrendPoint(hours: hours, value: 30 * mib, life: 1)
                    : TrendPoint(hours: hours, value: 30 * mib + after(hours - 1.2), life: 2)
            }
        }
        let levels = series { min($0, 0.2) / 0.2 * 8 * mib }
        // Before: the climb, fitted with the rest of the second half, came to +6 MiB/h.
        #expect(TrendLine.fit(levels.filter { $0.hours >= 1 })!.slopePerHour > 6 * mib)
        #expect(TrendVerdict.judge(levels, against: .rss("phoned")).outcome == .withinBound)
        let climbs = series { min($0, 0.2) / 0.2 * 8 * mib + max(0, $0 - 0.2) * 3 * mib }
        #expect(TrendVerdict.judge(climbs, against: .rss("phoned")).outcome == .exceeded)
    }

    @Test("a daemon that is down at a sample leaves a gap, not a zero")
    func downIsAGap() {
        let samples = (0..<4).map { index in
            ResourceSample(
                seconds: Double(index),
                daemons: index == 2
                    ? [:] : ["phoned": ProcessSample(pid: 1, rssBytes: 1024, fileDescriptors: 5, threads: 2)],
                directories: [:])
        }
        let row = EnduranceVerdicts.csv(samples).split(separator: "\n", omittingEmptySubsequences: false)[3]
        #expect(row == "2.0,,,,,,,,,,,,,,")
    }
}
