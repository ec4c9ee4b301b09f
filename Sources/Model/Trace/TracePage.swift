/// One self-contained HTML page for a trace: the rendered diagram (an inline SVG) and, under it,
/// the journal lines it was drawn from, oldest first, in their human form (`TraceEvent.humanLine`).
package enum TracePage {
    /// The page: `title` as its heading, `svg` (a whole SVG document; its XML declaration is dropped,
    /// as HTML has none inside the body) and the `events` (both journals, any order) under it.
    package static func html(title: String, svg: String, events: [TraceEvent]) -> String {
        let picture = svg.hasPrefix("<?xml") ? String(svg.drop { $0 != ">" }.dropFirst()) : svg
        let lines = TraceDiagram.merged(events).map { escape($0.humanLine) }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(escape(title))</title>
            <style>
            body { font-family: sans-serif; margin: 1em 2em; }
            pre { font-size: 12px; line-height: 1.35; white-space: pre-wrap; }
            </style>
            </head>
            <body>
            <h1>\(escape(title))</h1>
            <figure>
            \(picture)
            </figure>
            <h2>Journal lines (\(lines.count))</h2>
            <pre>
            \(lines.joined(separator: "\n"))
            </pre>
            </body>
            </html>

            """
    }

    /// `text` with `&`, `<`, `>` and `"` as HTML character references.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
