import Foundation
import Plots

/// One row of the table as `--plot` draws it: from this run's `Report`, or from a recorded `--json`.
struct PlottedRow: Codable, Equatable {
    var section: String
    var figure: String
    var unit: String
    /// nil where the JSON has null (a figure that could not be measured).
    var median: Double?
    var min: Double?
    var max: Double?

    init(section: String, figure: String, unit: String, median: Double?, min: Double?, max: Double?) {
        self.section = section
        self.figure = figure
        self.unit = unit
        self.median = median
        self.min = min
        self.max = max
    }

    init(_ row: Row) {
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        self.init(
            section: row.section, figure: row.figure, unit: row.unit, median: finite(row.median),
            min: finite(row.minimum), max: finite(row.maximum))
    }
}

/// What `bench --plot DIR` draws: each figure next to its anchors.
enum BenchPlots {
    /// A recorded `bench --json` output's mode (`quick`, `full`) and rows (`Report.printJSON`).
    static func recorded(fromJSON data: Data) throws -> (mode: String, rows: [PlottedRow]) {
        struct Recorded: Decodable {
            var mode: String
            var rows: [PlottedRow]
        }
        let recorded = try JSONDecoder().decode(Recorded.self, from: data)
        return (recorded.mode, recorded.rows)
    }

    /// One chart per section and unit: each row a median with its min–max bar, in the table's order,
    /// so a figure stands next to the machine limits measured beside it, and its ratios (unit ×) to
    /// them stand in a chart of their own. Rows without a median are left out.
    static func figures(_ rows: [PlottedRow], mode: String) -> [PlotFigure] {
        var groups: [(section: String, unit: String, rows: [PlottedRow])] = []
        for row in rows where row.median != nil {
            if let index = groups.firstIndex(where: { $0.section == row.section && $0.unit == row.unit }) {
                groups[index].rows.append(row)
            } else {
                groups.append((row.section, row.unit, [row]))
            }
        }
        return groups.map { group in
            let ranges = group.rows.enumerated().map { index, row -> [Double] in
                let median = row.median ?? .nan
                return [Double(index), median, row.min ?? median, row.max ?? median]
            }
            let ratio = group.unit == "×"
            return PlotFigure(
                name: "bench-\(slug(group.section))-\(ratio ? "ratios" : slug(group.unit))",
                // The section's name without its parenthesis: the long tic labels leave the title little room.
                title: "\(group.section.prefix { $0 != "(" }.trimmingCharacters(in: .whitespaces))"
                    + (ratio ? ": ratios" : "") + " (\(mode))",
                xLabel: ratio
                    ? "ratio (×): median, bar from min to max" : "\(group.unit): median, bar from min to max",
                yLabel: "",
                series: [PlotSeries(title: "median, min–max", style: .ranges, rows: ranges)],
                categories: group.rows.map(\.figure))
        }
    }

    /// A file-name part: the section's number (`2. round trip …` → `2`), or the text's letters and
    /// digits (`µs` → `us`, `runs/s` → `runs-s`).
    static func slug(_ text: String) -> String {
        if let number = text.split(separator: ".").first, !number.isEmpty, number.allSatisfy(\.isNumber) {
            return String(number)
        }
        let mapped = text.replacingOccurrences(of: "µ", with: "u").map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let slug = String(mapped).split(separator: "-").joined(separator: "-").lowercased()
        return slug.isEmpty ? "values" : slug
    }
}
