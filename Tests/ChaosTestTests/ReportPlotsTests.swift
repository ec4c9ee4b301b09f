import Plots
import Testing

@testable import chaostest

@Suite("The testers' plots")
struct ReportPlotsTests {
    @Test("kill: acknowledged edits per side on the left axis, kills per daemon on the right, from the samples")
    func killTimeline() throws {
        var report = Report(test: "kill", mode: "quick", seed: 7, workDirectory: "w")
        report.killSeconds = [
            KillInstant(daemon: "phoned", seconds: 1), KillInstant(daemon: "watchd", seconds: 2),
            KillInstant(daemon: "phoned", seconds: 3),
        ]
        report.acknowledged = [
            AcknowledgedEdit(side: "watch", seconds: 0.5), AcknowledgedEdit(side: "phone", seconds: 0.7),
            AcknowledgedEdit(side: "watch", seconds: 2.5),
        ]
        let figure = try #require(report.figures.first)
        #expect(report.figures.count == 1 && figure.name == "kill-timeline")
        #expect(
            figure.series.map(\.title) == [
                "watch edits acknowledged", "phone edits acknowledged", "kills (phoned and watchd in turn)",
            ])
        #expect(figure.series.map(\.onRightAxis) == [false, false, true])
        #expect(figure.series[0].rows == [[0, 0], [0.5, 1], [2.5, 2]])
        #expect(figure.series[2].rows == [[0, 0], [1, 1], [2, 2], [3, 3]])
    }

    @Test("partition: one distribution per measure, over the cycles that have it")
    func partitionDistributions() throws {
        var report = Report(test: "partition", mode: "quick", seed: 7, workDirectory: "w")
        report.cycles = [
            CycleTiming(
                cycle: 1, method: "link-down", side: "phone", partitionSeconds: 2, phoneDetectionSeconds: 1.2,
                watchDetectionSeconds: nil, reconnectSeconds: 0.4, convergenceSeconds: 0.9),
            CycleTiming(
                cycle: 2, method: "link-down", side: "watch", partitionSeconds: 3, phoneDetectionSeconds: 1.0,
                watchDetectionSeconds: 1.1, reconnectSeconds: 0.3, convergenceSeconds: 0.8),
        ]
        let figure = try #require(report.figures.first)
        #expect(figure.name == "partition-distributions")
        #expect(figure.series.map(\.rows.count) == [3, 2, 3, 3])
        #expect(figure.series[1].rows == [[1.1, 0], [1.1, 1]])
        #expect(figure.series[0].rows.last == [1.2, 1])
    }
}
