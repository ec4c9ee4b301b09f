/// One metric family for the OpenMetrics text exposition (`phonectl metrics`, `watchctl metrics`).
package struct MetricFamily: Equatable, Sendable {
    package enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The family's name, without `_total` (a counter's samples get it) or a histogram's suffixes.
    package var name: String
    package var kind: Kind
    package var help: String
    /// One value per label set (label name, value), in the order given; empty for a histogram.
    package var samples: [(labels: [(String, String)], value: Double)]
    /// A histogram family's distributions, one per label set; empty for the other kinds.
    package var histograms: [(labels: [(String, String)], histogram: LatencyHistogram)] = []

    package init(_ name: String, _ kind: Kind, help: String, samples: [(labels: [(String, String)], value: Double)]) {
        self.name = name
        self.kind = kind
        self.help = help
        self.samples = samples
    }

    /// A histogram family: per label set, its `_bucket`s (cumulative, `le` last among the labels,
    /// `+Inf` included), `_count` and `_sum`. Name it after its unit (`…_seconds`).
    package init(
        _ name: String, help: String, histograms: [(labels: [(String, String)], histogram: LatencyHistogram)]
    ) {
        self.init(name, .histogram, help: help, samples: [])
        self.histograms = histograms
    }

    /// Every sample line in exposition order: its full name (with `_total`, `_bucket`, `_count` or
    /// `_sum`), labels and value. The text form and `metrics --json` both list these.
    package var expositionSamples: [(name: String, labels: [(String, String)], value: Double)] {
        switch kind {
        case .counter: return samples.map { (name + "_total", $0.labels, $0.value) }
        case .gauge: return samples.map { (name, $0.labels, $0.value) }
        case .histogram:
            var lines: [(name: String, labels: [(String, String)], value: Double)] = []
            for (labels, histogram) in histograms {
                for bucket in histogram.cumulativeCounts {
                    lines.append((name + "_bucket", labels + [("le", "\(bucket.upperBound)")], Double(bucket.count)))
                }
                lines.append((name + "_bucket", labels + [("le", "+Inf")], Double(histogram.count)))
                lines.append((name + "_count", labels, Double(histogram.count)))
                lines.append((name + "_sum", labels, histogram.sum))
            }
            return lines
        }
    }

    /// A family with one unlabelled sample.
    package init(_ name: String, _ kind: Kind, help: String, value: Double) {
        self.init(name, kind, help: help, samples: [([], value)])
    }

    /// A family with one sample per key of `values` (sorted), labelled `label`.
    package init(_ name: String, _ kind: Kind, help: String, label: String, values: [String: Int]) {
        self.init(
            name, kind, help: help,
            samples: values.keys.sorted().map { ([(label, $0)], Double(values[$0]!)) })
    }

    package static func == (lhs: MetricFamily, rhs: MetricFamily) -> Bool {
        OpenMetrics.render([lhs]) == OpenMetrics.render([rhs])
    }
}

/// The OpenMetrics 1.0 text format: per family `# TYPE`, `# HELP`, then its samples; `# EOF` last.
package enum OpenMetrics {
    package static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    package static func render(_ families: [MetricFamily]) -> String {
        var lines: [String] = []
        for family in families {
            lines.append("# TYPE \(family.name) \(family.kind.rawValue)")
            lines.append("# HELP \(family.name) \(escape(family.help, quotes: false))")
            for sample in family.expositionSamples {
                let labels =
                    sample.labels.isEmpty
                    ? ""
                    : "{" + sample.labels.map { "\($0.0)=\"\(escape($0.1, quotes: true))\"" }.joined(separator: ",")
                        + "}"
                lines.append("\(sample.name)\(labels) \(number(sample.value))")
            }
        }
        return (lines + ["# EOF"]).joined(separator: "\n") + "\n"
    }

    /// Integers without a fraction; the rest as Swift prints them (shortest round-trip); the specials.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Backslash, newline and (in label values) the double quote escaped, as the format requires.
    static func escape(_ text: String, quotes: Bool) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\"" where quotes: result += "\\\""
            default: result.append(character)
            }
        }
        return result
    }
}
