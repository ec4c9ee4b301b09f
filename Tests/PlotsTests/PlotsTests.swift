import Plots
import Testing

@Suite("Charts as gnuplot data and scripts")
struct PlotsTests {
    @Test("a count series is a staircase from zero rising by one at each instant, in order")
    func countSeries() {
        let series = PlotSeries.count("kills", at: [2.5, 1, 4], onRightAxis: true)
        #expect(series.rows == [[0, 0], [1, 1], [2.5, 2], [4, 3]])
        #expect(series.style == .steps && series.onRightAxis)
        #expect(PlotSeries.count("none", at: []).rows.isEmpty)
    }

    @Test("a long count keeps evenly spaced steps, the first and the last, with their true counts")
    func thinnedCount() {
        let series = PlotSeries.count("edits", at: (1...1000).map(Double.init), maximumRows: 4)
        #expect(series.rows == [[0, 0], [1, 1], [334, 334], [667, 667], [1000, 1000]])
    }

    @Test("a distribution is the share of values at or below each value, from 0 to 1")
    func distributionSeries() {
        let series = PlotSeries.distribution("reconnect", of: [0.4, 0.1, .nan, 0.2, 0.3])
        #expect(series.rows == [[0.1, 0], [0.1, 0.25], [0.2, 0.5], [0.3, 0.75], [0.4, 1]])
        #expect(PlotSeries.distribution("none", of: []).rows.isEmpty)
    }

    @Test("the data file holds one commented block per series with rows, two blank lines apart")
    func dataBlocks() {
        let figure = PlotFigure(
            name: "f", title: "t", xLabel: "x", yLabel: "y",
            series: [
                PlotSeries(title: "a", style: .steps, rows: [[0, 1], [1.5, 2]]),
                PlotSeries(title: "empty", style: .points, rows: []),
                PlotSeries(title: "b", style: .points, rows: [[0.1234567891, 3]]),
            ])
        #expect(figure.data == "# a\n# x,y\n0,1\n1.5,2\n\n\n# b\n# x,y\n0.123456,3\n")
    }

    @Test("the script plots each drawn series by its block index, right-axis series on y2, and quotes text")
    func script() {
        let figure = PlotFigure(
            name: "kill", title: "Kill \"test\"", xLabel: "seconds", yLabel: "edits", rightLabel: "kills",
            series: [
                PlotSeries(title: "none yet", style: .steps, rows: []),
                PlotSeries.count("edits acknowledged", at: [1, 2]),
                PlotSeries.count("kills", at: [1.5], onRightAxis: true),
            ])
        let script = figure.gnuplotScript(dataFile: "kill.csv", output: "kill.svg")
        let lines = script.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("set terminal svg size 900,450") == true)
        #expect(lines.contains("set output \"kill.svg\""))
        #expect(lines.contains("set title \"Kill \\\"test\\\"\""))
        #expect(lines.contains("set y2label \"kills\""))
        #expect(
            script.hasSuffix(
                "plot \"kill.csv\" index 0 using 1:2 with steps linewidth 2 title \"edits acknowledged\", \\\n"
                    + "     \"kill.csv\" index 1 using 1:2 with steps linewidth 2 axes x1y2 title \"kills\"\n"))
    }

    @Test("a category chart lists its rows top to bottom as y tics and draws min–max bars through the medians")
    func categories() {
        let figure = PlotFigure(
            name: "bench-2", title: "2. round trip", xLabel: "ms", yLabel: "",
            series: [PlotSeries(title: "median, min–max", style: .ranges, rows: [[0, 8, 7, 9], [1, 0.1, 0.1, 0.2]])],
            categories: ["round trip p50", "loopback RTT"])
        let script = figure.gnuplotScript(dataFile: "bench-2.csv", output: "bench-2.svg")
        #expect(script.contains("set ytics (\"round trip p50\" 0, \"loopback RTT\" 1)\n"))
        #expect(script.contains("set yrange [1.5:-0.5]\n"))
        #expect(script.contains("unset key\n"))
        #expect(script.contains("index 0 using 2:1:3:4 with xerrorbars"))
        #expect(figure.data == "# median, min–max\n# category,median,min,max\n0,8,7,9\n1,0.1,0.1,0.2\n")
    }
}
