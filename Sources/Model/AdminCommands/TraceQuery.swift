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
    /// `--follow`: the CLI keeps asking for newer events (the daemon answers each round alone).
    package var follow: Bool
    /// Only events after this wall time (microseconds), exclusive: set by the CLI between rounds.
    package var after: Int64?

    /// `metrics` on both CLIs.
    static let metricsSpec = CommandSpec(
        name: "metrics",
        abstract: "Counters and gauges in the OpenMetrics text format (for node_exporter's textfile collector).")

    /// The verb on both CLIs.
    static let spec = CommandSpec(
        name: "trace", abstract: "The event journal: what this daemon sent, received and decided, oldest first.",
        discussion:
            "--json prints the raw journal lines (one JSON object per line). scripts/trace merges both daemons' journals into one sequence diagram.",
        options: options,
        flags: [
            FlagSpec.json,
            FlagSpec("follow", help: "Keep printing new events as they are journalled (until interrupted)."),
        ])

    /// `--since`, `--until`, `--run`: shared with tracediagram (scripts/trace).
    package static let options = [
        OptionSpec(
            "since",
            help: "Only events at or after this: an age (90s, 5m, 2h, 1d) or a UTC time (2026-12-01T01:02:03Z).",
            valueName: "when"),
        OptionSpec("until", help: "Only events at or before this (the same forms).", valueName: "when"),
        OptionSpec("run", help: "Only this run's events and the exchanges that carried them.", valueName: "id"),
    ]

    package init(
        since: String? = nil, until: String? = nil, run: DocumentID? = nil, json: Bool = false, follow: Bool = false,
        after: Int64? = nil
    ) {
        self.since = since
        self.until = until
        self.run = run
        self.json = json
        self.follow = follow
        self.after = after
    }

    package init(_ command: ParsedCommand) throws(UsageError) {
        self.init(
            since: command.optionalString("since"), until: command.optionalString("until"),
            run: try command.optionalDocumentID("run"), json: command.flag("json"), follow: command.flag("follow"))
        try validate()
    }

    package func validate() throws(UsageError) {
        try Self.checkBound("since", since)
        try Self.checkBound("until", until)
    }

    /// A `--since`/`--until` value must be an age or a UTC time.
    static func checkBound(_ name: String, _ text: String?) throws(UsageError) {
        if let text, TraceTime.parseBound(text, now: 0) == nil {
            throw UsageError(
                "--\(name) must be an age (90s, 5m, 2h, 1d) or a UTC time (2026-12-01T01:02:03Z), got \(text)")
        }
    }

    /// The filter this query means at `now` (microseconds since the Unix epoch).
    package func filter(now: Int64) -> TraceFilter {
        let since = since.flatMap { TraceTime.parseBound($0, now: now) }
        return TraceFilter(
            since: after.map { max($0 == .max ? .max : $0 + 1, since ?? .min) } ?? since,
            until: until.flatMap { TraceTime.parseBound($0, now: now) }, run: run?.description)
    }
}
