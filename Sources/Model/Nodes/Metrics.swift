import Trace

/// What both daemons' statuses have and both report as metrics.
protocol CommonMetricsSource {
    var linked: Bool { get }
    var reachable: Bool { get }
    var outboxDepth: Int { get }
    var uptimeSeconds: Int { get }
    var liveFramesSent: [String: Int] { get }
    var liveFramesReceived: Int { get }
}

extension PhoneStatus: CommonMetricsSource {}
extension WatchStatus: CommonMetricsSource {}

extension CommonMetricsSource {
    /// `phonectl metrics` / `watchctl metrics`: the families both daemons report, then `own`, as
    /// OpenMetrics text (docs/TRACE.md lists them). Counters count since the daemon started.
    ///
    /// Both: the link's events by kind (frames by kind and direction, transfers queued, acknowledged
    /// and cancelled, pushes, reachability changes), link state, outbox depth, uptime, live frames,
    /// the process's fsync latencies, and the state directory's restart count (all from the shell's
    /// facts).
    func metricsOutcome(_ facts: ShellFacts, own: [MetricFamily]) -> AdminOutcome {
        let events = facts.journalCounts
        let families =
            [
                MetricFamily(
                    "watchsync_events", .counter, help: "Journal events by kind (docs/TRACE.md), since start.",
                    samples: TraceEventKind.allCases.map { ([("event", $0.rawValue)], Double(events[$0] ?? 0)) }),
                MetricFamily(
                    "watchsync_linked", .gauge, help: "1 when the link to the peer is up.", value: linked ? 1 : 0),
                MetricFamily(
                    "watchsync_reachable", .gauge, help: "1 when the peer is reachable for messages.",
                    value: reachable ? 1 : 0),
                MetricFamily(
                    "watchsync_outbox_depth", .gauge, help: "Transfers queued and not yet acknowledged.",
                    value: Double(outboxDepth)),
                MetricFamily(
                    "watchsync_uptime_seconds", .gauge, help: "Seconds since the daemon started.",
                    value: Double(uptimeSeconds)),
                MetricFamily(
                    "watchsync_live_frames_sent", .counter, help: "Live-mirror frames sent, by kind.", label: "kind",
                    values: liveFramesSent),
                MetricFamily(
                    "watchsync_live_frames_received", .counter, help: "Live-mirror frames received.",
                    value: Double(liveFramesReceived)),
                MetricFamily(
                    "watchsync_fsync_seconds", help: "fsync and fdatasync latency of the durable files, since start.",
                    histograms: [([], facts.fsyncLatency)]),
                MetricFamily(
                    "watchsync_starts", .counter, help: "Times a daemon has started with this state directory.",
                    value: Double(facts.starts)),
            ] + own
        // `--json`: the same samples, one object each, named as in the text form.
        let samples = families.flatMap { family in
            family.expositionSamples.map { sample in
                MetricSample(
                    name: sample.name, type: family.kind.rawValue,
                    labels: Dictionary(sample.labels, uniquingKeysWith: { $1 }), value: sample.value)
            }
        }
        return .output(text: OpenMetrics.render(families), json: AdminOutcome.json(samples))
    }
}

/// One sample of `metrics --json`.
struct MetricSample: Encodable {
    var name: String
    var type: String
    var labels: [String: String]
    var value: Double
}

extension PhoneStatus {
    /// phoned's families: the common ones, intake outcomes, launches, push acknowledgement and run counts.
    package func metrics(_ facts: ShellFacts) -> AdminOutcome {
        metricsOutcome(
            facts,
            own: [
                MetricFamily(
                    "watchsync_ingest", .counter, help: "Watch updates by intake outcome.", label: "outcome",
                    values: ingest),
                MetricFamily(
                    "watchsync_launches", .counter, help: "Watch-app launches sent or dropped.",
                    samples: [
                        ([("result", "sent")], Double(launchesSent)),
                        ([("result", "dropped")], Double(launchesDropped)),
                    ]),
                MetricFamily(
                    "watchsync_context_generations_unacknowledged", .gauge,
                    help: "Context generations sent that the watch has not acknowledged.",
                    value: Double(contextGenerationSent - min(contextGenerationAcknowledged, contextGenerationSent))),
                MetricFamily(
                    "watchsync_push_failing", .gauge, help: "1 while the last push could not be handed to the link.",
                    value: pushError == nil ? 0 : 1),
                MetricFamily(
                    "watchsync_runs", .gauge, help: "Runs by where they stand: active, recent (in the push), history.",
                    samples: [
                        ([("set", "active")], Double(activeRuns)), ([("set", "recent")], Double(recentRuns)),
                        ([("set", "history")], Double(runsInHistory)),
                    ]),
                MetricFamily(
                    "watchsync_skipped_files", .gauge, help: "Unreadable documents skipped.",
                    value: Double(skippedFiles.count)),
            ])
    }
}

extension WatchStatus {
    /// watchd's families: the common ones, contexts applied or skipped, launches, cache and edits,
    /// and the round trip of its edit messages (sent → answered).
    package func metrics(_ facts: ShellFacts, roundTrip: LatencyHistogram) -> AdminOutcome {
        metricsOutcome(
            facts,
            own: [
                MetricFamily(
                    "watchsync_contexts", .counter, help: "Pushed contexts applied or skipped.",
                    samples: [
                        ([("result", "applied")], Double(appliedContexts)),
                        ([("result", "skipped")], Double(skippedContexts)),
                    ]),
                MetricFamily(
                    "watchsync_launches_received", .counter, help: "Launch requests received.",
                    value: Double(launchesReceived)),
                MetricFamily(
                    "watchsync_cache_runs", .gauge, help: "Runs in the watch's cache, and of them active.",
                    samples: [([("set", "all")], Double(workouts)), ([("set", "active")], Double(activeRuns))]),
                MetricFamily(
                    "watchsync_undelivered_edits", .gauge, help: "Local edits the phone has not confirmed.",
                    value: Double(undeliveredEdits)),
                MetricFamily(
                    "watchsync_session_running", .gauge, help: "1 while a workout session runs.",
                    value: session == "running" ? 1 : 0),
                MetricFamily(
                    "watchsync_edit_round_trip_seconds",
                    help: "From an edit's message sent to the phone's answer (delivered or failed), since start.",
                    histograms: [([], roundTrip)]),
            ])
    }
}
