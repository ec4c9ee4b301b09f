/// `watchd`'s settings, read from its JSON config file (`watchd --config FILE`); `keys` declares
/// each one (docs/OPERATIONS.md's table is generated from it by `watchd --print-config-table`).
package struct WatchdConfiguration: ConfigRecord, Equatable {
    package var cacheDirectory = ""
    package var stateDirectory = ""
    package var phoneAddress = NetworkAddress(host: "", port: 0)
    package var pairingKeyFile = ""
    package var adminSocket = ""
    package var link = LinkSettings()
    package var redialMaximum = Duration.zero
    package var logLevel = LogLevel.info
    /// How far the watch's engine clock is from the machine's.
    package var clockOffset = Duration.zero

    package init() {}

    package static var keys: [ConfigKey<Self>] {
        [
            .path(
                "cacheDirectory", \.cacheDirectory,
                doc: "The watch's plain-file cache, fed only by the phone's state pushes."),
            .path(
                "stateDirectory", \.stateDirectory,
                doc: "Where watchd keeps its durable link state (outbox, slots, instance ID)."),
            .address(
                "phoneAddress", \.phoneAddress, default: "127.0.0.1:7420", doc: "Where phoned listens for the link."),
            .path(
                "pairingKeyFile", \.pairingKeyFile,
                doc: "The shared pairing key; must not be readable by group or others."),
            .path(
                "adminSocket", \.adminSocket, doc: "The Unix socket `watchctl` talks to (created with mode 0600)."),
        ] + LinkSettings.keys(at: \.link) + [
            .milliseconds(
                "redialMaximumMilliseconds", \.redialMaximum, default: 1000,
                doc: "The longest pause between attempts to reach the phone."),
            .choice("logLevel", \.logLevel, default: LogLevel.info, doc: "The least important log line written."),
            .duration(
                "testClockOffsetSeconds", \.clockOffset, unit: .seconds(1), in: -86_400...86_400, default: 0,
                doc: "Test only: shifts the wall clock watchd's engine stamps edits with, to model a skewed watch."),
        ]
    }
}
