/// The OpenMetrics 1.0 text rules `metrics` output must follow, checked line by line (promtool is not
/// installable from the distribution's packages here): what is wrong, or nothing.
///
/// Checked: every line is `# TYPE`, `# HELP`, `# UNIT`, a sample or the final `# EOF`; names match
/// `[a-zA-Z_:][a-zA-Z0-9_:]*` and label names `[a-zA-Z_][a-zA-Z0-9_]*`; a family's TYPE (one of the
/// known types) comes first and once, its samples follow it contiguously, a counter's samples end in
/// `_total` (or `_created`); label values are quoted with only `\\`, `\"` and `\n` escapes; a value is a
/// number, `NaN`, `+Inf` or `-Inf`; a counter's value is not negative; no label set repeats in a family.
package func openMetricsViolations(_ text: String) -> [String] {
    var problems: [String] = []
    guard text.hasSuffix("# EOF\n") || text.hasSuffix("# EOF") else { return ["does not end with # EOF"] }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0)
    var types: [String: String] = [:]
    var current: String?
    var closed: Set<String> = []
    var seen: Set<String> = []
    func isName(_ name: Substring, colons: Bool) -> Bool {
        guard let first = name.first, first.isLetter && first.isASCII || first == "_" || colons && first == ":"
        else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || colons && $0 == ":") }
    }
    for (number, line) in lines.enumerated() {
        let at = "line \(number + 1)"
        if line == "# EOF" {
            if number != lines.count - 1 { problems.append("\(at): # EOF before the end") }
            continue
        }
        if line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count >= 3, parts[0] == "#", ["TYPE", "HELP", "UNIT"].contains(parts[1]),
                isName(parts[2], colons: true)
            else {
                problems.append("\(at): not a TYPE, HELP or UNIT line: \(line)")
                continue
            }
            let name = String(parts[2])
            if parts[1] == "TYPE" {
                let known = [
                    "counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown",
                ]
                guard parts.count == 4, known.contains(String(parts[3])) else {
                    problems.append("\(at): unknown type: \(line)")
                    continue
                }
                if types[name] != nil { problems.append("\(at): \(name) declared twice") }
                types[name] = String(parts[3])
                if let current, current != name { closed.insert(current) }
                current = name
            } else if current != name {
                problems.append("\(at): \(parts[1]) for \(name) outside its family")
            }
            continue
        }
        // A sample: name, optional {labels}, space, value.
        guard let space = line.lastIndex(of: " ") else {
            problems.append("\(at): not a sample: \(line)")
            continue
        }
        let head = line[..<space]
        let value = line[line.index(after: space)...]
        let name = head.prefix { $0 != "{" }
        guard isName(name, colons: true) else {
            problems.append("\(at): bad metric name: \(name)")
            continue
        }
        guard let family = current, let type = types[family] else {
            problems.append("\(at): sample before any TYPE: \(line)")
            continue
        }
        if closed.contains(family) { problems.append("\(at): \(family) is not contiguous") }
        let suffixes =
            type == "counter"
            ? ["_total", "_created"]
            : type == "gauge"
                ? [""] : ["", "_bucket", "_count", "_sum", "_created", "_total", "_gcount", "_gsum", "_info"]
        if !suffixes.contains(where: { name == family + $0 }) {
            problems.append("\(at): \(name) is not a sample name of \(type) \(family)")
        }
        var labels = head.dropFirst(name.count)
        if !labels.isEmpty {
            guard labels.first == "{", labels.last == "}" else {
                problems.append("\(at): bad label set: \(labels)")
                continue
            }
            labels = labels.dropFirst().dropLast()
            var rest = Substring(labels)
            while !rest.isEmpty {
                let labelName = rest.prefix { $0 != "=" }
                guard isName(labelName, colons: false), rest.dropFirst(labelName.count).hasPrefix("=\"") else {
                    problems.append("\(at): bad label in \(labels)")
                    break
                }
                rest = rest.dropFirst(labelName.count + 2)
                var closedQuote = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first, ["\\", "\"", "n"].contains(escaped) else {
                            problems.append("\(at): bad escape in \(labels)")
                            break
                        }
                        rest = rest.dropFirst()
                    } else if character == "\"" {
                        closedQuote = true
                        break
                    } else if character == "\n" {
                        break
                    }
                }
                guard closedQuote else {
                    problems.append("\(at): unterminated label value in \(labels)")
                    break
                }
                if rest.hasPrefix(",") {
                    rest = rest.dropFirst()
                } else if !rest.isEmpty {
                    problems.append("\(at): expected , between labels in \(labels)")
                    break
                }
            }
        }
        if !seen.insert(String(head)).inserted { problems.append("\(at): \(head) repeated") }
        if value.allSatisfy({ "0123456789.eE+-".contains($0) }), let number = Double(value) {
            if type == "counter", number < 0 { problems.append("\(at): negative counter") }
        } else if !["NaN", "+Inf", "-Inf"].contains(value) {
            problems.append("\(at): bad value \(value)")
        }
    }
    return problems
}
