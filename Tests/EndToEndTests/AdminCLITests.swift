import AdminClient
import AdminCommands
import Foundation
import Glibc
import TestSupport
import Testing

/// phonectl and watchctl against the real daemons: help, `--json` shapes, and the exit codes a
/// script relies on (0 ok, 64 usage, 69 daemon down, 1 refused).
@Suite("Admin CLIs")
struct AdminCLITests {
    @Test("phonectl: help text, status --json shape, and exit codes 0, 64, 69 and 1")
    func phonectl() async throws {
        let system = try SyncSystem("ctl")

        // Help needs no daemon.
        let help = try await system.phonectl("--help")
        #expect(help.exitCode == 0)
        for verb in ["status", "split", "start", "complete", "end", "discard", "lock", "unlock", "push"] {
            #expect(help.standardOutput.contains(verb), "help lists \(verb)")
        }
        #expect(help.standardOutput.contains("69"), "help documents the exit codes")
        let subHelp = try await system.phonectl("split", "create", "--help")
        #expect(subHelp.exitCode == 0)
        #expect(subHelp.standardOutput.contains("--name"))

        // 69: nothing at the socket path.
        let absent = try await system.phonectl("status")
        #expect(absent.exitCode == 69, "\(absent)")
        #expect(absent.standardError.contains("phoned is not running"), "\(absent)")

        try await system.startPhoned()

        // --json: decodes field for field; the text form is for people.
        let status = try await system.phoneStatus()
        #expect(status.daemon == "phoned")
        #expect(status.listenPort == Int(system.port))
        #expect(status.activation == "notActivated")
        #expect(!status.linked)
        #expect(status.splits == 0 && status.activeRuns == 0 && status.skippedFiles.isEmpty)
        #expect(status.ingest.isEmpty)
        let raw = try await system.phonectl("status", "--json").succeeded().standardOutput
        let object = try #require(try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])
        #expect(object["ingest"] is [String: Any])
        #expect(object["skippedFiles"] is [Any])
        let text = try await system.phone("status")
        #expect(text.hasPrefix("phoned "), "\(text)")
        // The socket can also come from phoned's config file or the environment.
        let viaConfig = try await system.run("phonectl", ["--config", system.phonedConfigPath, "status", "--json"])
        #expect(viaConfig.exitCode == 0 && viaConfig.standardOutput.contains("\"daemon\":\"phoned\""), "\(viaConfig)")
        let viaEnvironment = try await system.run(
            "phonectl", ["splits"], environment: ["PHONED_ADMIN_SOCKET": system.phoneSocket])
        #expect(viaEnvironment.exitCode == 0 && viaEnvironment.trimmedOutput == "no splits", "\(viaEnvironment)")
        let badConfig = try await system.run(
            "phonectl", ["--config", system.directory.appending("nope.json"), "status"])
        #expect(badConfig.exitCode == 64, "\(badConfig)")
        #expect(badConfig.standardError.contains("Usage:"), "docs/CLI.md promises the Usage: line: \(badConfig)")

        // 64: usage errors are caught before phoned is asked.
        for arguments in [["frobnicate"], ["complete"], ["start"], ["split", "create"], ["status", "--bogus"]] {
            let result = try await system.phonectl(arguments)
            #expect(result.exitCode == 64, "\(result)")
            #expect(result.standardError.contains("Usage:"), "\(result)")
        }

        // 1: phoned refuses, says why, and changes nothing.
        let unknownSplit = "00000000-0000-4000-8000-000000000001"
        let refused = try await system.phonectl("start", unknownSplit)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.standardError.contains("no split \(unknownSplit)"), "\(refused)")
        // 64: a value the CLI cannot convert is a usage error, found before phoned is asked.
        let notUUID = try await system.phonectl("discard", "not-a-uuid")
        #expect(notUUID.exitCode == 64 && notUUID.standardError.contains("Usage:"), "\(notUUID)")
        let badExercise = try await system.phonectl("split", "create", "--name", "X", "-e", "Squat-3x5")
        #expect(badExercise.exitCode == 64, "\(badExercise)")
        #expect(badExercise.standardError.contains("NAME:SETSxREPS@WEIGHT"), "\(badExercise)")
        let noExercises = try await system.phonectl("split", "create", "--name", "Legs")
        #expect(noExercises.exitCode == 64, "\(noExercises)")
        #expect(noExercises.standardError.contains("--exercise"), "\(noExercises)")
        let split = try await system.createSplit("Legs", ["Squat:2x5@100:barbell"])
        let run = try await system.startRun(split)
        #expect(try await system.phone("discard", run) == "ok")
        let twice = try await system.phonectl("discard", run)
        #expect(twice.exitCode == 1, "\(twice)")
        #expect(twice.standardError.contains("deleted"), "\(twice)")
        let after = try await system.phoneStatus()
        #expect(after.splits == 1 && after.activeRuns == 0 && after.tombstones == 1)

        // A request written by hand is held to what phonectl would send: each of these once killed phoned.
        for (request, status) in [
            (#"{"workouts":{"all":true,"json":false,"limit":-5,"streamed":true}}"#, AdminResponse.Status.error),
            (#"{"data":{"_0":{"send":{"bytes":[1],"count":-9223372036854775808,"wantsReply":false}}}}"#, .error),
            (#"{"trace":{"_0":{"follow":false,"json":false,"since":"9999999999999999d"}}}"#, .ok),
            (#"{"workouts":{"all":true,"json":false,"since":"9999999999999999d","streamed":false}}"#, .ok),
        ] {
            let response = try AdminClient.send(path: system.phoneSocket, request: Array(request.utf8))
            #expect(response.status == status, "\(request): \(response)")
        }
        #expect(try await system.phoneStatus().tombstones == 1, "phoned is still up")

        // 69 again: the socket file is left behind by a kill -9, but nobody listens.
        try await system.killPhoned()
        let dead = try await system.phonectl("status", "--json")
        #expect(dead.exitCode == 69, "\(dead)")
        #expect(dead.standardOutput.isEmpty)
    }

    @Test("with no flag, phonectl finds phoned under run/ from any directory below it, and says where it looked")
    func findsRepositorySocket() async throws {
        let system = try SyncSystem("find")
        try await system.startPhoned()
        let checkout = system.directory.appending("checkout")
        let deep = "\(checkout)/Sources/Apps/phonectl"
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(checkout)/run", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: "\(checkout)/run/phoned.sock", withDestinationPath: system.phoneSocket)
        // An empty variable counts as unset, whatever the test's own environment holds.
        let unset = ["PHONED_ADMIN_SOCKET": ""]
        let found = try await system.run("phonectl", ["status", "--json"], environment: unset, workingDirectory: deep)
        #expect(found.exitCode == 0 && found.standardOutput.contains("\"daemon\":\"phoned\""), "\(found)")

        try await system.killPhoned()
        let gone = try await system.run("phonectl", ["status"], environment: unset, workingDirectory: deep)
        // (Unless this machine runs an installed phoned, which is tried next.)
        if !FileManager.default.fileExists(atPath: "/run/watchsync/phoned.sock") {
            #expect(gone.exitCode == 69, "\(gone)")
            #expect(
                gone.standardError.contains(
                    "phoned is not running: nothing is listening on \(checkout)/run/phoned.sock, and no socket at "
                        + "/run/watchsync/phoned.sock"), "\(gone)")
        }
    }

    @Test("a raw request in the wrong shape is answered naming the unknown verb or field and what was expected")
    func wrongShape() async throws {
        let system = try SyncSystem("shape")
        try await system.startPhoned()
        for (request, message) in [
            (#"{"verb":"nonsense"}"#, #"unknown verb "verb" (expected one of: status, splits, workouts, "#),
            (#"{"status":{"verbose":true}}"#, #"unknown field "verbose" in "status" (expected no fields)"#),
            (#"{"splits":{},"stauts":{}}"#, #"unknown verb "stauts" (expected one of: status, "#),
            (#"{"show":{"id":7}}"#, #"field "show.id": expected a string, got a number"#),
            (#"{"set":{"_0":{"done":{}}}}"#, #"unknown verb "done" in "set._0" (expected one of: complete, "#),
        ] {
            let response = try AdminClient.send(path: system.phoneSocket, request: Array(request.utf8))
            #expect(response.status == .error, "\(request): \(response)")
            #expect(response.message?.hasPrefix("malformed admin request: \(message)") == true, "\(response)")
        }
        #expect(try await system.phoneStatus().daemon == "phoned", "phoned is still up")
    }

    @Test("a CLI pointed at the other daemon's socket says so (exit 69) instead of printing its answer")
    func otherDaemonsSocket() async throws {
        let system = try SyncSystem("wrongsock")
        try await system.startBoth()
        let phone = try await system.run("phonectl", ["--socket", system.watchSocket, "status"])
        #expect(phone.exitCode == 69, "\(phone)")
        #expect(phone.standardOutput.isEmpty, "\(phone)")
        #expect(phone.standardError.contains("is watchd's admin socket, not phoned's"), "\(phone)")
        let watch = try await system.run("watchctl", ["--socket", system.phoneSocket, "status", "--json"])
        #expect(watch.exitCode == 69 && watch.standardError.contains("is phoned's admin socket"), "\(watch)")
        #expect(try await system.phonectl("status").exitCode == 0)
    }

    @Test("watchctl: help, status --json shape, and exit codes 0, 64, 69 and 1")
    func watchctl() async throws {
        let system = try SyncSystem("wctl")
        let help = try await system.watchctl("--help")
        #expect(help.exitCode == 0)
        for verb in ["status", "complete", "finish", "session", "queue", "wrist"] {
            #expect(help.standardOutput.contains(verb), "help lists \(verb)")
        }
        let absent = try await system.watchctl("status")
        #expect(absent.exitCode == 69, "\(absent)")

        try await system.startWatchd()  // no phone: watchd starts and keeps dialling
        let status = try await system.watchStatus()
        #expect(status.daemon == "watchd")
        #expect(status.activation == "notActivated" && !status.linked)
        #expect(status.session == "idle" && status.sessionOutcome == nil)
        #expect(status.outboxDepth == 0 && status.workouts == 0)
        #expect(try await system.queue().isEmpty)

        for arguments in [["frobnicate"], ["complete", "x"], ["wrist"], ["queue", "cancel"]] {
            let result = try await system.watchctl(arguments)
            #expect(result.exitCode == 64, "\(result)")
        }
        let unknownRun = "00000000-0000-4000-8000-000000000002"
        let refused = try await system.watchctl("complete", unknownRun, "1", "1")
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.standardError.contains(unknownRun), "\(refused)")
        // 64: a value the CLI cannot convert, found before watchd is asked.
        let sideways = try await system.watchctl("wrist", "sideways")
        #expect(sideways.exitCode == 64 && sideways.standardError.contains("Usage:"), "\(sideways)")
    }

    /// Before the weight had a bound, `--weight 1e308` was accepted: finishing the run killed watchd
    /// (its volume was infinite, which JSON cannot hold) and `phonectl show` killed phoned
    /// (`Int(1e308)`), again after each restart.
    @Test("the heaviest weight and the most reps finish and show on both sides; a heavier weight is a usage error")
    func extremeSets() async throws {
        let system = try SyncSystem("heavy")
        let (_, run) = try await system.startBothWithRun()
        for words in [["complete", run, "1", "1", "--weight", "1e308"], ["complete", run, "1", "1", "--reps", "-1"]] {
            let refused = try await system.watchctl(words)
            #expect(refused.exitCode == 64, "\(refused)")
            #expect(try await system.phonectl(words).exitCode == 64)
        }
        _ = try await system.watch("complete", run, "1", "1", "--weight", "100000", "--reps", "9223372036854775807")
        _ = try await system.watch("finish", run)
        let saved = try await system.waitForPhoneRun(run, "has the session's metrics") { $0.metrics != nil }
        #expect(saved.metrics?.totalVolume.isFinite == true, "\(String(describing: saved.metrics))")
        let shown = try await system.phone("show", run)
        #expect(shown.contains("9223372036854775807x100000"), "\(shown)")
        #expect(try await system.watchctl("show", run).exitCode == 0)
        #expect(try await system.phoneStatus().daemon == "phoned")
        #expect(try await system.watchStatus().daemon == "watchd")
    }
}

/// Start-up refusals and graceful shutdown, for both daemons.
@Suite("Daemon start-up and shutdown")
struct StartupTests {
    enum Daemon: String, CaseIterable, CustomTestStringConvertible {
        case phoned, watchd
        var testDescription: String { rawValue }
    }

    private func write(_ daemon: Daemon, _ system: SyncSystem, _ changes: [String: String?]) throws {
        switch daemon {
        case .phoned: try system.writePhonedConfig(changes)
        case .watchd: try system.writeWatchdConfig(changes)
        }
    }

    /// Spawns the daemon, which must refuse to start; returns its exit status and stderr.
    private func refusedStart(_ daemon: Daemon, _ system: SyncSystem) async throws -> (Int32, String) {
        let process = daemon == .phoned ? try system.spawnPhoned() : try system.spawnWatchd()
        let status = try await process.waitForExit(timeout: hangGuard)
        // The pipe may hand over the last line just after the exit.
        try await system.eventually("\(daemon) printed why it stopped") { process.standardError.hasSuffix("\n") }
        #expect(!process.standardOutput.contains("ready"), "\(process.standardOutput)")
        return (status, process.standardError)
    }

    @Test("a config error stops start-up with a message naming the key", arguments: Daemon.allCases)
    func configErrors(daemon: Daemon) async throws {
        let system = try SyncSystem("cfg")
        let cases: [(change: [String: String?], names: String)] = [
            (["heartbeatIntervalMiliseconds": "500"], "heartbeatIntervalMiliseconds"),
            (["missedHeartbeats": "0"], "missedHeartbeats"),
            (["logLevel": "\"chatty\""], "logLevel"),
            (["heartbeatIntervalMilliseconds": "\"fast\""], "heartbeatIntervalMilliseconds"),
            (["pairingKeyFile": nil], "pairingKeyFile"),
        ]
        for (change, key) in cases {
            try write(daemon, system, change)
            let (status, stderr) = try await refusedStart(daemon, system)
            #expect(status != 0, "\(daemon) with \(change) exited 0")
            #expect(stderr.contains(key), "\(daemon) with \(change): \(stderr)")
            #expect(stderr.contains(daemon == .phoned ? system.phonedConfigPath : system.watchdConfigPath))
        }
        let address = daemon == .phoned ? "listen" : "phoneAddress"
        try write(daemon, system, [address: "\"nowhere\""])
        let (status, stderr) = try await refusedStart(daemon, system)
        #expect(status != 0)
        #expect(stderr.contains(address), "\(stderr)")
    }

    @Test("a world-readable or missing pairing key file refuses start-up naming the file", arguments: Daemon.allCases)
    func pairingKeyFile(daemon: Daemon) async throws {
        let system = try SyncSystem("key")
        #expect(chmod(system.keyPath, 0o644) == 0)
        var (status, stderr) = try await refusedStart(daemon, system)
        #expect(status != 0)
        #expect(stderr.contains(system.keyPath) && stderr.contains("644"), "\(stderr)")

        let missing = system.directory.appending("no-such.key")
        try write(daemon, system, ["pairingKeyFile": SyncSystem.json(missing)])
        (status, stderr) = try await refusedStart(daemon, system)
        #expect(status != 0)
        #expect(stderr.contains(missing) && stderr.contains("does not exist"), "\(stderr)")
    }

    @Test("SIGTERM: both daemons exit 0 (SIGHUP is ignored), and restart on their state", arguments: [false, true])
    func gracefulStop(linked: Bool) async throws {
        let system = try SyncSystem("term")
        if linked {
            try await system.startBoth()
        } else {
            try await system.startPhoned()
            try await system.startWatchd()
        }
        // SIGHUP is logged and ignored (nothing is re-read at run time): both keep serving.
        system.phoned?.send(SIGHUP)
        system.watchd?.send(SIGHUP)
        try await system.eventually("both logged the ignored SIGHUP") {
            system.phonedLog.contains("SIGHUP ignored") && system.watchdLog.contains("SIGHUP ignored")
        }
        #expect(try await system.phonectl("status").exitCode == 0)
        #expect(try await system.watchctl("status").exitCode == 0)

        #expect(try await system.stopPhoned() == 0, "\(system.transcript)")
        if linked {
            // phoned said goodbye on the link rather than vanishing.
            try await system.eventually("watchd saw phoned shut down") {
                system.watchdLog.contains("shuttingDown")
            }
        }
        #expect(try await system.stopWatchd() == 0, "\(system.transcript)")
        // The pipes may hand over the last lines just after the exit.
        try await system.eventually("both logged the graceful stop") {
            system.phonedLog.contains("msg=stopping signal=SIGTERM")
                && system.watchdLog.contains("msg=stopping signal=SIGTERM")
        }
        // Both come back on the same state.
        try await system.startBoth()
    }
}
