import Plots

extension Report {
    /// What `--plot DIR` draws: for the kill test, edits acknowledged and kills over time; for the
    /// partition test, the distributions of detection, reconnect and convergence over its cycles; for
    /// the endurance test, each daemon's memory, descriptors and threads, and each directory's bytes,
    /// over the run.
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
        case "endurance":
            return endurance.map { Self.enduranceFigures($0.series, caption: caption) } ?? []
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

    /// The endurance run's samples as three time courses (hours on x): resident memory per daemon,
    /// descriptors and threads per daemon, and the bytes under each state and document directory. A
    /// daemon that was down at a sample has no point there.
    static func enduranceFigures(_ samples: [ResourceSample], caption: String) -> [PlotFigure] {
        let mebibyte = Double(1 << 20)
        func line(_ title: String, _ value: (ResourceSample) -> Double?) -> PlotSeries {
            PlotSeries(
                title: title, style: .lines,
                rows: samples.compactMap { sample in value(sample).map { [sample.seconds / 3600, $0] } })
        }
        let daemons = EnduranceVerdicts.daemons
        let directories = EnduranceVerdicts.stateDirectories + EnduranceVerdicts.documentDirectories
        return [
            PlotFigure(
                name: "endurance-memory", title: "Resident memory over the run (\(caption))",
                xLabel: "hours since the workload started", yLabel: "resident memory (MiB)",
                series: daemons.map { daemon in
                    line("\(daemon) RSS") { $0.daemons[daemon].map { Double($0.rssBytes) / mebibyte } }
                }),
            PlotFigure(
                name: "endurance-descriptors", title: "Open descriptors and threads over the run (\(caption))",
                xLabel: "hours since the workload started", yLabel: "count",
                series: daemons.flatMap { daemon in
                    [
                        line("\(daemon) descriptors") { $0.daemons[daemon].map { Double($0.fileDescriptors) } },
                        line("\(daemon) threads") { $0.daemons[daemon].map { Double($0.threads) } },
                    ]
                }),
            PlotFigure(
                name: "endurance-disk", title: "Bytes under each directory over the run (\(caption))",
                xLabel: "hours since the workload started", yLabel: "MiB",
                series: directories.map { directory in
                    line(directory) { $0.directories[directory].map { Double($0.bytes) / mebibyte } }
                }),
        ]
    }
}
