import Foundation
import TestSupport
import Testing
import Trace

/// `tracediagram --svg` / `--html` (scripts/trace) on the journals recorded from `scripts/demo`'s run
/// (Tests/TraceJournals/demo: phoned's and watchd's state directories, journals only), drawn by the
/// real PlantUML: the picture has an arrow for every frame the journals hold, and a missing
/// renderer is an error that names the package to install.
@Suite("Trace pictures drawn by PlantUML")
struct TracePictureTests {
    static let recorded = "\(SourceTree.root)/Tests/TraceJournals/demo"
    static let arguments = ["--phone-state", "\(recorded)/phone", "--watch-state", "\(recorded)/watch"]

    private func tracediagram(_ extra: [String], environment: [String: String] = [:], in directory: TemporaryDirectory)
        async throws -> CommandResult
    {
        try await CommandResult.run(
            BuildProducts.executable("tracediagram"), Self.arguments + extra, environment: environment,
            scratch: directory.appending("tracediagram"))
    }

    /// What `tracediagram <option> FILE` wrote over the recorded journals (it must exit 0).
    private func drawn(_ option: String) async throws -> String {
        let directory = try TemporaryDirectory("trace-picture")
        let path = directory.appending("picture")
        let result = try await tracediagram([option, path], in: directory)
        try #require(result.exitCode == 0, "\(result)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The frames in the recorded journals, counted from the journal lines themselves: every send,
    /// plus every receipt whose send is in neither journal; a failed message is drawn between the
    /// bridges too, so it counts as well.
    private func framesInJournals() -> Int {
        let events = ["phone", "watch"].flatMap { side in
            (try? String(contentsOfFile: "\(Self.recorded)/\(side)/journal.jsonl", encoding: .utf8))
                .map(TraceEvent.parseLines) ?? []
        }
        let sends = events.filter { $0.event.crossing?.isSend == true }
        let sent = Set(sends.map { "\($0.event.crossing?.family ?? "") \($0.cause ?? "") \($0.side)" })
        let unmatchedReceipts = events.filter { event in
            guard let crossing = event.event.crossing, !crossing.isSend else { return false }
            return !sent.contains("\(crossing.family) \(event.cause ?? "") \(event.side.peer)")
        }
        let failed = events.filter { $0.event == .messageFailed }
        return sends.count + unmatchedReceipts.count + failed.count
    }

    @Test("--svg on a recorded journal draws one arrow between PhoneBridge and WatchBridge per frame")
    func oneArrowPerFrame() async throws {
        let svg = try await drawn("--svg")
        let picture = try SVGSequencePicture(svg)
        let bridges = try #require(picture.lifeline(of: "PhoneBridge")).and(
            #require(picture.lifeline(of: "WatchBridge")))
        let arrows = picture.horizontalLines.filter { line in
            // An arrow spans from one bridge's lifeline to the other's (its head may stop short).
            let (left, right) = (min(line.x1, line.x2), max(line.x1, line.x2))
            return left >= bridges.0 - 6 && right <= bridges.1 + 6 && right - left >= 0.8 * (bridges.1 - bridges.0)
        }
        let frames = framesInJournals()
        #expect(frames == 29, "the demo's recording holds 29 frames")
        #expect(arrows.count == frames)
        for name in ["Phone UI", "SyncEngine", "PhoneBridge", "WatchBridge", "Watch session", "Watch UI"] {
            #expect(picture.texts.contains(name), "participant \(name)")
        }
        #expect(picture.texts.contains { $0.hasPrefix("merged via") }, "the ingest decisions are notes")
    }

    @Test("--html is one page: the picture inline and every journal line under it")
    func page() async throws {
        let html = try await drawn("--html")
        let lines = ["phone", "watch"].map { side in
            ((try? String(contentsOfFile: "\(Self.recorded)/\(side)/journal.jsonl", encoding: .utf8)) ?? "")
                .split(separator: "\n").count
        }.reduce(0, +)
        #expect(html.contains("<svg"))
        #expect(html.contains("Journal lines (\(lines))"))
        #expect(!html.contains("src=\"http"), "self-contained: nothing fetched")
    }

    @Test(
        "a missing renderer is an error naming the Debian package, exit 69, no stack trace and no file",
        arguments: [
            ["PLANTUML": "/nonexistent/plantuml"],
            ["PLANTUML": "", "PATH": "/nonexistent"],
        ])
    func missingRenderer(environment: [String: String]) async throws {
        let directory = try TemporaryDirectory("trace-missing")
        let svgPath = directory.appending("trace.svg")
        let result = try await tracediagram(["--svg", svgPath], environment: environment, in: directory)
        #expect(result.exitCode == 69, "\(result)")
        #expect(result.standardError.contains("plantuml not found"), "\(result)")
        #expect(result.standardError.contains("install the Debian package plantuml"), "\(result)")
        #expect(!result.standardError.contains("Fatal error") && !result.standardError.contains("Stack dump"))
        #expect(!FileManager.default.fileExists(atPath: svgPath))
    }
}

/// The parts of a PlantUML sequence-diagram SVG the tests read: its texts, the participants'
/// lifelines (vertical dashed lines) and every horizontal line (arrows' shafts).
struct SVGSequencePicture {
    struct Line {
        var x1, x2, y1, y2: Double
        var dashed: Bool
    }

    var texts: [String] = []
    var lines: [Line] = []
    /// Each participant's header text with the x of its middle (from the `<rect>` before it).
    var headers: [(name: String, middle: Double)] = []

    init(_ svg: String) throws {
        var lastRect: (x: Double, width: Double)?
        for element in svg.components(separatedBy: "<").dropFirst() {
            let attributes = Self.attributes(element)
            if element.hasPrefix("rect ") {
                lastRect = (Double(attributes["x"] ?? "") ?? 0, Double(attributes["width"] ?? "") ?? 0)
            } else if element.hasPrefix("text ") {
                let text = String(element.drop { $0 != ">" }.dropFirst())
                texts.append(text)
                if let rect = lastRect, headers.allSatisfy({ $0.name != text }) {
                    headers.append((text, rect.x + rect.width / 2))
                }
                lastRect = nil
            } else if element.hasPrefix("line ") {
                let number = { (key: String) in Double(attributes[key] ?? "") ?? .nan }
                lines.append(
                    Line(
                        x1: number("x1"), x2: number("x2"), y1: number("y1"), y2: number("y2"),
                        dashed: (attributes["style"] ?? "").contains("dasharray: 5")))
            }
        }
    }

    /// The x of `participant`'s lifeline: the vertical dashed line nearest its header's middle.
    func lifeline(of participant: String) -> Double? {
        guard let middle = headers.first(where: { $0.name == participant })?.middle else { return nil }
        return lines.filter { $0.dashed && $0.x1 == $0.x2 }.map(\.x1).min { abs($0 - middle) < abs($1 - middle) }
    }

    var horizontalLines: [Line] { lines.filter { !$0.dashed && $0.y1 == $0.y2 && $0.x1 != $0.x2 } }

    private static func attributes(_ element: String) -> [String: String] {
        var result: [String: String] = [:]
        let scanner = element.prefix { $0 != ">" }
        for part in scanner.components(separatedBy: "\" ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].split(separator: " ").last.map(String.init) ?? ""
            result[key] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"/ "))
        }
        return result
    }
}

extension Double {
    /// `(self, other)`: the two bridges' lifelines, left one first.
    fileprivate func and(_ other: Double) -> (Double, Double) { (Swift.min(self, other), Swift.max(self, other)) }
}
