// tracediagram: merges phoned's and watchd's event journals into one mermaid sequenceDiagram (the
// seeds' participants), behind scripts/trace. The merge and the drawing are Trace's (pure, tested);
// this reads the files and the arguments. docs/TRACE.md shows a diagram and the command that made it.
import AdminCommands
import ArgumentParsing
import DurableFiles
import Foundation
import Trace

let spec = CommandSpec(
    name: "tracediagram", abstract: "Merge both daemons' event journals into one mermaid sequenceDiagram.",
    discussion:
        "A send and its receipt (same causal id) are one arrow; decisions, link changes and restarts are notes.",
    options: [
        OptionSpec("phone-state", help: "phoned's state directory.", valueName: "dir", isRequired: true),
        OptionSpec("watch-state", help: "watchd's state directory.", valueName: "dir", isRequired: true),
    ] + TraceQuery.options,
    flags: [FlagSpec("markdown", help: "Wrap the diagram in a ```mermaid fence (for a .md file).")])

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(status)
}

switch spec.parse(Array(CommandLine.arguments.dropFirst())) {
case .help(let text):
    print(text)
case .usageError(let message, let usage):
    fail("Error: \(message)\n\(usage)", status: 64)
case .command(let parsed):
    let query: TraceQuery
    do {
        query = try TraceQuery(parsed)
    } catch {
        fail("Error: \(error.message)", status: 64)
    }
    var events: [TraceEvent] = []
    for name in ["phone-state", "watch-state"] {
        let directory = parsed.optionalString(name) ?? ""
        let journal = EventJournal.read(stateDirectory: directory)
        if journal.isEmpty { FileHandle.standardError.write(Data("note: no journal events in \(directory)\n".utf8)) }
        events += journal
    }
    let filter = query.filter(now: EventJournal.wallMicros())
    print(TraceDiagram.render(filter.apply(events), markdown: parsed.flag("markdown")), terminator: "")
}
