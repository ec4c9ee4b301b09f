import DaemonConfiguration
import DaemonRuntime
import Foundation
import TestSupport
import Testing

/// A systemd unit file read as `[Section]` → `Key` → values (a key may repeat).
struct UnitFile {
    let path: String
    let text: String
    private(set) var sections: [String: [String: [String]]] = [:]

    init(path: String) throws {
        self.path = path
        text = try String(contentsOfFile: path, encoding: .utf8)
        var section = ""
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            sections[section, default: [:]][key, default: []].append(String(line[line.index(after: equals)...]))
        }
    }

    /// The last value of `key` in `section` (systemd's rule for single-valued settings).
    func value(_ key: String, in section: String = "Service") -> String? {
        sections[section]?[key]?.last
    }
}

/// Where `systemd-analyze` is, if installed.
private let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// Runs `systemd-analyze verify` on `units`; returns its exit status and what it printed. Its output
/// passes through scratch files in `directory`.
private func verify(_ units: [String], in directory: TemporaryDirectory) async throws -> (status: Int32, output: String)
{
    try await systemdAnalyze(["verify", "--man=no", "--generators=no"] + units, in: directory)
}

/// Runs `systemd-analyze` with `arguments`; returns its exit status and what it printed (stdout, then
/// stderr). Its output passes through scratch files in `directory`.
private func systemdAnalyze(_ arguments: [String], in directory: TemporaryDirectory) async throws
    -> (status: Int32, output: String)
{
    let result = try await CommandResult.run(
        try #require(systemdAnalyze), arguments,
        // Offline verification: no running manager is needed (or wanted) for this check.
        environment: ["SYSTEMD_LOG_COLOR": "0"], scratch: directory.appending("systemd-analyze"))
    return (result.exitCode, result.standardOutput + result.standardError)
}

/// Copies the shipped unit `name` into `directory` with its `ExecStart=` binary replaced by the
/// built one (so verify checks a real executable, not a missing /usr/local/bin path) and any extra
/// `lines` appended to `[Service]`.
private func verifiableCopy(of name: String, in directory: TemporaryDirectory, appending lines: [String] = []) throws
    -> String
{
    let shipped = try UnitFile(path: "\(SourceTree.root)/systemd/\(name).service")
    let executable = BuildProducts.executable(name)
    try #require(
        FileManager.default.isExecutableFile(atPath: executable),
        "\(executable) is missing: build the package (swift build) before the tests")
    var text = shipped.text.replacingOccurrences(
        of: "ExecStart=/usr/local/bin/\(name) ", with: "ExecStart=\(executable) ")
    #expect(text != shipped.text, "\(name).service must start /usr/local/bin/\(name)")
    if !lines.isEmpty {
        text = text.replacingOccurrences(of: "[Service]\n", with: "[Service]\n" + lines.joined(separator: "\n") + "\n")
    }
    let path = directory.appending("\(name).service")
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("systemd units: systemd-analyze verify, notify and watchdog settings, sandboxing, config paths")
struct UnitFileTests {
    static let names = ["phoned", "watchd"]

    @Test(
        "systemd-analyze verify accepts both units without a single warning",
        .enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed: the units are not verified"))
    func systemdAnalyzeVerify() async throws {
        let directory = try TemporaryDirectory("units")
        let units = try Self.names.map { try verifiableCopy(of: $0, in: directory) }
        let (status, output) = try await verify(units, in: directory)
        #expect(status == 0, "systemd-analyze verify failed:\n\(output)")
        // verify exits 0 on an unknown key or a bad value ("…, ignoring"); any line naming a unit counts.
        let complaints = output.split(separator: "\n").filter { $0.contains(directory.path) || $0.contains(".service") }
        #expect(complaints.isEmpty, "systemd-analyze verify complained:\n\(output)")
    }

    @Test(
        "the verification is meaningful: a misspelt key, a bad value and a missing binary are each caught",
        .enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed: the units are not verified"),
        arguments: [["WatchdogSecs=10s"], ["RestartSec=soon"]])
    func verificationCatchesMistakes(_ lines: [String]) async throws {
        let directory = try TemporaryDirectory("units-bad")
        let unit = try verifiableCopy(of: "phoned", in: directory, appending: lines)
        let (status, output) = try await verify([unit], in: directory)
        #expect(status != 0 || output.contains("phoned.service"), "\(lines) went unnoticed:\n\(output)")

        let missing = directory.appending("missing")
        try FileManager.default.createDirectory(atPath: missing, withIntermediateDirectories: true)
        let shipped = try String(contentsOfFile: "\(SourceTree.root)/systemd/phoned.service", encoding: .utf8)
        try Data(shipped.utf8).write(to: URL(fileURLWithPath: "\(missing)/phoned.service"))
        let unverifiable = try await verify(["\(missing)/phoned.service"], in: directory)
        #expect(unverifiable.status != 0, "a missing ExecStart binary must fail verify")
    }

    @Test(
        "systemd-analyze security rates each unit's exposure 2.0 or better",
        .enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed: the units are not rated"),
        arguments: names)
    func securityExposure(_ name: String) async throws {
        let directory = try TemporaryDirectory("units-sec")
        let unit = try verifiableCopy(of: name, in: directory)
        let (_, output) = try await systemdAnalyze(["security", "--offline=yes", "--no-pager", unit], in: directory)
        // "→ Overall exposure level for phoned.service: 1.3 OK 🙂"
        let line = try #require(
            output.split(separator: "\n").last { $0.contains("Overall exposure level") }, "\(output)")
        let score = try #require(
            line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(score <= 2.0, "\(name).service: \(line)\n\(output)")
    }

    @Test("each unit is Type=notify with the watchdog, restarts on failure and is sandboxed", arguments: names)
    func notifyWatchdogAndSandbox(_ name: String) throws {
        let unit = try UnitFile(path: "\(SourceTree.root)/systemd/\(name).service")
        let expected: [String: String] = [
            "Type": "notify", "NotifyAccess": "main", "WatchdogSec": "10s", "Restart": "on-failure",
            "RestartSec": "1s", "ExecStart": "/usr/local/bin/\(name) --config /etc/watchsync/\(name).json",
            "RuntimeDirectory": "watchsync", "RuntimeDirectoryPreserve": "yes", "NoNewPrivileges": "yes",
            "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "User": "watchsync",
            "CapabilityBoundingSet": "", "SystemCallFilter": "@system-service", "SystemCallErrorNumber": "EPERM",
            "MemoryDenyWriteExecute": "yes", "PrivateUsers": "yes", "ProtectProc": "invisible",
            "StateDirectory": name == "phoned" ? "watchsync/phone" : "watchsync/watch",
            "LimitNOFILE": "1024", "MemoryMax": "256M", "TasksMax": "64",
        ]
        for (key, value) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(unit.value(key) == value, "\(name).service: \(key)=\(unit.value(key) ?? "absent")")
        }
        // The daemons ignore SIGHUP, so a reload command would promise what they do not do.
        #expect(unit.value("ExecReload") == nil)
        // A bad config (78) or command line (64) fails the same way on every restart.
        #expect(unit.value("RestartPreventExitStatus")?.split(separator: " ").sorted() == ["64", "78"])
        #expect(unit.value("WantedBy", in: "Install") == "multi-user.target")
    }

    @Test("the units' configs load, and every path they name lies where the units make it writable")
    func systemdConfigsMatchUnits() throws {
        let root = SourceTree.root
        let phone = try PhonedConfiguration.load(path: "\(root)/config/systemd/phoned.json")
        let watch = try WatchdConfiguration.load(path: "\(root)/config/systemd/watchd.json")
        let phoneUnit = try UnitFile(path: "\(root)/systemd/phoned.service")
        let watchUnit = try UnitFile(path: "\(root)/systemd/watchd.service")
        let phoneState = "/var/lib/\(try #require(phoneUnit.value("StateDirectory")))/"
        let watchState = "/var/lib/\(try #require(watchUnit.value("StateDirectory")))/"
        let runtime = "/run/\(try #require(phoneUnit.value("RuntimeDirectory")))/"
        #expect(phone.documentsDirectory.hasPrefix(phoneState) && phone.stateDirectory.hasPrefix(phoneState))
        #expect(watch.cacheDirectory.hasPrefix(watchState) && watch.stateDirectory.hasPrefix(watchState))
        #expect(phone.adminSocket.hasPrefix(runtime) && watch.adminSocket.hasPrefix(runtime))
        #expect(phone.adminSocket != watch.adminSocket)
        #expect(phone.pairingKeyFile == watch.pairingKeyFile)
        #expect(phone.pairingKeyFile.hasPrefix("/etc/watchsync/"))
        #expect(watch.phoneAddress == phone.listen)
        #expect(phoneUnit.value("RuntimeDirectory") == watchUnit.value("RuntimeDirectory"))
    }

    @Test("the local configs load from the repository root, keep everything under run/ and agree")
    func localConfigsAgree() throws {
        let root = SourceTree.root
        let phone = try PhonedConfiguration.load(path: "\(root)/config/phoned.json", workingDirectory: root)
        let watch = try WatchdConfiguration.load(path: "\(root)/config/watchd.json", workingDirectory: root)
        for path in [
            phone.documentsDirectory, phone.stateDirectory, phone.adminSocket, phone.pairingKeyFile,
            watch.cacheDirectory, watch.stateDirectory, watch.adminSocket, watch.pairingKeyFile,
        ] {
            #expect(path.hasPrefix("\(root)/run/"), "\(path) is outside run/")
        }
        #expect(phone.listen.description == "127.0.0.1:7420")
        #expect(watch.phoneAddress == phone.listen)
        #expect(watch.pairingKeyFile == phone.pairingKeyFile)
    }
}
