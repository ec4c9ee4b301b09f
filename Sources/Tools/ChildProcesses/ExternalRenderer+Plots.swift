import Foundation
import Plots

extension ExternalRenderer {
    /// Writes each figure as `<name>.csv` and `<name>.gp` into `directory` (created if missing) and
    /// runs gnuplot there to draw `<name>.svg`; returns the SVGs' paths. A figure with no samples is
    /// left out (gnuplot refuses an empty plot), its name in `skipped`. The script names its files
    /// relative to `directory`, so `gnuplot <name>.gp` there draws it again.
    package func plot(_ figures: [PlotFigure], into directory: String) async throws(RendererError) -> (
        drawn: [String], skipped: [String]
    ) {
        _ = try locate()  // say what to install before writing anything
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .failed(program: program, outcome: "cannot create \(directory)", output: "\(error)")
        }
        var drawn: [String] = []
        var skipped: [String] = []
        for figure in figures {
            guard !figure.drawnSeries.isEmpty else {
                skipped.append(figure.name)
                continue
            }
            let script = figure.gnuplotScript(dataFile: "\(figure.name).csv", output: "\(figure.name).svg")
            do {
                try figure.data.write(toFile: "\(directory)/\(figure.name).csv", atomically: true, encoding: .utf8)
                try script.write(toFile: "\(directory)/\(figure.name).gp", atomically: true, encoding: .utf8)
            } catch {
                throw .failed(
                    program: program, outcome: "cannot write \(figure.name) into \(directory)", output: "\(error)")
            }
            _ = try await run(
                ["\(figure.name).gp"], workingDirectory: directory, scratch: "\(directory)/.\(figure.name).gnuplot")
            drawn.append("\(directory)/\(figure.name).svg")
        }
        return (drawn, skipped)
    }
}
