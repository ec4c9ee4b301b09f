/// A chart: one or more series on one pair of axes, written as a data file (`data`) and the gnuplot
/// script that draws it as an SVG (`gnuplotScript`). Pure: the files are the caller's to write, and
/// gnuplot the caller's to run.
///
/// Two kinds: series over an x axis (`steps`, `points`; time courses and distributions), and a
/// category chart (`categories` set, every series `ranges`), one row per category down the y axis,
/// the median a point with a min–max bar through it.
package struct PlotFigure: Equatable, Sendable {
    /// The file stem: `<name>.csv`, `<name>.gp`, `<name>.svg`. Letters, digits, `-` and `_`.
    package var name: String
    package var title: String
    package var xLabel: String
    package var yLabel: String
    /// The right-hand axis' label, for series with `onRightAxis`.
    package var rightLabel: String?
    package var series: [PlotSeries]
    /// A category chart's row labels, top to bottom (row i is y = i).
    package var categories: [String]?

    package init(
        name: String, title: String, xLabel: String, yLabel: String, rightLabel: String? = nil,
        series: [PlotSeries], categories: [String]? = nil
    ) {
        self.name = name
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.rightLabel = rightLabel
        self.series = series
        self.categories = categories
    }

    /// The series that have rows: gnuplot refuses to plot an empty block.
    package var drawnSeries: [PlotSeries] { series.filter { !$0.rows.isEmpty } }

    /// The data file: one block per drawn series (gnuplot's `index`), each headed by `#` comment lines
    /// naming the series and its columns, rows as comma-separated numbers, blocks two blank lines apart.
    package var data: String {
        drawnSeries.map { series in
            let header = "# \(series.title)\n# \(series.style.columns.joined(separator: ","))\n"
            return header + series.rows.map { $0.map(Self.number).joined(separator: ",") + "\n" }.joined()
        }.joined(separator: "\n\n")
    }

    /// The gnuplot script that reads `dataFile` and writes the SVG `output` (both paths as gnuplot
    /// should open them).
    package func gnuplotScript(dataFile: String, output: String) -> String {
        let rows = categories?.count ?? 0
        let height = categories == nil ? 450 : max(220, 110 + 26 * rows)
        var lines = [
            "set terminal svg size 900,\(height) dynamic noenhanced font \"sans,12\" background \"white\"",
            "set output \(Self.quoted(output))",
            "set datafile separator \",\"",
            "set title \(Self.quoted(title))",
            "set xlabel \(Self.quoted(xLabel))",
            "set ylabel \(Self.quoted(yLabel))",
            "set grid",
            "set key outside bottom center horizontal",
        ]
        if let rightLabel {
            lines += [
                "set y2label \(Self.quoted(rightLabel))", "set ytics nomirror", "set y2tics", "set y2range [0:*]",
            ]
        }
        if let categories {
            let tics = categories.enumerated().map { "\(Self.quoted($1)) \($0)" }.joined(separator: ", ")
            lines += [
                // First row on top: an explicit range is reversed by its order (`reverse` is for autoscale).
                "set ytics (\(tics))", "set yrange [\(Self.number(Double(rows) - 0.5)):-0.5]",
                "set ylabel \"\"", "set xrange [0:*]", "set grid noytics xtics",
                // The x label says what the marks are; a key would repeat it.
                "unset key",
            ]
        } else {
            lines.append("set yrange [0:*]")
        }
        let plots = drawnSeries.enumerated().map { index, series in
            let axes = series.onRightAxis ? " axes x1y2" : ""
            return "\(Self.quoted(dataFile)) index \(index) \(series.style.plotClause)\(axes) "
                + "title \(Self.quoted(series.title))"
        }
        lines.append("plot " + plots.joined(separator: ", \\\n     "))
        return lines.joined(separator: "\n") + "\n"
    }

    /// A number as gnuplot reads it: integers without a fraction, others with up to 6 decimals.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "NaN" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(value)
        if text.contains("e") {
            // String(Double) may choose an exponent (1e-05); gnuplot reads that too.
            return text
        }
        if let dot = text.firstIndex(of: "."), text.distance(from: dot, to: text.endIndex) > 7 {
            text = String(text[...text.index(dot, offsetBy: 6)])
        }
        return text
    }

    /// `text` as a gnuplot double-quoted string (`"` and `\` escaped, on one line).
    static func quoted(_ text: String) -> String {
        var escaped = "\""
        for character in text {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n", "\r": escaped += " "
            default: escaped.append(character)
            }
        }
        return escaped + "\""
    }
}
