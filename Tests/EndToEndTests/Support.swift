import DaemonRuntime
import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// `phonectl status --json` and `watchctl status --json` decode into the daemons' own status types,
/// so the JSON shape the CLIs promise (docs/CLI.md) is checked field for field.
typealias PhoneStatusView = PhoneStatus
typealias WatchStatusView = WatchStatus

extension PhoneStatus {
    /// How many watch updates ended with `outcome`.
    func ingested(_ outcome: String) -> Int { ingest[outcome] ?? 0 }
}

/// One entry of `watchctl queue list --json`.
struct QueuedTransferView: Decodable {
    var sequence: UInt64
    var bytes: Int
    var ageSeconds: Double
    var sent: Bool
}

/// One `component=ingest msg=ingest …` line of phoned's log.
struct IngestLogLine: Equatable {
    var run: String
    var via: String
    var outcome: String
    /// The version (newest stamp) of the copy the watch sent.
    var version: String
}

extension SyncSystem {
    /// Neither daemon journalled a `link.down` since it started (their `metrics`).
    func expectLinkNeverDropped(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for (side, metrics) in [("phone", try await phone("metrics")), ("watch", try await watch("metrics"))] {
            let down = metrics.split(separator: "\n").first {
                $0.hasPrefix(#"watchsync_events_total{event="link.down"} "#)
            }
            #expect(
                down?.split(separator: " ").last == "0", "\(side): \(down.map(String.init) ?? "no link.down sample")",
                sourceLocation: sourceLocation)
        }
    }

    func phoneStatus() async throws -> PhoneStatusView {
        try await phonectl("status", "--json").decode()
    }

    func watchStatus() async throws -> WatchStatusView {
        try await watchctl("status", "--json").decode()
    }

    func queue() async throws -> [QueuedTransferView] {
        try await watchctl("queue", "list", "--json").decode()
    }

    /// Waits until watchd's outbox holds exactly `count` transfers and returns them. An edit's reply
    /// does not wait for its transfer's append (group-committed off the loop), so a look right
    /// after the edit may see fewer.
    @discardableResult
    func waitForQueue(_ count: Int) async throws -> [QueuedTransferView] {
        var found: [QueuedTransferView] = []
        try await eventually("watchd's outbox holds \(count) transfers") {
            found = try await self.queue()
            return found.count == count
        }
        return found
    }

    /// `phonectl split create`; returns the new split's ID.
    func createSplit(_ name: String, _ exercises: [String]) async throws -> String {
        try await phonectl(["split", "create", "--name", name] + exercises.flatMap { ["-e", $0] }).succeeded()
            .trimmedOutput
    }

    /// Starts both daemons and a run of a one-exercise split; returns the split's and the run's IDs
    /// once the run is on the watch.
    func startBothWithRun() async throws -> (split: String, run: String) {
        try await startBoth()
        let split = try await createSplit("Legs", ["Squat:2x5@100"])
        let run = try await startRun(split)
        try await waitForWatchRun(run)
        return (split, run)
    }

    /// `phonectl start SPLIT`; returns the new run's ID.
    func startRun(_ split: String) async throws -> String {
        try await phone("start", split)
    }

    /// The phone's copy of a run (`phonectl show RUN --json`).
    func phoneRun(_ id: String) async throws -> WorkoutDocument {
        try Self.document(try await phonectl("show", id, "--json").succeeded().standardOutput)
    }

    /// The watch's cached copy of a run, or nil when the watch has no such run (watchctl exits 1).
    func watchRun(_ id: String) async throws -> WorkoutDocument? {
        let result = try await watchctl("show", id, "--json")
        if result.exitCode == 1 { return nil }
        return try Self.document(try result.succeeded().standardOutput)
    }

    static func document(_ json: String) throws -> WorkoutDocument {
        try DocumentCoder.decode(WorkoutDocument.self, from: Array(json.utf8))
    }

    /// Waits until the watch's copy of the run exists and satisfies `condition`; returns it.
    @discardableResult
    func waitForWatchRun(
        _ id: String, _ what: String = "is on the watch",
        where condition: @escaping (WorkoutDocument) -> Bool = { _ in true }
    ) async throws -> WorkoutDocument {
        var found: WorkoutDocument?
        try await eventually("run \(id) \(what)") {
            found = try await self.watchRun(id)
            return found.map(condition) ?? false
        }
        return found!
    }

    /// Waits until the phone's copy of the run satisfies `condition`; returns it.
    @discardableResult
    func waitForPhoneRun(
        _ id: String, _ what: String, where condition: @escaping (WorkoutDocument) -> Bool
    ) async throws -> WorkoutDocument {
        var found: WorkoutDocument?
        try await eventually("phone's run \(id) \(what)") {
            let result = try await self.phonectl("show", id, "--json")
            guard result.exitCode == 0 else { return false }
            found = try Self.document(result.standardOutput)
            return condition(found!)
        }
        return found!
    }

    /// Waits until watchctl's status satisfies `condition`; returns it.
    @discardableResult
    func waitForWatchStatus(_ what: String, where condition: @escaping (WatchStatusView) -> Bool) async throws
        -> WatchStatusView
    {
        var found: WatchStatusView?
        try await eventually("watchd's status: \(what)") {
            let result = try await self.watchctl("status", "--json")
            guard result.exitCode == 0 else { return false }
            found = try result.decode(WatchStatusView.self)
            return condition(found!)
        }
        return found!
    }

    /// Waits until phonectl's status satisfies `condition`; returns it.
    @discardableResult
    func waitForPhoneStatus(_ what: String, where condition: @escaping (PhoneStatusView) -> Bool) async throws
        -> PhoneStatusView
    {
        var found: PhoneStatusView?
        try await eventually("phoned's status: \(what)") {
            let result = try await self.phonectl("status", "--json")
            guard result.exitCode == 0 else { return false }
            found = try result.decode(PhoneStatusView.self)
            return condition(found!)
        }
        return found!
    }

    /// The run's live file, relative to the document directory: `Workouts/YYYY/MM/<id>.json` for
    /// the UTC year and month of its start.
    static func workoutPath(_ run: WorkoutDocument) -> String {
        let iso = run.startedAt.iso8601
        let year = iso.prefix(4)
        let month = iso.dropFirst(5).prefix(2)
        return "Workouts/\(year)/\(month)/\(run.id).json"
    }

    /// The run as phoned wrote it to disk, or nil when there is no live file.
    func runOnDisk(_ run: WorkoutDocument) throws -> WorkoutDocument? {
        let path = "\(documentsDirectory)/\(Self.workoutPath(run))"
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try DocumentCoder.decode(WorkoutDocument.self, from: Array(data))
    }

    /// Every file under the document directory named after `id` (live file or stub).
    func filesNamed(_ id: String) -> [String] {
        documentFiles().filter { $0.hasSuffix("/\(id).json") }
    }

    /// phoned's ingest log lines, across every instance, oldest first.
    var ingestLines: [IngestLogLine] {
        phonedLog.split(separator: "\n").compactMap { line -> IngestLogLine? in
            guard line.contains("component=ingest"), line.contains("msg=ingest ") else { return nil }
            let fields = Self.logfmt(line)
            guard let run = fields["run"], let via = fields["via"], let outcome = fields["outcome"],
                let version = fields["version"]
            else { return nil }
            return IngestLogLine(run: run, via: via, outcome: outcome, version: version)
        }
    }

    /// A logfmt line's key/value pairs (values may be double-quoted with `\"` escapes).
    static func logfmt(_ line: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex, line[index] == " " { index = line.index(after: index) }
            guard let equals = line[index...].firstIndex(of: "=") else { break }
            let key = String(line[index..<equals])
            var cursor = line.index(after: equals)
            var value = ""
            if cursor < line.endIndex, line[cursor] == "\"" {
                cursor = line.index(after: cursor)
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\", line.index(after: cursor) < line.endIndex {
                        cursor = line.index(after: cursor)
                    }
                    value.append(line[cursor])
                    cursor = line.index(after: cursor)
                }
                if cursor < line.endIndex { cursor = line.index(after: cursor) }
            } else {
                while cursor < line.endIndex, line[cursor] != " " {
                    value.append(line[cursor])
                    cursor = line.index(after: cursor)
                }
            }
            fields[key] = value
            index = cursor
        }
        return fields
    }
}

extension WorkoutDocument {
    /// The number of sets marked done.
    var doneSets: Int { logs.reduce(0) { $0 + $1.completedSetCount } }
}

/// One row of `live show --json`.
struct LiveScreenView: Decodable, Equatable {
    var runID: String
    var logID: String
    var exercise: String
    var role: String
    var phase: String
    var set: Int
    var setCount: Int
    var phaseAnchor: String
    var remainingSeconds: Double?
    var version: Int
}

/// Which daemon a CLI call goes to.
enum Device {
    case phone, watch
}

extension SyncSystem {
    /// What `live show` on one side shows for `run`, if anything.
    func live(on side: Device, _ run: String) async throws -> LiveScreenView? {
        let result =
            side == .phone ? try await phonectl("live", "show", "--json") : try await watchctl("live", "show", "--json")
        return try result.decode([LiveScreenView].self).first { $0.runID == run }
    }

    /// Both sides' screens for `run`, read concurrently.
    func liveBoth(_ run: String) async throws -> (phone: LiveScreenView, watch: LiveScreenView) {
        async let phone = live(on: .phone, run)
        async let watch = live(on: .watch, run)
        guard let phoneScreen = try await phone, let watchScreen = try await watch else {
            throw HarnessError("a side shows nothing for run \(run)")
        }
        return (phoneScreen, watchScreen)
    }

    /// Waits until one side's screen for `run` satisfies `condition`.
    @discardableResult
    func waitForLive(
        on side: Device, _ run: String, _ what: String, where condition: @escaping (LiveScreenView) -> Bool
    ) async throws -> LiveScreenView {
        var found: LiveScreenView?
        try await eventually("the \(side) screen \(what)") {
            found = try await self.live(on: side, run)
            return found.map(condition) ?? false
        }
        return found!
    }

    /// Writes `count` completed copies of `template` (new IDs, same month) straight into the
    /// document directory, as history another device synced in.
    func generateHistory(like template: WorkoutDocument, count: Int) throws {
        var history = template
        try history.endKeepingProgress(at: template.updatedAt.advanced(by: .seconds(60)))
        let folder = "\(documentsDirectory)/\(Self.workoutPath(template))".split(separator: "/").dropLast()
            .joined(separator: "/")
        for index in 0..<count {
            var bytes = [UInt8](repeating: 0x5A, count: 16)
            bytes[12] = UInt8(index >> 24 & 0xFF)
            bytes[13] = UInt8(index >> 16 & 0xFF)
            bytes[14] = UInt8(index >> 8 & 0xFF)
            bytes[15] = UInt8(index & 0xFF)
            history.id = DocumentID(bytes: bytes)
            try Data(DocumentCoder.encodeForDisk(history)).write(
                to: URL(fileURLWithPath: "/\(folder)/\(history.id).json"))
        }
    }
}
