/// The merged diagram in PlantUML's sequence-diagram notation, for rendering to SVG offline
/// (`plantuml -tsvg`): the same steps as the mermaid form (`TraceDiagram.steps`), one `->` line per
/// frame that crossed the link, notes for decisions, and a `group` for each time the link was down.
package enum TracePlantUML {
    /// The `@startuml … @enduml` text for `events` from both journals (any order).
    package static func render(_ events: [TraceEvent]) -> String {
        var lines = ["@startuml", "hide footbox", "skinparam shadowing false"]
        lines += TraceDiagram.participants.map { "participant \"\($0.name)\" as \($0.id)" }
        var partitioned = false
        for step in TraceDiagram.steps(events) {
            switch step {
            case .arrow(let from, let to, let style, let label):
                let arrow =
                    switch style {
                    case .call: "->"
                    case .answer: "-->"
                    case .unanswered: "->>"
                    case .failed: "->x"
                    }
                lines.append("\(from) \(arrow) \(to): \(escape(label))")
            case .note(let over, let text):
                lines.append("note over \(over.joined(separator: ", ")): \(text.isEmpty ? " " : escape(text))")
            case .linkDown(let detail):
                if partitioned { lines.append("end") }
                lines.append("group link down" + (detail.map { ": " + escape($0) } ?? ""))
                partitioned = true
            case .linkUp(let heal):
                if partitioned { lines.append("end") }
                partitioned = false
                lines.append("note over PB, WB: link up" + (heal ? " (heal)" : ""))
            }
        }
        if partitioned { lines.append("end") }
        lines.append("@enduml")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` drawn as it is: on one line, with PlantUML's creole markup made inert (`~` before a
    /// doubled `*`, `/`, `"`, `-`, `_`, `^`, `=` or `~`, and before every `<` and `[`), and `\` doubled
    /// (a lone one followed by `n` would break the line).
    static func escape(_ text: String) -> String {
        let characters = Array(text)
        var escaped = ""
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            switch character {
            case "\n", "\r", "\t": escaped.append(" ")
            case "\\": escaped += "\\\\"
            case "<", "[": escaped += "~" + String(character)
            default:
                // (a `where` on a list of patterns would guard only the last one)
                if next == character, "*/\"-_^=~".contains(character) { escaped += "~" }
                escaped.append(character)
            }
        }
        return escaped
    }
}
