/// `phoned`'s settings, read from its JSON config file (`phoned --config FILE`).
///
/// The file is one JSON object; any key not listed here is refused with an error naming it (and a
/// close match, if any), and so is a value of the wrong type or out of range. Relative paths are
/// resolved against the daemon's working directory (`/` under systemd), so prefer absolute ones.
///
/// | Key | Type | Default | Meaning |
/// |---|---|---|---|
/// | `documentsDirectory` | path | required | The iCloud-Drive-style directory of JSON documents phoned owns. |
/// | `stateDirectory` | path | required | Where phoned keeps its durable link state (outbox, slots, instance ID). |
/// | `listen` | `HOST:PORT` | `"127.0.0.1:7420"` | Where phoned accepts the watch's link connection; port 0 lets the kernel choose. |
/// | `pairingKeyFile` | path | required | The shared pairing key; must not be readable by group or others. |
/// | `adminSocket` | path | required | The Unix socket `phonectl` talks to (created with mode 0600). |
/// | `heartbeatIntervalMilliseconds` | integer, 1…86400000 | `500` | How often an idle link sends a heartbeat. |
/// | `missedHeartbeats` | integer, 1…1000 | `4` | Heartbeat intervals without any frame before the link is declared dead. |
/// | `handshakeTimeoutMilliseconds` | integer, 1…86400000 | `5000` | How long a new connection may take to authenticate. |
/// | `messageReplyTimeoutMilliseconds` | integer, 1…86400000 | `5000` | How long a message waits for its reply before failing. |
/// | `maximumFrameBytes` | integer, 128…16777216 | `1048576` | The largest link frame accepted or sent. |
/// | `maximumPendingHandshakes` | integer, 1…10000 | `8` | Connections allowed mid-handshake at once; at the cap the stalest is closed. |
/// | `maximumPendingHandshakesPerAddress` | integer, 1…10000 | `4` | Of those, at most this many from one source address. |
/// | `recentRunsLimit` | integer, 1…10000 | `25` | How many runs the state push lists as recent, at most. |
/// | `recentRunsWindowHours` | integer, 1…8760 | `24` | How far back a run still counts as recent. |
/// | `logLevel` | `"debug"`, `"info"`, `"notice"`, `"warning"` or `"error"` | `"info"` | The least important log line written. |
package struct PhonedConfiguration: Sendable, Equatable {
    /// Every key the file may contain.
    package static let keys: Set<String> = [
        "documentsDirectory", "stateDirectory", "listen", "pairingKeyFile", "adminSocket",
        "heartbeatIntervalMilliseconds", "missedHeartbeats", "handshakeTimeoutMilliseconds",
        "messageReplyTimeoutMilliseconds", "maximumFrameBytes", "maximumPendingHandshakes",
        "maximumPendingHandshakesPerAddress", "recentRunsLimit", "recentRunsWindowHours", "logLevel",
    ]

    /// `documentsDirectory`, absolute.
    package var documentsDirectory: String
    /// `stateDirectory`, absolute.
    package var stateDirectory: String
    /// `listen`.
    package var listen: NetworkAddress
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
    /// `maximumPendingHandshakes`.
    package var maximumPendingHandshakes: Int
    /// `maximumPendingHandshakesPerAddress`.
    package var maximumPendingHandshakesPerAddress: Int
    /// `recentRunsLimit`.
    package var recentRunsLimit: Int
    /// `recentRunsWindowHours`, as a duration.
    package var recentRunsWindow: Duration
    /// `logLevel`.
    package var logLevel: LogLevel

    /// A configuration with every value given, for tests and tools that build one in code.
    package init(
        documentsDirectory: String, stateDirectory: String, listen: NetworkAddress, pairingKeyFile: String,
        adminSocket: String, heartbeatInterval: Duration, missedHeartbeats: Int, handshakeTimeout: Duration,
        messageReplyTimeout: Duration, maximumFrameBytes: Int, maximumPendingHandshakes: Int = 8,
        maximumPendingHandshakesPerAddress: Int = 4, recentRunsLimit: Int, recentRunsWindow: Duration,
        logLevel: LogLevel
    ) {
        self.documentsDirectory = documentsDirectory
        self.stateDirectory = stateDirectory
        self.listen = listen
        self.pairingKeyFile = pairingKeyFile
        self.adminSocket = adminSocket
        self.heartbeatInterval = heartbeatInterval
        self.missedHeartbeats = missedHeartbeats
        self.handshakeTimeout = handshakeTimeout
        self.messageReplyTimeout = messageReplyTimeout
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumPendingHandshakes = maximumPendingHandshakes
        self.maximumPendingHandshakesPerAddress = maximumPendingHandshakesPerAddress
        self.recentRunsLimit = recentRunsLimit
        self.recentRunsWindow = recentRunsWindow
        self.logLevel = logLevel
    }

    /// Reads and checks the file at `path`; relative paths in it resolve against `workingDirectory`.
    package static func load(
        path: String, workingDirectory: String? = nil
    ) throws(ConfigError) -> PhonedConfiguration {
        let file = try ConfigFile.load(path: path, knownKeys: keys, workingDirectory: workingDirectory)
        return PhonedConfiguration(
            documentsDirectory: try file.path("documentsDirectory"),
            stateDirectory: try file.path("stateDirectory"),
            listen: try file.address("listen", default: "127.0.0.1:7420"),
            pairingKeyFile: try file.path("pairingKeyFile"),
            adminSocket: try file.path("adminSocket"),
            heartbeatInterval: try file.milliseconds("heartbeatIntervalMilliseconds", default: 500),
            missedHeartbeats: try file.positiveInteger("missedHeartbeats", maximum: 1000, default: 4),
            handshakeTimeout: try file.milliseconds("handshakeTimeoutMilliseconds", default: 5000),
            messageReplyTimeout: try file.milliseconds("messageReplyTimeoutMilliseconds", default: 5000),
            maximumFrameBytes: try file.integer("maximumFrameBytes", in: 128...16_777_216, default: 1_048_576),
            maximumPendingHandshakes: try file.positiveInteger("maximumPendingHandshakes", maximum: 10_000, default: 8),
            maximumPendingHandshakesPerAddress: try file.positiveInteger(
                "maximumPendingHandshakesPerAddress", maximum: 10_000, default: 4),
            recentRunsLimit: try file.positiveInteger("recentRunsLimit", maximum: 10_000, default: 25),
            recentRunsWindow: .seconds(
                3600 * (try file.positiveInteger("recentRunsWindowHours", maximum: 8760, default: 24))),
            logLevel: try file.choice("logLevel", default: LogLevel.info))
    }
}
