import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import LinkProtocol
import Nodes
import WorkoutModel

/// The four project executables the testers drive.
struct Binaries: Sendable {
    var phoned: String
    var watchd: String
    var phonectl: String
    var watchctl: String

    /// Finds them in `directory`; names every one that is missing.
    init(directory: String) throws(DaemonError) {
        phoned = "\(directory)/phoned"
        watchd = "\(directory)/watchd"
        phonectl = "\(directory)/phonectl"
        watchctl = "\(directory)/watchctl"
        let all: [String] = [phoned, watchd, phonectl, watchctl]
        let missing = all.filter { access($0, X_OK) != 0 }
        guard missing.isEmpty else {
            throw DaemonError(
                description:
                    "not built: \(missing.joined(separator: ", ")) (run `swift build -c release` or pass --build-dir)")
        }
    }
}

/// `phonectl status --json`, the fields the testers read.
struct PhoneStatusView: Decodable, Sendable {
    var linked: Bool
    var contextGenerationSent: UInt64
    var contextGenerationAcknowledged: UInt64
    var ingest: [String: Int]
}

/// `watchctl status --json`, the fields the testers read.
struct WatchStatusView: Decodable, Sendable {
    var linked: Bool
    var contextGenerationApplied: UInt64
    var outboxDepth: Int
    var undeliveredEdits: Int
}

/// One phoned and one watchd with their configs, state and logs in a work directory, and the CLIs
/// to talk to them over their admin sockets (Unix sockets: filesystem objects, so they work from
/// the root namespace even when the daemons run in network namespaces of their own).
///
/// Layout of the work directory: `phoned.json`, `watchd.json`, `pairing.key`, `documents/`
/// (phoned's document directory), `phone-state/`, `watch-cache/`, `watch-state/`, `logs/`
/// (`phoned.log` is phoned's stderr across every restart, `phoned.stdout.log` its readiness lines;
/// the same for watchd), `pids/` (live daemon pids, for the wrapping script's trap), `scratch/`.
struct Harness: Sendable {
    let work: String
    let binaries: Binaries
    let phone: ManagedDaemon
    let watch: ManagedDaemon
    let phoneSocket: String
    let watchSocket: String
    let documentsDirectory: String
    let phoneStateDirectory: String
    let watchStateDirectory: String
    let scratch: String

    /// Writes the key and both configs. `listen` is phoned's link address, `dial` the address
    /// watchd dials; each daemon's command line gets `prefix` in front (e.g. `ip netns exec NS`).
    init(
        work: String, binaries: Binaries, listen: String, dial: String, phonePrefix: [String] = [],
        watchPrefix: [String] = []
    ) throws {
        self.work = work
        self.binaries = binaries
        let fileManager = FileManager.default
        for folder in ["logs", "pids", "scratch"] {
            try fileManager.createDirectory(atPath: "\(work)/\(folder)", withIntermediateDirectories: true)
        }
        scratch = "\(work)/scratch"
        documentsDirectory = "\(work)/documents"
        phoneStateDirectory = "\(work)/phone-state"
        watchStateDirectory = "\(work)/watch-state"
        phoneSocket = "\(work)/phoned.sock"
        watchSocket = "\(work)/watchd.sock"
        let key = "\(work)/pairing.key"
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom"), let bytes = try random.read(upToCount: 32),
            bytes.count == 32
        else {
            throw DaemonError(description: "cannot read 32 random bytes for the pairing key")
        }
        guard fileManager.createFile(atPath: key, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw DaemonError(description: "cannot write \(key)")
        }
        guard let listenAddress = NetworkAddress(parsing: listen), let dialAddress = NetworkAddress(parsing: dial)
        else {
            throw DaemonError(description: "bad link address: listen \(listen), dial \(dial)")
        }
        var phoneConfig = PhonedConfiguration.defaults
        phoneConfig.documentsDirectory = documentsDirectory
        phoneConfig.stateDirectory = phoneStateDirectory
        phoneConfig.listen = listenAddress
        phoneConfig.pairingKeyFile = key
        phoneConfig.adminSocket = phoneSocket
        phoneConfig.recentRunsLimit = 3
        var watchConfig = WatchdConfiguration.defaults
        watchConfig.cacheDirectory = "\(work)/watch-cache"
        watchConfig.stateDirectory = watchStateDirectory
        watchConfig.phoneAddress = dialAddress
        watchConfig.pairingKeyFile = key
        watchConfig.adminSocket = watchSocket
        try Data(phoneConfig.fileText.utf8).write(to: URL(fileURLWithPath: "\(work)/phoned.json"))
        try Data(watchConfig.fileText.utf8).write(to: URL(fileURLWithPath: "\(work)/watchd.json"))
        phone = ManagedDaemon(
            name: "phoned", argv: phonePrefix + [binaries.phoned, "--config", "\(work)/phoned.json"],
            logDirectory: "\(work)/logs", pidDirectory: "\(work)/pids", readyText: "phoned ready")
        watch = ManagedDaemon(
            name: "watchd", argv: watchPrefix + [binaries.watchd, "--config", "\(work)/watchd.json"],
            logDirectory: "\(work)/logs", pidDirectory: "\(work)/pids", readyText: "watchd ready")
    }

    /// phoned's log (stderr) across all its incarnations.
    var phoneLog: String { "\(work)/logs/phoned.log" }
    var watchLog: String { "\(work)/logs/watchd.log" }

    // MARK: CLIs

    func phonectl(_ arguments: [String]) async -> CommandResult {
        await Subprocess.run([binaries.phonectl, "--socket", phoneSocket] + arguments, scratch: scratch)
    }

    func watchctl(_ arguments: [String]) async -> CommandResult {
        await Subprocess.run([binaries.watchctl, "--socket", watchSocket] + arguments, scratch: scratch)
    }

    func phoneStatus() async -> PhoneStatusView? {
        decode(PhoneStatusView.self, await phonectl(["status", "--json"]))
    }

    func watchStatus() async -> WatchStatusView? {
        decode(WatchStatusView.self, await watchctl(["status", "--json"]))
    }

    /// `phonectl workouts --json` (active and recent: what the phone pushes), or with `all` the
    /// whole history.
    func phoneWorkouts(all: Bool = false) async -> [WorkoutDocument]? {
        decode([WorkoutDocument].self, await phonectl(["workouts", "--json"] + (all ? ["--all"] : [])))
    }

    /// `watchctl workouts --json`: every run in the watch's cache.
    func watchWorkouts() async -> [WorkoutDocument]? {
        decode([WorkoutDocument].self, await watchctl(["workouts", "--json"]))
    }

    private func decode<T: Decodable>(_ type: T.Type, _ result: CommandResult) -> T? {
        guard result.status == 0 else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(result.standardOutput.utf8))
    }

    // MARK: Start-up

    /// Starts both daemons and waits until the watch is linked.
    func startBoth() async throws {
        try await phone.start()
        try await watch.start()
        guard await waitUntil(timeout: .seconds(30), { await watchStatus()?.linked == true }) != nil else {
            throw DaemonError(description: "watchd did not link to phoned within 30 s; see \(work)/logs")
        }
    }

    /// Stops both daemons gracefully (SIGTERM).
    func stopBoth() async {
        await watch.stop()
        await phone.stop()
    }

    /// Tombstoned IDs: the stubs in the phone's document directory.
    func stubIDs() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(documentsDirectory)/Stubs")) ?? []
        return Set(names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    }

    /// Every run ID that has a file under Workouts/.
    func workoutFileIDs() -> Set<String> {
        var found: Set<String> = []
        let root = "\(documentsDirectory)/Workouts"
        guard let walker = FileManager.default.enumerator(atPath: root) else { return found }
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".json") else { continue }
            found.insert(String((path as NSString).lastPathComponent.dropLast(5)))
        }
        return found
    }
}

/// Polls `condition` every `interval` until it holds (returns how long that took) or `timeout`
/// passes (returns nil).
func waitUntil(
    timeout: Duration, interval: Duration = .milliseconds(50), _ condition: () async -> Bool
) async -> Duration? {
    let clock = ContinuousClock()
    let start = clock.now
    while true {
        if await condition() { return clock.now - start }
        if clock.now - start >= timeout { return nil }
        try? await Task.sleep(for: interval)
    }
}

/// The wall clock in the daemons' log format (`2026-11-29T21:14:32.412Z`), for comparing with log lines.
func wallClockStamp() -> String {
    Logger.timestamp(Logger.systemWallClock())
}
