import Plots

extension Report {
    /// What `--plot DIR` draws: for the kill test, edits acknowledged and kills over time; for the
    /// partition test, the distributions of detection, reconnect and convergence over its cycles.
    var figures: [PlotFigure] {
        let caption = "\(test) test, \(mode), seed \(seed)"
        switch test {
        case "kill":
            let edits = ["watch", "phone"].map { side in
                PlotSeries.count(
                    "\(side) edits acknowledged", at: acknowledged.filter { $0.side == side }.map(\.seconds))
            }
            // One staircase for both daemons: they are killed in turn, so two would lie on each other.
            let kills = [
                PlotSeries.count("kills (phoned and watchd in turn)", at: killSeconds.map(\.seconds), onRightAxis: true)
            ]
            return [
                PlotFigure(
                    name: "kill-timeline", title: "Edits acknowledged and kills over time (\(caption))",
                    xLabel: "seconds since the workload started", yLabel: "edits acknowledged",
                    rightLabel: "kills", series: edits + kills)
            ]
        default:
            let distributions: [(String, KeyPath<CycleTiming, Double?>)] = [
                ("detection (phone)", \.phoneDetectionSeconds), ("detection (watch)", \.watchDetectionSeconds),
                ("reconnect", \.reconnectSeconds), ("convergence", \.convergenceSeconds),
            ]
            return [
                PlotFigure(
                    name: "partition-distributions",
                    title: "Detection, reconnect and convergence over \(cycles.count) cycles (\(caption))",
                    xLabel: "seconds (detection from the cut, reconnect and convergence from the heal)",
                    yLabel: "share of cycles at or below",
                    series: distributions.map { name, figure in
                        PlotSeries.distribution(name, of: cycles.compactMap { $0[keyPath: figure] })
                    })
            ]
        }
    }
}
