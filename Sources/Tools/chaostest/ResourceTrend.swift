/// One point of a series: hours since the start, the value, and which life of the process it
/// belongs to (its pid; 0 for a directory), since a restart starts a process's figures afresh.
struct TrendPoint: Sendable, Equatable {
    var hours: Double
    var value: Double
    var life: Int32 = 0
}

/// A least-squares line through a series of samples (time in hours, value in the series' unit):
/// the slope per hour and its standard error, from which "beyond noise" is judged. Each life has
/// its own level and all share one slope (a fixed-effects fit), so a restart's new baseline is
/// neither growth nor shrinkage: a leak shows as growth within a life.
struct TrendLine: Codable, Sendable, Equatable {
    /// Units per hour.
    var slopePerHour: Double
    /// The slope's standard error (units per hour); 0 with fewer than 3 points or a perfect fit.
    var standardError: Double
    var points: Int
    /// Hours between the first and the last point fitted.
    var windowHours: Double

    /// The fit through `points`; nil with fewer than 2 points or no spread in time within a life.
    static func fit(_ points: [TrendPoint]) -> TrendLine? {
        guard points.count >= 2 else { return nil }
        let lives = Dictionary(grouping: points, by: \.life)
        // Each point measured from its life's means.
        let centred = lives.values.flatMap { life in
            let count = Double(life.count)
            let meanX = life.reduce(0) { $0 + $1.hours } / count
            let meanY = life.reduce(0) { $0 + $1.value } / count
            return life.map { (x: $0.hours - meanX, y: $0.value - meanY) }
        }
        let sxx = centred.reduce(0) { $0 + $1.x * $1.x }
        guard sxx > 0 else { return nil }
        let slope = centred.reduce(0) { $0 + $1.x * $1.y } / sxx
        var error = 0.0
        let freedom = points.count - lives.count - 1
        if freedom > 0 {
            let residuals = centred.reduce(0) { $0 + ($1.y - slope * $1.x) * ($1.y - slope * $1.x) }
            error = (residuals / Double(freedom) / sxx).squareRoot()
        }
        let hours = points.map(\.hours)
        return TrendLine(
            slopePerHour: slope, standardError: error, points: points.count,
            windowHours: (hours.max() ?? 0) - (hours.min() ?? 0))
    }

    /// The slope less two standard errors: what the series grows by at least, with about 97.5%
    /// confidence. A slope is "beyond noise" when this exceeds its bound.
    var lowerBoundPerHour: Double { slopePerHour - 2 * standardError }
}

/// One measured series (a daemon's RSS, descriptors, threads, or a directory's bytes) and the
/// bound its slope must keep (docs/CHAOS.md, "The endurance test").
struct ResourceBound: Codable, Sendable, Equatable {
    /// `phoned rss`, `watch-state bytes`, ….
    var series: String
    var unit: String
    /// Units per hour the slope may reach (beyond noise) without failing.
    var maximumPerHour: Double
    /// Judged only when the fitted window is at least this long (hours): RSS and bytes settle over
    /// minutes (allocator arenas, a journal filling to its cap), so a short run only reports them.
    var minimumWindowHours: Double
    /// The least rise within one life (a value above the lowest before it in that life) that
    /// counts: a count (descriptors, threads) that steps up by one and stays — a pool thread
    /// started on demand — is not a leak, even when many short lives each take that one step and
    /// their shared slope, carried across the whole window, would add up to more.
    var minimumRise: Double = 0
    /// How long each life warms up (hours): its samples before are left out of the fit. A started
    /// daemon's RSS climbs for 10 to 15 minutes before it levels (its allocator's arenas reaching
    /// the working set's high-water mark, `OwnWrites` filling its budget): growth, but not a leak.
    var lifeWarmUpHours: Double = 0

    /// RSS: 1 MiB/h after each life's first 15 minutes; judged over windows of 30 min or more.
    static func rss(_ daemon: String) -> ResourceBound {
        ResourceBound(
            series: "\(daemon) rss", unit: "bytes", maximumPerHour: 1_048_576, minimumWindowHours: 0.5,
            lifeWarmUpHours: 0.25)
    }

    /// Descriptors and threads: no growth beyond noise, whatever the window; a rise of less than
    /// 2 within every life is one step, not growth.
    static func count(_ daemon: String, _ what: String) -> ResourceBound {
        ResourceBound(
            series: "\(daemon) \(what)", unit: what, maximumPerHour: 0, minimumWindowHours: 0, minimumRise: 2)
    }

    /// A state directory (bytes): 1 MiB/h over windows of 30 min or more.
    static func stateBytes(_ directory: String) -> ResourceBound {
        ResourceBound(
            series: "\(directory) bytes", unit: "bytes", maximumPerHour: 1_048_576, minimumWindowHours: 0.5)
    }

    /// A document directory: it grows with the runs the user keeps, so what is bounded is its bytes
    /// per document file (1 KiB/h), judged over windows of 30 min or more.
    static func bytesPerDocument(_ directory: String) -> ResourceBound {
        ResourceBound(
            series: "\(directory) bytes per document", unit: "bytes", maximumPerHour: 1024, minimumWindowHours: 0.5)
    }
}

/// A series' verdict: its fit over the second half of the run and whether it kept its bound.
struct TrendVerdict: Codable, Sendable, Equatable {
    enum Outcome: String, Codable, Sendable {
        case withinBound = "within bound"
        case exceeded
        /// The window is shorter than the bound's minimum: the slope is reported, not judged.
        case notJudged = "not judged (window too short)"
        /// Fewer than 3 samples in the second half.
        case tooFewSamples = "too few samples"
    }

    var bound: ResourceBound
    var line: TrendLine?
    var outcome: Outcome

    var failed: Bool { outcome == .exceeded }

    /// Fits `samples` from half-way through the run on (each life's warm-up left out), and judges the slope: exceeded when even its
    /// lower bound (slope − 2 standard errors) is above the bound and some life rises by
    /// `minimumRise` at least.
    static func judge(_ samples: [TrendPoint], against bound: ResourceBound) -> TrendVerdict {
        guard let first = samples.map(\.hours).min(), let last = samples.map(\.hours).max() else {
            return TrendVerdict(bound: bound, line: nil, outcome: .tooFewSamples)
        }
        let middle = first + (last - first) / 2
        let secondHalf = samples.filter { $0.hours >= middle }
        if last - middle < bound.minimumWindowHours {
            return TrendVerdict(bound: bound, line: TrendLine.fit(secondHalf), outcome: .notJudged)
        }
        var lifeStart: [Int32: Double] = [:]
        for sample in samples { lifeStart[sample.life] = min(lifeStart[sample.life] ?? sample.hours, sample.hours) }
        let fitted = secondHalf.filter { $0.hours - (lifeStart[$0.life] ?? $0.hours) >= bound.lifeWarmUpHours }
        guard fitted.count >= 3, let line = TrendLine.fit(fitted) else {
            return TrendVerdict(bound: bound, line: TrendLine.fit(fitted), outcome: .tooFewSamples)
        }
        let exceeded = line.lowerBoundPerHour > bound.maximumPerHour && largestRise(fitted) >= bound.minimumRise
        return TrendVerdict(bound: bound, line: line, outcome: exceeded ? .exceeded : .withinBound)
    }

    /// The most any life's value rose above the lowest it had been before in that life.
    static func largestRise(_ samples: [TrendPoint]) -> Double {
        Dictionary(grouping: samples, by: \.life).values.map { life in
            var lowest = Double.infinity
            var rise = 0.0
            for point in life.sorted(by: { $0.hours < $1.hours }) {
                lowest = min(lowest, point.value)
                rise = max(rise, point.value - lowest)
            }
            return rise
        }.max() ?? 0
    }

    /// `phoned rss: +0.12 MiB/h ± 0.30 over 1.00 h (61 samples), bound 1.00 MiB/h: within bound`.
    var text: String {
        guard let line else { return "\(bound.series): \(outcome.rawValue)" }
        return "\(bound.series): \(Self.amount(line.slopePerHour, bound.unit))/h ± "
            + "\(Self.amount(line.standardError, bound.unit, signed: false)) over "
            + "\(String(format: "%.2f", line.windowHours)) h (\(line.points) samples), bound "
            + "\(Self.amount(bound.maximumPerHour, bound.unit, signed: false))/h: \(outcome.rawValue)"
    }

    /// Bytes in KiB or MiB, counts as they are.
    static func amount(_ value: Double, _ unit: String, signed: Bool = true) -> String {
        let sign = signed && value >= 0 ? "+" : ""
        guard unit == "bytes" else { return sign + String(format: "%.2f", value) }
        if abs(value) >= 1_048_576 { return sign + String(format: "%.2f MiB", value / 1_048_576) }
        return sign + String(format: "%.1f KiB", value / 1024)
    }
}
