import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import TestSupport
import Testing

/// Writes `json` to a fresh file and returns the directory (keep it alive) and the file's path.
private func configFile(_ json: String, name: String = "phoned.json") throws -> (TemporaryDirectory, String) {
    let directory = try TemporaryDirectory("config")
    let path = directory.appending(name)
    try Data(json.utf8).write(to: URL(fileURLWithPath: path))
    return (directory, path)
}

/// The four keys phoned requires, as absolute paths, followed by `extra` (which starts with a comma).
private func phonedJSON(_ extra: String = "") -> String {
    """
    {"documentsDirectory": "/srv/docs", "stateDirectory": "/var/lib/phoned",
     "pairingKeyFile": "/etc/watchsync/pairing.key", "adminSocket": "/run/phoned/admin.sock"\(extra)}
    """
}

@Suite("Config files: strict JSON read through each key's one declaration")
struct ConfigFileTests {
    @Test("a phoned file with only the required keys gets every documented default")
    func phonedDefaults() throws {
        let (directory, path) = try configFile(phonedJSON())
        _ = directory
        let configuration = try PhonedConfiguration.load(path: path)
        var expected = PhonedConfiguration()
        expected.documentsDirectory = "/srv/docs"
        expected.stateDirectory = "/var/lib/phoned"
        expected.listen = NetworkAddress(host: "127.0.0.1", port: 7420)
        expected.pairingKeyFile = "/etc/watchsync/pairing.key"
        expected.adminSocket = "/run/phoned/admin.sock"
        expected.link.heartbeatInterval = .milliseconds(500)
        expected.link.missedHeartbeats = 4
        expected.link.handshakeTimeout = .seconds(5)
        expected.link.messageReplyTimeout = .seconds(5)
        expected.link.maximumFrameBytes = 1_048_576
        expected.link.journalMaximumBytes = 4_194_304
        expected.link.fileInboxQuotaBytes = 268_435_456
        expected.link.receivedFilesQuotaBytes = 268_435_456
        expected.maximumPendingHandshakes = 8
        expected.maximumPendingHandshakesPerAddress = 4
        expected.recentRunsLimit = 25
        expected.recentRunsWindow = .seconds(24 * 3600)
        expected.complicationTransfersPerDay = 50
        expected.logLevel = .info
        #expect(configuration == expected)
    }

    @Test("every watchd key is read, with its unit")
    func watchdAllKeys() throws {
        let (directory, path) = try configFile(
            """
            {"cacheDirectory": "/c", "stateDirectory": "/s", "phoneAddress": "[::1]:0", "pairingKeyFile": "/k",
             "adminSocket": "/a.sock", "heartbeatIntervalMilliseconds": 100, "missedHeartbeats": 3,
             "handshakeTimeoutMilliseconds": 2000, "messageReplyTimeoutMilliseconds": 3000,
             "maximumFrameBytes": 128, "journalMaximumBytes": 0, "redialMaximumMilliseconds": 250, "logLevel": "debug",
             "receivedFilesQuotaBytes": 1048576,
             "testClockOffsetSeconds": -3600}
            """, name: "watchd.json")
        _ = directory
        var expected = WatchdConfiguration()
        expected.cacheDirectory = "/c"
        expected.stateDirectory = "/s"
        expected.phoneAddress = NetworkAddress(host: "::1", port: 0)
        expected.pairingKeyFile = "/k"
        expected.adminSocket = "/a.sock"
        expected.link.heartbeatInterval = .milliseconds(100)
        expected.link.missedHeartbeats = 3
        expected.link.handshakeTimeout = .seconds(2)
        expected.link.messageReplyTimeout = .seconds(3)
        expected.link.maximumFrameBytes = 128
        expected.link.fileInboxQuotaBytes = 268_435_456
        expected.link.receivedFilesQuotaBytes = 1_048_576
        expected.redialMaximum = .milliseconds(250)
        expected.logLevel = .debug
        expected.clockOffset = .seconds(-3600)
        #expect(try WatchdConfiguration.load(path: path) == expected)
    }

    @Test("an unknown key is refused, naming the key, the file and the key it resembles")
    func unknownKey() throws {
        let (directory, path) = try configFile(phonedJSON(#", "listn": "127.0.0.1:1""#))
        _ = directory
        let expected = ConfigError.unknownKey(key: "listn", path: path, suggestion: "listen")
        #expect(throws: expected) { try PhonedConfiguration.load(path: path) }
        #expect(expected.description == "config file \(path): unknown key \"listn\" (did you mean \"listen\"?)")
        // A watchd key in phoned's file is just as unknown, with nothing close to suggest.
        let (other, otherPath) = try configFile(phonedJSON(#", "cacheDirectory": "/c""#))
        _ = other
        #expect(throws: ConfigError.unknownKey(key: "cacheDirectory", path: otherPath, suggestion: nil)) {
            try PhonedConfiguration.load(path: otherPath)
        }
    }

    @Test("a key given twice is refused, naming it, whatever the second spelling; strings holding braces do not count")
    func duplicateKey() throws {
        let (directory, path) = try configFile(phonedJSON(#", "logLevel": "info", "logLevel": "debug""#))
        _ = directory
        let expected = ConfigError.duplicateKey(key: "logLevel", path: path)
        #expect(throws: expected) { try PhonedConfiguration.load(path: path) }
        #expect(expected.description == "config file \(path): key \"logLevel\" is given twice; keep one")
        let (escaped, escapedPath) = try configFile(phonedJSON(#", "logLevel": "info", "log\u004cevel": "debug""#))
        _ = escaped
        #expect(throws: ConfigError.duplicateKey(key: "logLevel", path: escapedPath)) {
            try PhonedConfiguration.load(path: escapedPath)
        }
        // Keys inside a string value, and escaped quotes, are not keys of the object.
        let (fine, finePath) = try configFile(
            phonedJSON(#", "listen": "127.0.0.1:1", "logLevel": "info""#).replacingOccurrences(
                of: #""/run/phoned/admin.sock""#, with: #""/run/{\"listen\": 1, }.sock""#))
        _ = fine
        #expect(
            ConfigFile.firstRepeatedTopLevelKey(Array(try String(contentsOfFile: finePath, encoding: .utf8).utf8))
                == nil)
        #expect(ConfigFile.firstRepeatedTopLevelKey(Array(#"{"a": {"b": 1, "b": 2}, "c": [{"a": 1}]}"#.utf8)) == nil)
    }

    @Test("an unknown key is reported even when a required key is also missing")
    func unknownKeyFirst() throws {
        let (directory, path) = try configFile(#"{"documentDirectory": "/d"}"#)
        _ = directory
        #expect(throws: ConfigError.unknownKey(key: "documentDirectory", path: path, suggestion: "documentsDirectory"))
        {
            try PhonedConfiguration.load(path: path)
        }
    }

    @Test(
        "a wrong type is refused, naming key, file, expected form and what was found",
        arguments: [
            (#""missedHeartbeats": "4""#, "missedHeartbeats", "an integer from 1 to 1000", #""4""#),
            (#""missedHeartbeats": true"#, "missedHeartbeats", "an integer from 1 to 1000", "true"),
            (#""missedHeartbeats": 1.5"#, "missedHeartbeats", "an integer from 1 to 1000", "1.5"),
            (#""missedHeartbeats": null"#, "missedHeartbeats", "an integer from 1 to 1000", "null"),
            (
                #""logLevel": "verbose""#, "logLevel", #"one of "debug", "info", "notice", "warning", "error""#,
                #""verbose""#
            ),
            (#""logLevel": 3"#, "logLevel", #"one of "debug", "info", "notice", "warning", "error""#, "3"),
            (
                #""heartbeatIntervalMilliseconds": "500ms""#, "heartbeatIntervalMilliseconds",
                "a whole number of milliseconds from 1 to 86400000", #""500ms""#
            ),
            (#""listen": 7420"#, "listen", ConfigFileTests.addressForm, "7420"),
            (#""listen": "example.com:7420""#, "listen", ConfigFileTests.addressForm, #""example.com:7420""#),
            (#""adminSocket": """#, "adminSocket", "a path (a non-empty string)", #""""#),
            (#""adminSocket": ["/a"]"#, "adminSocket", "a path (a non-empty string)", "an array"),
        ])
    func wrongType(entry: String, key: String, expected: String, found: String) throws {
        let adminSocket = key == "adminSocket" ? "" : #", "adminSocket": "/a.sock""#
        let json = #"{"documentsDirectory": "/d", "stateDirectory": "/s", "pairingKeyFile": "/k""# + adminSocket
        let (directory, path) = try configFile(json + ", " + entry + "}")
        _ = directory
        let error = ConfigError.invalidValue(key: key, path: path, expected: expected, found: found)
        #expect(throws: error) { try PhonedConfiguration.load(path: path) }
        #expect(error.description.contains(path) && error.description.contains("\"\(key)\""))
    }

    static let addressForm =
        "an address \"HOST:PORT\" with a numeric IPv4 host, localhost or a bracketed IPv6 host"
        + " (\"127.0.0.1:7420\", \"localhost:0\", \"[::1]:7420\") and a port from 0 to 65535"

    @Test(
        "out-of-range numbers are refused with the allowed range",
        arguments: [
            ("maximumFrameBytes", 127, "an integer from 128 to 16777216"),
            ("maximumFrameBytes", 16_777_217, "an integer from 128 to 16777216"),
            ("missedHeartbeats", 0, "an integer from 1 to 1000"),
            ("recentRunsLimit", -1, "an integer from 1 to 10000"),
            ("recentRunsWindowHours", 8761, "an integer from 1 to 8760"),
            ("handshakeTimeoutMilliseconds", 0, "a whole number of milliseconds from 1 to 86400000"),
        ])
    func outOfRange(key: String, value: Int, expected: String) throws {
        let (directory, path) = try configFile(phonedJSON(", \"\(key)\": \(value)"))
        _ = directory
        #expect(throws: ConfigError.invalidValue(key: key, path: path, expected: expected, found: String(value))) {
            try PhonedConfiguration.load(path: path)
        }
    }

    @Test("the range limits themselves are accepted")
    func rangeLimits() throws {
        let (directory, path) = try configFile(phonedJSON(#", "maximumFrameBytes": 16777216, "listen": "localhost:0""#))
        _ = directory
        let configuration = try PhonedConfiguration.load(path: path)
        #expect(configuration.link.maximumFrameBytes == 16_777_216)
        #expect(configuration.listen == NetworkAddress(host: "localhost", port: 0))
    }

    @Test("a missing required key is refused, naming key, file and what it must hold")
    func missingRequiredKey() throws {
        let json = #"{"documentsDirectory": "/d", "stateDirectory": "/s", "adminSocket": "/a"}"#
        let (directory, path) = try configFile(json)
        _ = directory
        let error = ConfigError.missingKey(key: "pairingKeyFile", path: path, expected: "a path (a non-empty string)")
        #expect(throws: error) { try PhonedConfiguration.load(path: path) }
        #expect(
            error.description
                == "config file \(path): required key \"pairingKeyFile\" is missing; it must be a path (a non-empty string)"
        )
    }

    @Test("relative paths resolve against the working directory; absolute ones are kept")
    func relativePaths() throws {
        let (directory, path) = try configFile(
            #"{"documentsDirectory": "docs", "stateDirectory": "./state/./phoned/", "pairingKeyFile": "/k", "adminSocket": "../run/a.sock"}"#
        )
        _ = directory
        let configuration = try PhonedConfiguration.load(path: path, workingDirectory: "/srv/watchsync")
        #expect(configuration.documentsDirectory == "/srv/watchsync/docs")
        #expect(configuration.stateDirectory == "/srv/watchsync/state/phoned")
        #expect(configuration.pairingKeyFile == "/k")
        #expect(configuration.adminSocket == "/srv/watchsync/../run/a.sock")
        let fromCurrentDirectory = try PhonedConfiguration.load(path: path)
        #expect(fromCurrentDirectory.documentsDirectory == FileManager.default.currentDirectoryPath + "/docs")
    }

    @Test("a missing file, invalid JSON and a non-object are refused, naming the file")
    func unusableFiles() throws {
        let directory = try TemporaryDirectory("config")
        let missing = directory.appending("absent.json")
        #expect(throws: ConfigError.missingFile(path: missing)) { try PhonedConfiguration.load(path: missing) }
        #expect(ConfigError.missingFile(path: missing).description == "config file \(missing) does not exist")

        let (broken, brokenPath) = try configFile(#"{"listen" "127.0.0.1:1"}"#)
        _ = broken
        #expect {
            try PhonedConfiguration.load(path: brokenPath)
        } throws: { error in
            guard case ConfigError.notJSON(let path, _) = error else { return false }
            return path == brokenPath && "\(error)".hasPrefix("config file \(brokenPath) is not valid JSON")
        }

        let (array, arrayPath) = try configFile("[1, 2]")
        _ = array
        #expect(throws: ConfigError.notAnObject(path: arrayPath)) { try PhonedConfiguration.load(path: arrayPath) }

        // A directory opens, then fails to read.
        #expect(throws: ConfigError.unreadable(path: directory.path, errno: EISDIR)) {
            try PhonedConfiguration.load(path: directory.path)
        }
    }

    @Test("a configuration written from the declarations loads back unchanged, every key included")
    func writtenFileRoundTrips() throws {
        var phoned = PhonedConfiguration.defaults
        phoned.documentsDirectory = "/d"
        phoned.stateDirectory = "/s"
        phoned.pairingKeyFile = "/k"
        phoned.adminSocket = "/a.sock"
        phoned.recentRunsWindow = .seconds(2 * 3600)
        let (directory, path) = try configFile(phoned.fileText)
        _ = directory
        #expect(try PhonedConfiguration.load(path: path) == phoned)
        #expect(Set(phoned.entries.keys) == Set(PhonedConfiguration.keys.map(\.name)))
        #expect(phoned.entries["recentRunsWindowHours"] == "2")

        var watchd = WatchdConfiguration.defaults
        (watchd.cacheDirectory, watchd.stateDirectory, watchd.pairingKeyFile) = ("/c", "/s", "/k")
        watchd.adminSocket = "/a.sock"
        watchd.clockOffset = .seconds(-5)
        watchd.link.heartbeatInterval = .milliseconds(250)
        let (other, otherPath) = try configFile(watchd.fileText, name: "watchd.json")
        _ = other
        #expect(try WatchdConfiguration.load(path: otherPath) == watchd)
        #expect(watchd.entries["heartbeatIntervalMilliseconds"] == "250")
    }

    @Test(
        "docs/OPERATIONS.md shows the tables the declarations generate (regenerate: scripts/config-table)",
        arguments: ["phoned", "watchd"])
    func operationsTables(daemon: String) throws {
        let table = daemon == "phoned" ? PhonedConfiguration.markdownTable : WatchdConfiguration.markdownTable
        let document = try String(contentsOfFile: "\(SourceTree.root)/docs/OPERATIONS.md", encoding: .utf8)
        let section = try #require(document.range(of: "\n### \(daemon)\n\n"), "no ### \(daemon) section")
        let rest = document[section.upperBound...]
        let checkedIn = String(rest).components(separatedBy: "\n\n")[0]
        #expect(checkedIn == table, "docs/OPERATIONS.md's \(daemon) table is stale: run scripts/config-table")
    }

    @Test(
        "phoned and watchd --print-config-table print the generated table and exit 0", arguments: ["phoned", "watchd"])
    func printConfigTable(daemon: String) async throws {
        let directory = try TemporaryDirectory("table")
        let result = try await CommandResult.run(
            BuildProducts.executable(daemon), ["--print-config-table"], scratch: directory.appending("run"))
        let table = daemon == "phoned" ? PhonedConfiguration.markdownTable : WatchdConfiguration.markdownTable
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.standardOutput == table + "\n")
    }

    @Test("phoned --print-config KEY prints one value as loaded; an unknown key is a usage error")
    func printConfigValue() async throws {
        let (directory, path) = try configFile(phonedJSON(#", "maximumFrameBytes": 4096"#))
        for (key, expected) in [("stateDirectory", "/var/lib/phoned"), ("maximumFrameBytes", "4096")] {
            let result = try await CommandResult.run(
                BuildProducts.executable("phoned"), ["--config", path, "--print-config", key],
                scratch: directory.appending("run"))
            #expect(result.exitCode == 0 && result.standardOutput == expected + "\n", "\(result)")
        }
        let unknown = try await CommandResult.run(
            BuildProducts.executable("phoned"), ["--config", path, "--print-config", "stateDir"],
            scratch: directory.appending("run"))
        #expect(unknown.exitCode == 64 && unknown.standardError.contains("stateDir"), "\(unknown)")
    }

    @Test(
        "HOST:PORT addresses: IPv4 dotted, localhost, bracketed IPv6; port 0 allowed",
        arguments: [
            ("127.0.0.1:7420", NetworkAddress(host: "127.0.0.1", port: 7420)),
            ("0.0.0.0:0", NetworkAddress(host: "0.0.0.0", port: 0)),
            ("localhost:65535", NetworkAddress(host: "localhost", port: 65535)),
            ("[::1]:7420", NetworkAddress(host: "::1", port: 7420)),
            ("[fe80::1]:1", NetworkAddress(host: "fe80::1", port: 1)),
        ])
    func validAddresses(text: String, address: NetworkAddress) {
        #expect(NetworkAddress(parsing: text) == address)
        #expect(address.description == text)
    }

    @Test(
        "malformed addresses are refused",
        arguments: [
            "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80", "::1:7420", "[::1]7420",
            "[127.0.0.1]:80", "256.0.0.1:80", "1.2.3:80", "example.com:80", ":80", "localhost:８０",
        ])
    func invalidAddresses(text: String) {
        #expect(NetworkAddress(parsing: text) == nil)
    }
}
