/// `phoned`'s settings, read from its JSON config file (`phoned --config FILE`); `keys` declares
/// each one (docs/OPERATIONS.md's table is generated from it by `phoned --print-config-table`).
package struct PhonedConfiguration: ConfigRecord, Equatable {
    package var documentsDirectory = ""
    package var stateDirectory = ""
    package var listen = NetworkAddress(host: "", port: 0)
    package var pairingKeyFile = ""
    package var adminSocket = ""
    package var link = LinkSettings()
    package var maximumPendingHandshakes = 0
    package var maximumPendingHandshakesPerAddress = 0
    package var recentRunsLimit = 0
    package var recentRunsWindow = Duration.zero
    package var complicationTransfersPerDay = 0
    package var logLevel = LogLevel.info

    package init() {}

    package static var keys: [ConfigKey<Self>] {
        [
            .path(
                "documentsDirectory", \.documentsDirectory,
                doc: "The iCloud-Drive-style directory of JSON documents phoned owns."),
            .path(
                "stateDirectory", \.stateDirectory,
                doc: "Where phoned keeps its durable link state (outbox, slots, instance ID) and settings."),
            .address(
                "listen", \.listen, default: "127.0.0.1:7420",
                doc: "Where phoned accepts the watch's link connection; port 0 lets the kernel choose"
                    + " (the readiness line says which)."),
            .path(
                "pairingKeyFile", \.pairingKeyFile,
                doc: "The shared pairing key; must not be readable by group or others."),
            .path(
                "adminSocket", \.adminSocket, doc: "The Unix socket `phonectl` talks to (created with mode 0600)."),
        ] + LinkSettings.keys(at: \.link) + [
            .integer(
                "maximumPendingHandshakes", \.maximumPendingHandshakes, in: 1...10_000, default: 8,
                doc: "Connections allowed mid-handshake at once; at the cap the stalest (silent first, then"
                    + " oldest) is closed, so idle connections can never lock the watch out."),
            .integer(
                "maximumPendingHandshakesPerAddress", \.maximumPendingHandshakesPerAddress, in: 1...10_000,
                default: 4,
                doc: "Of those, at most this many from one source address; a source at its share closes its own"
                    + " stalest."),
            .integer(
                "recentRunsLimit", \.recentRunsLimit, in: 1...10_000, default: 25,
                doc: "How many runs the state push lists as recent, at most."),
            .duration(
                "recentRunsWindowHours", \.recentRunsWindow, unit: .seconds(3600), in: 1...8760, default: 24,
                doc: "How far back a run still counts as recent."),
            .integer(
                "complicationTransfersPerDay", \.complicationTransfersPerDay, in: 0...10_000, default: 50,
                doc:
                    "transferCurrentComplicationUserInfo's daily budget; past it a complication goes as ordinary userInfo."
            ),
            .choice("logLevel", \.logLevel, default: LogLevel.info, doc: "The least important log line written."),
        ]
    }
}
