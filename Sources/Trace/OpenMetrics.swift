/// One metric family for the OpenMetrics text exposition (`phonectl metrics`, `watchctl metrics`).
package struct MetricFamily: Equatable, Sendable {
    package enum Kind: String, Sendable {
        case counter, gauge
    }

    /// The family's name, without `_total` (a counter's samples get it).
    package var name: String
    package var kind: Kind
    package var help: String
    /// One value per label set (label name, value), in the order given.
    package var samples: [(labels: [(String, String)], value: Double)]

    package init(_ name: String, _ kind: Kind, help: String, samples: [(labels: [(String, String)], value: Double)]) {
        self.name = name
        self.kind = kind
        self.help = help
        self.samples = samples
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
            let sampleName = family.kind == .counter ? family.name + "_total" : family.name
            for sample in family.samples {
                let labels =
                    sample.labels.isEmpty
                    ? ""
                    : "{" + sample.labels.map { "\($0.0)=\"\(escape($0.1, quotes: true))\"" }.joined(separator: ",")
                        + "}"
                lines.append("\(sampleName)\(labels) \(number(sample.value))")
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
