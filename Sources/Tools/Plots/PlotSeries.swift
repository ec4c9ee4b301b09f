/// One series of a `PlotFigure`: rows of numbers and how they are drawn.
package struct PlotSeries: Equatable, Sendable {
    /// How the rows are drawn, and what their columns are.
    package enum Style: Equatable, Sendable {
        /// x, y: a staircase (counts over time, a cumulative distribution).
        case steps
        /// x, y: one mark per row (events at instants).
        case points
        /// x, y: a line through the rows (a quantity sampled over time).
        case lines
        /// category, median, minimum, maximum: a mark at the median with a bar from min to max, for a
        /// figure with `categories` (the category is the row's index there).
        case ranges

        var columns: [String] {
            switch self {
            case .steps, .points, .lines: ["x", "y"]
            case .ranges: ["category", "median", "min", "max"]
            }
        }

        var plotClause: String {
            switch self {
            case .steps: "using 1:2 with steps linewidth 2"
            case .points: "using 1:2 with points pointtype 7 pointsize 0.6"
            case .lines: "using 1:2 with lines linewidth 2"
            case .ranges: "using 2:1:3:4 with xerrorbars pointtype 7 pointsize 1.2 linewidth 2"
            }
        }
    }

    package var title: String
    package var style: Style
    /// Drawn against the right-hand axis (`PlotFigure.rightLabel`).
    package var onRightAxis: Bool
    package var rows: [[Double]]

    package init(title: String, style: Style, onRightAxis: Bool = false, rows: [[Double]]) {
        self.title = title
        self.style = style
        self.onRightAxis = onRightAxis
        self.rows = rows
    }

    /// How many of `instants` have happened by each of them: a staircase from (0, 0) rising by one
    /// at each instant (in order), e.g. edits acknowledged or kills against seconds since the start.
    /// Past `maximumRows` instants only that many evenly spaced steps are kept (the last always): a
    /// soak's ten thousand edits draw the same curve in a file a tenth the size.
    package static func count(
        _ title: String, at instants: [Double], onRightAxis: Bool = false, maximumRows: Int = 400
    ) -> PlotSeries {
        let sorted = instants.filter(\.isFinite).sorted()
        guard !sorted.isEmpty else {
            return PlotSeries(title: title, style: .steps, onRightAxis: onRightAxis, rows: [])
        }
        let kept =
            sorted.count <= maximumRows
            ? Array(sorted.indices)
            : (0..<maximumRows).map { $0 * (sorted.count - 1) / (maximumRows - 1) }
        let rows = [[0, 0]] + kept.map { [sorted[$0], Double($0 + 1)] }
        return PlotSeries(title: title, style: .steps, onRightAxis: onRightAxis, rows: rows)
    }

    /// The empirical cumulative distribution of `values`: for each value in order, the fraction of
    /// values at or below it (a staircase from 0 to 1). No values, no rows.
    package static func distribution(_ title: String, of values: [Double]) -> PlotSeries {
        let sorted = values.filter(\.isFinite).sorted()
        let total = Double(sorted.count)
        var rows: [[Double]] = sorted.isEmpty ? [] : [[sorted[0], 0]]
        rows += sorted.enumerated().map { [$1, Double($0 + 1) / total] }
        return PlotSeries(title: title, style: .steps, rows: rows)
    }
}
