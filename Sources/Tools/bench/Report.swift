import Foundation

/// A goal from the benchmark issue, checked against a row's median.
struct Target {
    enum Comparison { case atLeast, atMost }
    var comparison: Comparison
    var bound: Double

    static func atLeast(_ bound: Double) -> Target { Target(comparison: .atLeast, bound: bound) }
    static func atMost(_ bound: Double) -> Target { Target(comparison: .atMost, bound: bound) }

    func isMet(by value: Double) -> Bool {
        switch comparison {
        case .atLeast: return value >= bound
        case .atMost: return value <= bound
        }
    }

    var text: String {
        (comparison == .atLeast ? "≥ " : "≤ ") + Report.format(bound)
    }
}

/// One line of the table: a measurement (its samples, one per repetition) or a ratio of two
/// measurements (one ratio per repetition, computed from the same repetition's pair).
struct Row {
    var section: String
    var figure: String
    var samples: [Double]
    var unit: String
    /// For a ratio row: what is divided by what.
    var ratio: String?
    var target: Target?
    /// Said under the table (why a size was reduced, what a figure includes).
    var note: String?

    var median: Double { Report.median(samples) }
    var minimum: Double { samples.min() ?? .nan }
    var maximum: Double { samples.max() ?? .nan }
    var met: Bool? { target.map { $0.isMet(by: median) } }
}

/// Collects rows and prints them as a table or JSON.
final class Report {
    private(set) var rows: [Row] = []
    let mode: String
    let started = Date()
    var environment: [String: String] = [:]

    init(mode: String) { self.mode = mode }

    func add(_ row: Row) {
        rows.append(row)
        Progress.say(
            "  \(row.figure): median \(Report.format(row.median)) \(row.unit)"
                + (row.target.map { " (target \($0.text): \(row.met == true ? "met" : "missed"))" } ?? ""))
    }

    func measurement(
        _ section: String, _ figure: String, _ samples: [Double], unit: String, target: Target? = nil,
        note: String? = nil
    ) {
        add(Row(section: section, figure: figure, samples: samples, unit: unit, target: target, note: note))
    }

    /// Adds a ratio row: `numerator[i] / denominator[i]` for each repetition i.
    func ratio(
        _ section: String, _ figure: String, _ numerator: [Double], _ denominator: [Double], definition: String,
        target: Target? = nil, note: String? = nil
    ) {
        let count = min(numerator.count, denominator.count)
        let values = (0..<count).map { numerator[$0] / denominator[$0] }
        add(
            Row(
                section: section, figure: figure, samples: values, unit: "×", ratio: definition, target: target,
                note: note))
    }

    // MARK: Output

    func printTable() {
        let header = ["figure", "median", "min", "max", "n", "unit", "ratio", "target"]
        var lines: [[String]] = []
        var sectionStarts: [Int: String] = [:]
        var lastSection = ""
        for row in rows {
            if row.section != lastSection {
                sectionStarts[lines.count] = row.section
                lastSection = row.section
            }
            let target = row.target.map { "\($0.text) \(row.met == true ? "met" : "MISSED")" } ?? ""
            lines.append([
                row.figure, Report.format(row.median), Report.format(row.minimum), Report.format(row.maximum),
                "\(row.samples.count)", row.unit,
                row.ratio ?? "", target,
            ])
        }
        var widths = header.map(\.count)
        for line in lines {
            for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                // Numbers right-aligned, text left-aligned.
                return (1...4).contains(index) ? pad + cell : cell + pad
            }.joined(separator: " | ")
        }
        let formatter = ISO8601DateFormatter()
        print(
            "WatchSync benchmarks — \(mode) mode, \(formatter.string(from: started)), \(Report.format(Date().timeIntervalSince(started))) s"
        )
        for key in environment.keys.sorted() { print("  \(key): \(environment[key]!)") }
        print("")
        print(render(header))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for (index, line) in lines.enumerated() {
            if let section = sectionStarts[index] { print("[\(section)]") }
            print(render(line))
        }
        let notes = rows.compactMap { row in row.note.map { "- \(row.figure): \($0)" } }
        if !notes.isEmpty {
            print("\nNotes:")
            for note in notes { print(note) }
        }
        let targets = rows.filter { $0.target != nil }
        print("\nTargets: \(targets.filter { $0.met == true }.count) of \(targets.count) met")
    }

    func printJSON() {
        func number(_ value: Double) -> Any { value.isFinite ? value : NSNull() }
        let object: [String: Any] = [
            "mode": mode,
            "date": ISO8601DateFormatter().string(from: started),
            "seconds": Date().timeIntervalSince(started),
            "environment": environment,
            "rows": rows.map { row -> [String: Any] in
                var entry: [String: Any] = [
                    "section": row.section, "figure": row.figure, "unit": row.unit, "median": number(row.median),
                    "min": number(row.minimum), "max": number(row.maximum), "samples": row.samples.map(number),
                ]
                if let ratio = row.ratio { entry["ratio"] = ratio }
                if let target = row.target {
                    entry["target"] = target.text
                    entry["met"] = row.met
                }
                if let note = row.note { entry["note"] = note }
                return entry
            },
        ]
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    // MARK: Numbers

    static func median(_ values: [Double]) -> Double {
        percentile(values, 0.5)
    }

    /// Nearest-rank percentile (p in 0...1) of `values`.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        if p == 0.5, sorted.count % 2 == 0 {
            return (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Three significant digits, no exponent for the magnitudes we print.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        if magnitude >= 0.01 { return String(format: "%.3f", value) }
        if magnitude == 0 { return "0" }
        return String(format: "%.2g", value)
    }
}

/// Progress lines on stderr, so stdout carries only the table (or JSON).
enum Progress {
    static func say(_ line: String) {
        FileHandle.standardError.write(Data("\(line)\n".utf8))
    }
}
