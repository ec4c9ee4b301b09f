// tracediagram: merges phoned's and watchd's event journals into one sequence diagram (the seeds'
// participants), behind scripts/trace: mermaid text by default, or an SVG or an HTML page drawn by
// PlantUML. The merge and both notations are Trace's (pure, tested); this reads the files and the
// arguments, runs plantuml and writes the pictures. docs/TRACE.md shows a diagram and the command
// that made it.
import AdminCommands
import ArgumentParsing
import ChildProcesses
import DurableFiles
import Foundation
import Trace

let spec = CommandSpec(
    name: "tracediagram", abstract: "Merge both daemons' event journals into one sequence diagram.",
    discussion:
        "A send and its receipt (same causal id) are one arrow; decisions, link changes and restarts are notes. "
        + "Mermaid text on stdout by default; --svg and --html draw it with PlantUML (Debian package plantuml; "
        + "the PLANTUML environment variable may name the program's path).",
    options: [
        OptionSpec("phone-state", help: "phoned's state directory.", valueName: "dir", isRequired: true),
        OptionSpec("watch-state", help: "watchd's state directory.", valueName: "dir", isRequired: true),
        OptionSpec("svg", help: "Write the diagram as an SVG picture to this file.", valueName: "file"),
        OptionSpec(
            "html", help: "Write one self-contained page: the picture, then the journal lines under it.",
            valueName: "file"),
    ] + TraceQuery.options,
    flags: [FlagSpec("markdown", help: "Wrap the diagram in a ```mermaid fence (for a .md file).")])

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(status)
}

/// The events drawn as an SVG document by PlantUML, in a scratch directory removed afterwards.
func renderSVG(_ events: [TraceEvent]) async throws(RendererError) -> String {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tracediagram-\(UUID().uuidString)")
        .path
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    do {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try TracePlantUML.render(events).write(toFile: "\(scratch)/trace.puml", atomically: true, encoding: .utf8)
    } catch {
        throw .failed(program: "plantuml", outcome: "cannot write its input in \(scratch)", output: "\(error)")
    }
    _ = try await ExternalRenderer.plantUML.run(
        ["-tsvg", "-nometadata", "-failfast2", "trace.puml"], workingDirectory: scratch,
        scratch: "\(scratch)/plantuml")
    guard let svg = FileManager.default.contents(atPath: "\(scratch)/trace.svg") else {
        throw .failed(program: "plantuml", outcome: "exit 0 but no trace.svg", output: "")
    }
    return String(decoding: svg, as: UTF8.self)
}

/// Writes `text` to `path`, or exits saying why not.
func write(_ text: String, to path: String) {
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        fail("Error: cannot write \(path): \(error.localizedDescription)", status: 73)
    }
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
    let svgPath = parsed.optionalString("svg")
    let htmlPath = parsed.optionalString("html")
    if svgPath != nil || htmlPath != nil {
        // Before reading the journals: a missing renderer is said at once, whatever they hold.
        do {
            _ = try ExternalRenderer.plantUML.locate()
        } catch {
            fail("Error: \(error)", status: 69)
        }
    }
    var events: [TraceEvent] = []
    for name in ["phone-state", "watch-state"] {
        let directory = parsed.optionalString(name) ?? ""
        let journal = EventJournal.read(stateDirectory: directory)
        if journal.isEmpty { FileHandle.standardError.write(Data("note: no journal events in \(directory)\n".utf8)) }
        events += journal
    }
    let filter = query.filter(now: EventJournal.wallMicros())
    let shown = filter.apply(events)
    guard svgPath != nil || htmlPath != nil else {
        print(TraceDiagram.render(shown, markdown: parsed.flag("markdown")), terminator: "")
        exit(0)
    }
    let svg: String
    do {
        svg = try await renderSVG(shown)
    } catch {
        fail("Error: \(error)", status: error.isMissing ? 69 : 1)
    }
    if let svgPath { write(svg, to: svgPath) }
    if let htmlPath {
        let title = "phoned and watchd" + (filter.run.map { ", run \($0)" } ?? "")
        write(TracePage.html(title: title, svg: svg, events: shown), to: htmlPath)
    }
}
