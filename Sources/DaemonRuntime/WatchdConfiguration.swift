/// `watchd`'s settings, read from its JSON config file (`watchd --config FILE`).
///
/// The file is one JSON object; any key not listed here is refused with an error naming it (and a
/// close match, if any), and so is a value of the wrong type or out of range. Relative paths are
/// resolved against the daemon's working directory (`/` under systemd), so prefer absolute ones.
///
/// | Key | Type | Default | Meaning |
/// |---|---|---|---|
/// | `cacheDirectory` | path | required | The watch's plain-file cache, fed only by the phone's state pushes. |
/// | `stateDirectory` | path | required | Where watchd keeps its durable link state (outbox, slots, instance ID). |
/// | `phoneAddress` | `HOST:PORT` | `"127.0.0.1:7420"` | Where phoned listens for the link. |
/// | `pairingKeyFile` | path | required | The shared pairing key; must not be readable by group or others. |
/// | `adminSocket` | path | required | The Unix socket `watchctl` talks to (created with mode 0600). |
/// | `heartbeatIntervalMilliseconds` | integer, 1…86400000 | `500` | How often an idle link sends a heartbeat. |
/// | `missedHeartbeats` | integer, 1…1000 | `4` | Heartbeat intervals without any frame before the link is declared dead. |
/// | `handshakeTimeoutMilliseconds` | integer, 1…86400000 | `5000` | How long a new connection may take to authenticate. |
/// | `messageReplyTimeoutMilliseconds` | integer, 1…86400000 | `5000` | How long a message waits for its reply before failing. |
/// | `maximumFrameBytes` | integer, 128…16777216 | `1048576` | The largest link frame accepted or sent. |
/// | `redialMaximumMilliseconds` | integer, 1…86400000 | `1000` | The longest pause between attempts to reach the phone. |
/// | `logLevel` | `"debug"`, `"info"`, `"notice"`, `"warning"` or `"error"` | `"info"` | The least important log line written. |
/// | `testClockOffsetSeconds` | integer, -86400…86400 | `0` | Test only: shifts the engine's clock (a skewed watch). |
package struct WatchdConfiguration: Sendable, Equatable {
    /// Every key the file may contain.
    package static let keys: Set<String> = [
        "cacheDirectory", "stateDirectory", "phoneAddress", "pairingKeyFile", "adminSocket",
        "heartbeatIntervalMilliseconds", "missedHeartbeats", "handshakeTimeoutMilliseconds",
        "messageReplyTimeoutMilliseconds", "maximumFrameBytes", "redialMaximumMilliseconds", "logLevel",
        "testClockOffsetSeconds",
    ]

    /// `cacheDirectory`, absolute.
    package var cacheDirectory: String
    /// `stateDirectory`, absolute.
    package var stateDirectory: String
    /// `phoneAddress`.
    package var phoneAddress: NetworkAddress
    /// `pairingKeyFile`, absolute.
    package var pairingKeyFile: String
    /// `adminSocket`, absolute.
    package var adminSocket: String
    /// `heartbeatIntervalMilliseconds`.
    package var heartbeatInterval: Duration
    /// `missedHeartbeats`.
    package var missedHeartbeats: Int
    /// `handshakeTimeoutMilliseconds`.
    package var handshakeTimeout: Duration
    /// `messageReplyTimeoutMilliseconds`.
    package var messageReplyTimeout: Duration
    /// `maximumFrameBytes`.
    package var maximumFrameBytes: Int
    /// `redialMaximumMilliseconds`.
    package var redialMaximum: Duration
    /// `logLevel`.
    package var logLevel: LogLevel
    /// `testClockOffsetSeconds`: how far the watch's engine clock is from the machine's.
    package var clockOffset: Duration = .zero

    /// A configuration with every value given, for tests and tools that build one in code.
    package init(
        cacheDirectory: String, stateDirectory: String, phoneAddress: NetworkAddress, pairingKeyFile: String,
        adminSocket: String, heartbeatInterval: Duration, missedHeartbeats: Int, handshakeTimeout: Duration,
        messageReplyTimeout: Duration, maximumFrameBytes: Int, redialMaximum: Duration, logLevel: LogLevel
    ) {
        self.cacheDirectory = cacheDirectory
        self.stateDirectory = stateDirectory
        self.phoneAddress = phoneAddress
        self.pairingKeyFile = pairingKeyFile
        self.adminSocket = adminSocket
        self.heartbeatInterval = heartbeatInterval
        self.missedHeartbeats = missedHeartbeats
        self.handshakeTimeout = handshakeTimeout
        self.messageReplyTimeout = messageReplyTimeout
        self.maximumFrameBytes = maximumFrameBytes
        self.redialMaximum = redialMaximum
        self.logLevel = logLevel
    }

    /// Reads and checks the file at `path`; relative paths in it resolve against `workingDirectory`.
    package static func load(
        path: String, workingDirectory: String? = nil
    ) throws(ConfigError) -> WatchdConfiguration {
        let file = try ConfigFile.load(path: path, knownKeys: keys, workingDirectory: workingDirectory)
        var configuration = WatchdConfiguration(
            cacheDirectory: try file.path("cacheDirectory"),
            stateDirectory: try file.path("stateDirectory"),
            phoneAddress: try file.address("phoneAddress", default: "127.0.0.1:7420"),
            pairingKeyFile: try file.path("pairingKeyFile"),
            adminSocket: try file.path("adminSocket"),
            heartbeatInterval: try file.milliseconds("heartbeatIntervalMilliseconds", default: 500),
            missedHeartbeats: try file.positiveInteger("missedHeartbeats", maximum: 1000, default: 4),
            handshakeTimeout: try file.milliseconds("handshakeTimeoutMilliseconds", default: 5000),
            messageReplyTimeout: try file.milliseconds("messageReplyTimeoutMilliseconds", default: 5000),
            maximumFrameBytes: try file.integer("maximumFrameBytes", in: 128...16_777_216, default: 1_048_576),
            redialMaximum: try file.milliseconds("redialMaximumMilliseconds", default: 1000),
            logLevel: try file.choice("logLevel", default: LogLevel.info))
        configuration.clockOffset = .seconds(
            try file.integer("testClockOffsetSeconds", in: -86_400...86_400, default: 0))
        return configuration
    }
}
