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

    @Test("endurance: memory, descriptors and threads per daemon, and each directory's bytes, against hours")
    func enduranceCourses() throws {
        var report = Report(test: "endurance", mode: "quick", seed: 7, workDirectory: "w")
        var figures = EnduranceFigures(hours: 0.1, sampleIntervalSeconds: 60)
        let phoned = ProcessSample(pid: 10, rssBytes: 30 << 20, fileDescriptors: 12, threads: 5)
        let watchd = ProcessSample(pid: 11, rssBytes: 20 << 20, fileDescriptors: 9, threads: 4)
        figures.series = [
            ResourceSample(
                seconds: 0, daemons: ["phoned": phoned, "watchd": watchd],
                directories: ["phone-state": DirectorySample(bytes: 1 << 20, documents: 0)]),
            // watchd killed and not yet back: no point for it at this sample.
            ResourceSample(
                seconds: 1_800, daemons: ["phoned": phoned],
                directories: ["phone-state": DirectorySample(bytes: 2 << 20, documents: 0)]),
        ]
        report.endurance = figures
        #expect(report.figures.map(\.name) == ["endurance-memory", "endurance-descriptors", "endurance-disk"])
        let memory = report.figures[0]
        #expect(memory.series.map(\.title) == ["phoned RSS", "watchd RSS"])
        #expect(memory.series[0].rows == [[0, 30], [0.5, 30]])
        #expect(memory.series[1].rows == [[0, 20]])
        #expect(report.figures[1].series.map(\.title).count == 4)
        let disk = report.figures[2]
        #expect(disk.series.first { $0.title == "phone-state" }?.rows == [[0, 1], [0.5, 2]])
        #expect(disk.drawnSeries.map(\.title) == ["phone-state"], "directories never sampled are not drawn")
        // The samples stay out of the report's JSON: they are in the samples file.
        #expect(!report.json.contains("\"series\""))
    }
}
