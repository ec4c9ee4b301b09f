import Foundation
import TestSupport
import Testing
import Trace

@Suite("Event journal records")
struct TraceEventTests {
    @Test("a journal line is one JSON object that parses back to the same event; a torn line is skipped")
    func roundTrip() {
        let event = TraceEvent(
            side: .watch, instance: "ab", wall: 1_796_086_923_456_000, mono: 12, event: .transferSend,
            cause: "xfer:q/3", run: "run-1", detail: "say \"hi\"\nthen go")
        let line = event.jsonLine()
        #expect(!line.contains("\n"))
        #expect(line.contains("\"event\":\"transfer.send\""))
        #expect(TraceEvent.parse(line) == event)
        let text = line + "\n" + String(line.prefix(20)) + "\n"
        #expect(TraceEvent.parseLines(text) == [event])
    }

    @Test("a journal line is JSONEncoder's, byte for byte: every kind, absent fields, escapes, slashes, emoji")
    func sameAsJSONEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let texts: [String?] = [
            nil, "", "ctx:AB/7", "say \"hi\"\nthen go", #"back\slash"#, "a/b/c", "tab\tcr\rff\u{0C}bs\u{08}",
            "\u{0}\u{1}\u{1F}\u{7F}", "é e\u{301} 💪🏽", "merged via message run=3F2504E0-4F89-11D3-9A0C-0305E82C3301",
        ]
        var count = 0
        for (index, kind) in TraceEventKind.allCases.enumerated() {
            for (offset, text) in texts.enumerated() {
                let event = TraceEvent(
                    side: (index + offset) % 2 == 0 ? .phone : .watch,
                    instance: texts[(index + 3) % texts.count] ?? "i",
                    wall: Int64(index) * 1_796_086_923_456_000 - 5, mono: Int64(offset) - 1, event: kind, cause: text,
                    run: texts[(offset + 1) % texts.count], detail: texts[(offset + index) % texts.count])
                #expect(event.jsonLineBytes() == Array(try encoder.encode(event)), "\(event)")
                count += 1
            }
        }
        #expect(count == TraceEventKind.allCases.count * texts.count)
    }

    @Test("the human form shows time, side, event, cause, run and detail")
    func humanLine() {
        let event = TraceEvent(
            side: .phone, instance: "ab", wall: 1_796_086_923_456_000, mono: 0, event: .ingest, cause: "msg:w/1",
            run: "r1", detail: "merged via message")
        #expect(event.humanLine == "2026-12-01T01:02:03.456Z phone ingest msg:w/1 run=r1 merged via message")
    }

    @Test("send and receive kinds name their exchange; local kinds are not crossings")
    func crossings() {
        #expect(TraceEventKind.transferAckSend.crossing! == ("transfer.ack", true))
        #expect(TraceEventKind.contextReceive.crossing! == ("context", false))
        #expect(TraceEventKind.transferQueued.crossing == nil)
        #expect(TraceEventKind.messageFailed.crossing == nil)
    }
}

@Suite("Journal times and windows")
struct TraceTimeTests {
    @Test("ISO 8601 in UTC with milliseconds, both ways, before and after the epoch")
    func iso() {
        #expect(TraceTime.iso8601(micros: 1_796_086_923_456_000) == "2026-12-01T01:02:03.456Z")
        #expect(TraceTime.iso8601(micros: -1_000_000) == "1969-12-31T23:59:59.000Z")
        #expect(TraceTime.parseISO8601("2026-12-01T01:02:03.456Z") == 1_796_086_923_456_000)
        #expect(TraceTime.parseISO8601("2026-12-01T01:02:03Z") == 1_796_086_923_000_000)
        #expect(TraceTime.parseISO8601("2026-12-01T01:02:03.4567891Z") == 1_796_086_923_456_789)
        for bad in ["2026-13-01T01:02:03Z", "2026-12-01 01:02:03Z", "2026-12-01T01:02:03", "yesterday", "", "5x"] {
            #expect(TraceTime.parseBound(bad, now: 0) == nil, "\(bad)")
        }
    }

    @Test("a bound is an age before now or a UTC time")
    func bounds() {
        let now: Int64 = 10_000_000_000
        #expect(TraceTime.parseBound("90s", now: now) == now - 90_000_000)
        #expect(TraceTime.parseBound("5m", now: now) == now - 300_000_000)
        #expect(TraceTime.parseBound("1h", now: now) == now - 3_600_000_000)
        #expect(TraceTime.parseBound("2026-12-01T01:02:03Z", now: now) == 1_796_086_923_000_000)
        // An age past what 64 bits of microseconds hold means "since ever": it once trapped the daemon.
        #expect(TraceTime.parseBound("9999999999999999d", now: now) == .min)
        #expect(TraceTime.parseBound("9223372036854775807s", now: -1) == .min)
    }

    @Test("the run filter keeps the run's events and every event sharing a causal id with them")
    func runFilter() {
        func event(_ kind: TraceEventKind, _ wall: Int64, cause: String?, run: String? = nil) -> TraceEvent {
            TraceEvent(side: .watch, instance: "w", wall: wall, mono: wall, event: kind, cause: cause, run: run)
        }
        let events = [
            event(.transferQueued, 1, cause: "xfer:q/1", run: "A"),
            event(.transferQueued, 2, cause: "xfer:q/2", run: "B"),
            event(.transferSend, 3, cause: "xfer:q/1"), event(.transferSend, 4, cause: "xfer:q/2"),
            event(.linkUp, 5, cause: nil),
        ]
        #expect(TraceFilter(run: "A").apply(events).map(\.wall) == [1, 3])
        #expect(TraceFilter(since: 2, until: 4).apply(events).map(\.wall) == [2, 3, 4])
        #expect(TraceFilter(since: 2, run: "A").apply(events).isEmpty)
    }
}

@Suite("The merged sequence diagram")
struct TraceDiagramTests {
    @Test("S5's shape: the failed message, the queued fallback, its delivery and acknowledgement, the ingest decision")
    func queuedDelivery() {
        let events = [
            // given out of order: the two journals are merged by time
            event(.phone, .transferReceive, 50, "xfer:q/1"),
            event(.watch, .messageAttempt, 10, "msg:w/1", run: "run-0001-long"),
            event(.watch, .messageFailed, 11, "msg:w/1", run: "run-0001-long", detail: "notReachable"),
            event(.watch, .transferQueued, 12, "xfer:q/1", run: "run-0001-long"),
            event(.watch, .started, 30, detail: "instance w"),
            event(.watch, .linkUp, 40),
            event(.watch, .transferSend, 45, "xfer:q/1"),
            event(.phone, .ingest, 51, "xfer:q/1", run: "run-0001-long", detail: "merged via userInfo"),
            event(.phone, .transferAckSend, 52, "xfer:q/1"),
            event(.watch, .transferAckReceive, 53, "xfer:q/1"),
        ]
        let expected = """
            sequenceDiagram
                participant PUI as Phone UI
                participant SE as SyncEngine
                participant PB as PhoneBridge
                participant WB as WatchBridge
                participant WS as Watch session
                participant WUI as Watch UI
                WB-xPB: sendMessage id 1 run run-0001 failed notReachable
                WB->>WB: transferUserInfo queued seq 1 run run-0001
                Note over WB: watchd started instance w
                Note over PB,WB: link up
                WB->>PB: transferUserInfo seq 1
                PB->>SE: ingestFromWatch run run-0001
                Note over SE: merged via userInfo
                PB-->>WB: userInfoAck seq 1

            """
        #expect(TraceDiagram.render(events) == expected)
        #expect(TraceDiagram.render(events, markdown: true) == "```mermaid\n" + expected + "```\n")
    }

    @Test("a send never received is an open arrow; a receipt whose send is not in view is still drawn")
    func unpaired() {
        let lines = TraceDiagram.render([
            event(.phone, .contextSend, 1, "ctx:p/4", detail: "90 bytes"),
            event(.phone, .contextSend, 2, "ctx:p/5", detail: "91 bytes"),
            event(.watch, .contextReceive, 3, "ctx:p/5"),
            event(.watch, .contextAckSend, 4, "ctx:p/5"),
            event(.watch, .session, 5, run: "r", detail: "ended run=r finishedAndSaved; x #1"),
        ]).split(separator: "\n").dropFirst(7)
        #expect(
            Array(lines) == [
                "    PB-)WB: applicationContext gen 4 90 bytes (no receipt)",
                "    PB->>WB: applicationContext gen 5 91 bytes",
                "    WB-)PB: contextAck gen 5 (no receipt)",
                "    WB->>WS: session ended run=r finishedAndSaved, x №1",
            ])
    }

    @Test("the link's changes are one note each, whichever side saw them; an up after a down is a heal")
    func linkNotes() {
        let lines = TraceDiagram.render([
            event(.phone, .linkUp, 1), event(.watch, .linkUp, 2),
            event(.watch, .linkDown, 3, detail: "peer closed"), event(.phone, .linkDown, 4, detail: "eof"),
            event(.phone, .linkUp, 5), event(.watch, .linkUp, 6),
        ]).split(separator: "\n").dropFirst(7)
        #expect(
            Array(lines) == [
                "    Note over PB,WB: link up", "    Note over PB,WB: link down peer closed",
                "    Note over PB,WB: link up (heal)",
            ])
    }

    @Test("a receipt pairs only with a send of the same exchange from the other side")
    func pairsBySideAndExchange() {
        let lines = TraceDiagram.render([
            event(.watch, .transferSend, 1, "xfer:q/1"),
            event(.phone, .transferAckReceive, 2, "xfer:q/1"),
        ]).split(separator: "\n").dropFirst(7)
        #expect(Array(lines) == ["    WB-)PB: transferUserInfo seq 1 (no receipt)", "    WB-->>PB: userInfoAck seq 1"])
    }
}

@Suite("OpenMetrics exposition")
struct OpenMetricsTests {
    @Test("families render as TYPE, HELP, samples (counters with _total), escaped labels, # EOF last")
    func render() {
        let text = OpenMetrics.render([
            MetricFamily(
                "watchsync_events", .counter, help: "Events by kind.",
                samples: [([("event", "a\"b\\c\nd")], 3), ([("event", "x")], 0)]),
            MetricFamily("watchsync_linked", .gauge, help: "1 when up.\nReally.", value: 1),
            MetricFamily("watchsync_ratio", .gauge, help: "A fraction.", value: 0.25),
            MetricFamily("watchsync_lag", .gauge, help: "Unknown yet.", value: .nan),
        ])
        #expect(
            text == """
                # TYPE watchsync_events counter
                # HELP watchsync_events Events by kind.
                watchsync_events_total{event="a\\"b\\\\c\\nd"} 3
                watchsync_events_total{event="x"} 0
                # TYPE watchsync_linked gauge
                # HELP watchsync_linked 1 when up.\\nReally.
                watchsync_linked 1
                # TYPE watchsync_ratio gauge
                # HELP watchsync_ratio A fraction.
                watchsync_ratio 0.25
                # TYPE watchsync_lag gauge
                # HELP watchsync_lag Unknown yet.
                watchsync_lag NaN
                # EOF

                """)
        #expect(openMetricsViolations(text).isEmpty, "\(openMetricsViolations(text))")
    }

    @Test(
        "the format check finds what breaks the rules",
        arguments: [
            "x_total 1\n# EOF\n",  // sample before TYPE
            "# TYPE x counter\nx 1\n# EOF\n",  // counter sample without _total
            "# TYPE x gauge\nx 1\n",  // no EOF
            "# TYPE x gauge\nx{a=\"b} 1\n# EOF\n",  // unterminated label
            "# TYPE x gauge\nx{a=\"\\q\"} 1\n# EOF\n",  // bad escape
            "# TYPE x gauge\nx one\n# EOF\n",  // bad value
            "# TYPE x gauge\nx inf\n# EOF\n",  // bad special
            "# TYPE x gauge\n# TYPE y gauge\nx 1\n# EOF\n",  // not contiguous
            "# TYPE x gauge\nx 1\nx 2\n# EOF\n",  // repeated label set
            "# TYPE 1x gauge\n1x 1\n# EOF\n",  // bad name
            "# TYPE x counter\nx_total -1\n# EOF\n",  // negative counter
            "# TYPE x gauge\n# EOF\nx 1\n# EOF\n",  // EOF not last
        ])
    func checkFinds(_ text: String) {
        #expect(!openMetricsViolations(text).isEmpty)
    }
}

@Suite("Latency histograms")
struct LatencyHistogramTests {
    @Test("an observation lands in the first bucket whose bound is at or above it; counts are cumulative")
    func placement() {
        var histogram = LatencyHistogram(bounds: [0.001, 0.01, 0.1])
        for seconds in [0.0002, 0.001, 0.0011, 0.05, 0.1, 3] { histogram.record(seconds: seconds) }
        #expect(histogram.cumulativeCounts.map(\.upperBound) == [0.001, 0.01, 0.1])
        #expect(histogram.cumulativeCounts.map(\.count) == [2, 3, 5])
        #expect(histogram.count == 6)
        #expect(abs(histogram.sum - 3.1523) < 1e-12)
    }

    @Test("a negative or NaN duration counts as zero")
    func badDurations() {
        var histogram = LatencyHistogram(bounds: [0.001])
        histogram.record(seconds: -1)
        histogram.record(seconds: .nan)
        #expect(histogram.cumulativeCounts.map(\.count) == [2])
        #expect(histogram.sum == 0)
    }

    @Test("the default bounds run from 0.5 ms to 5 s, ascending")
    func defaults() {
        let bounds = LatencyHistogram().cumulativeCounts.map(\.upperBound)
        #expect(bounds.first == 0.0005 && bounds.last == 5 && bounds.count == 13)
        #expect(bounds == bounds.sorted())
    }

    @Test("a histogram family renders _bucket (le last, +Inf included), _count and _sum per label set")
    func exposition() {
        var fast = LatencyHistogram(bounds: [0.0005, 1])
        fast.record(seconds: 0.00025)
        fast.record(seconds: 0.5)
        var slow = LatencyHistogram(bounds: [0.0005, 1])
        slow.record(seconds: 2)
        let text = OpenMetrics.render([
            MetricFamily(
                "watchsync_fsync_seconds", help: "fsync latency.",
                histograms: [([("file", "a\"b")], fast), ([("file", "c")], slow)]),
            MetricFamily("watchsync_linked", .gauge, help: "1 when up.", value: 1),
        ])
        #expect(
            text == """
                # TYPE watchsync_fsync_seconds histogram
                # HELP watchsync_fsync_seconds fsync latency.
                watchsync_fsync_seconds_bucket{file="a\\"b",le="0.0005"} 1
                watchsync_fsync_seconds_bucket{file="a\\"b",le="1.0"} 2
                watchsync_fsync_seconds_bucket{file="a\\"b",le="+Inf"} 2
                watchsync_fsync_seconds_count{file="a\\"b"} 2
                watchsync_fsync_seconds_sum{file="a\\"b"} 0.50025
                watchsync_fsync_seconds_bucket{file="c",le="0.0005"} 0
                watchsync_fsync_seconds_bucket{file="c",le="1.0"} 0
                watchsync_fsync_seconds_bucket{file="c",le="+Inf"} 1
                watchsync_fsync_seconds_count{file="c"} 1
                watchsync_fsync_seconds_sum{file="c"} 2
                # TYPE watchsync_linked gauge
                # HELP watchsync_linked 1 when up.
                watchsync_linked 1
                # EOF

                """)
        #expect(openMetricsViolations(text).isEmpty, "\(openMetricsViolations(text))")
        let empty = OpenMetrics.render([
            MetricFamily("watchsync_fsync_seconds", help: "fsync latency.", histograms: [([], LatencyHistogram())])
        ])
        #expect(empty.contains("watchsync_fsync_seconds_bucket{le=\"0.0005\"} 0\n"))
        #expect(empty.contains("watchsync_fsync_seconds_bucket{le=\"5.0\"} 0\n"))
        #expect(empty.contains("watchsync_fsync_seconds_count 0\nwatchsync_fsync_seconds_sum 0\n"))
        #expect(openMetricsViolations(empty).isEmpty, "\(openMetricsViolations(empty))")
    }
}

@Suite("The diagram in PlantUML, and the HTML page")
struct TracePlantUMLTests {
    /// A partition in the middle of an exchange: a context and its ack, a link drop, a queued
    /// transfer, a send nobody received, the heal, the transfer delivered and acknowledged.
    static let partitioned = [
        event(.phone, .started, 1, detail: "instance p"),
        event(.phone, .linkUp, 2),
        event(.phone, .push, 3),
        event(.phone, .contextSend, 4, "ctx:p/1", detail: "90 bytes"),
        event(.watch, .contextReceive, 5, "ctx:p/1"),
        event(.watch, .contextAckSend, 6, "ctx:p/1"),
        event(.phone, .contextAckReceive, 7, "ctx:p/1"),
        event(.watch, .linkDown, 8, detail: "heartbeat timeout"),
        event(.phone, .linkDown, 9, detail: "eof"),
        event(.watch, .transferQueued, 10, "xfer:q/1", run: "run-0001-long"),
        event(.phone, .contextSend, 11, "ctx:p/2", detail: "91 bytes"),
        event(.watch, .linkUp, 12),
        event(.watch, .transferSend, 13, "xfer:q/1"),
        event(.phone, .transferReceive, 14, "xfer:q/1"),
        event(.phone, .ingest, 15, "xfer:q/1", run: "run-0001-long", detail: "merged via userInfo"),
        event(.phone, .transferAckSend, 16, "xfer:q/1"),
        event(.watch, .transferAckReceive, 17, "xfer:q/1"),
    ]

    @Test("participants, one arrow per frame, notes for decisions, a group for the time the link was down")
    func partition() {
        let expected = """
            @startuml
            hide footbox
            skinparam shadowing false
            participant "Phone UI" as PUI
            participant "SyncEngine" as SE
            participant "PhoneBridge" as PB
            participant "WatchBridge" as WB
            participant "Watch session" as WS
            participant "Watch UI" as WUI
            note over PB: phoned started instance p
            note over PB, WB: link up
            SE -> PB: pushAll
            PB -> WB: applicationContext gen 1 90 bytes
            WB --> PB: contextAck gen 1
            group link down: heartbeat timeout
            WB -> WB: transferUserInfo queued seq 1 run run-0001
            PB ->> WB: applicationContext gen 2 91 bytes (no receipt)
            end
            note over PB, WB: link up (heal)
            WB -> PB: transferUserInfo seq 1
            PB -> SE: ingestFromWatch run run-0001
            note over SE: merged via userInfo
            PB --> WB: userInfoAck seq 1
            @enduml

            """
        #expect(TracePlantUML.render(Self.partitioned) == expected)
    }

    @Test("each frame that crossed the link is one arrow between the bridges, whatever the receipts")
    func oneArrowPerFrame() {
        let text = TracePlantUML.render(Self.partitioned)
        let bridgeArrows = text.split(separator: "\n").filter {
            ($0.hasPrefix("PB -") && $0.contains(" WB: ")) || ($0.hasPrefix("WB -") && $0.contains(" PB: "))
        }
        // context 1, its ack, context 2 (lost), transfer 1, its ack: the sends of the journal.
        let frames = Self.partitioned.filter { $0.event.crossing?.isSend == true }
        #expect(bridgeArrows.count == frames.count)
        #expect(bridgeArrows.count == 5)
    }

    @Test("a link still down at the end closes its group; creole markup and line breaks in text stay inert")
    func escapes() {
        let text = TracePlantUML.render([
            event(.phone, .linkUp, 1), event(.phone, .linkDown, 2, detail: "a **b** <i>c</i>\nd\\ne"),
        ])
        #expect(text.hasSuffix("group link down: a ~**b~** ~<i>c~</i> d\\\\ne\nend\n@enduml\n"))
    }

    @Test("the page holds the SVG without its XML declaration and every journal line, escaped, oldest first")
    func page() {
        let events = [
            event(.watch, .session, 2, run: "r", detail: "ended <saved> & \"done\""),
            event(.phone, .started, 1, detail: "instance p"),
        ]
        let html = TracePage.html(
            title: "a <run>", svg: "<?xml version=\"1.0\"?><svg><text>x</text></svg>", events: events)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<title>a &lt;run&gt;</title>"))
        #expect(html.contains("<figure>\n<svg><text>x</text></svg>\n</figure>"))
        #expect(!html.contains("<?xml"))
        let started = html.range(of: "phone started instance p")
        let session = html.range(of: "watch session run=r ended &lt;saved&gt; &amp; &quot;done&quot;")
        #expect(started != nil && session != nil)
        if let started, let session { #expect(started.lowerBound < session.lowerBound) }
        #expect(html.contains("Journal lines (2)"))
    }
}

/// A journal event for the diagram tests: both clocks read `wall`, the instance is the side's name.
private func event(
    _ side: TraceEvent.Side, _ kind: TraceEventKind, _ wall: Int64, _ cause: String? = nil, run: String? = nil,
    detail: String? = nil
) -> TraceEvent {
    TraceEvent(
        side: side, instance: side.rawValue, wall: wall, mono: wall, event: kind, cause: cause, run: run, detail: detail
    )
}
