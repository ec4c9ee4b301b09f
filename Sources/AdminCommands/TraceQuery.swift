import ArgumentParsing
import Trace
import WorkoutModel

/// `phonectl trace` / `watchctl trace`: which of the daemon's journal events to print (docs/TRACE.md).
/// Bounds are kept as typed (an age is relative to the daemon's clock when it answers) but checked here.
package struct TraceQuery: Codable, Sendable, Equatable {
    package var since: String?
    package var until: String?
    package var run: DocumentID?
    /// Print raw journal lines rather than the human form (only that form is built).
    package var json: Bool

    /// `metrics` on both CLIs.
    static let metricsSpec = CommandSpec(
        name: "metrics",
        abstract: "Counters and gauges in the OpenMetrics text format (for node_exporter's textfile collector).")

    /// The verb on both CLIs.
    static let spec = CommandSpec(
        name: "trace", abstract: "The event journal: what this daemon sent, received and decided, oldest first.",
        discussion:
            "--json prints the raw journal lines (one JSON object per line). scripts/trace merges both daemons' journals into one sequence diagram.",
        options: options, flags: [FlagSpec.json])

    /// `--since`, `--until`, `--run`: shared with tracediagram (scripts/trace).
    package static let options = [
        OptionSpec(
            "since",
            help: "Only events at or after this: an age (90s, 5m, 2h, 1d) or a UTC time (2026-12-01T01:02:03Z).",
            valueName: "when"),
        OptionSpec("until", help: "Only events at or before this (the same forms).", valueName: "when"),
        OptionSpec("run", help: "Only this run's events and the exchanges that carried them.", valueName: "id"),
    ]

    package init(since: String? = nil, until: String? = nil, run: DocumentID? = nil, json: Bool = false) {
        self.since = since
        self.until = until
        self.run = run
        self.json = json
    }

    package init(_ command: ParsedCommand) throws(UsageError) {
        for name in ["since", "until"] {
            if let text = command.optionalString(name), TraceTime.parseBound(text, now: 0) == nil {
                throw UsageError(
                    "--\(name) must be an age (90s, 5m, 2h, 1d) or a UTC time (2026-12-01T01:02:03Z), got \(text)")
            }
        }
        self.init(
            since: command.optionalString("since"), until: command.optionalString("until"),
            run: try command.optionalDocumentID("run"), json: command.flag("json"))
    }

    /// The filter this query means at `now` (microseconds since the Unix epoch).
    package func filter(now: Int64) -> TraceFilter {
        TraceFilter(
            since: since.flatMap { TraceTime.parseBound($0, now: now) },
            until: until.flatMap { TraceTime.parseBound($0, now: now) }, run: run?.description)
    }
}
