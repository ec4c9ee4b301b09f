// phoned: the phone daemon. Sole writer of the document directory; runs the SyncEngine; listens
// for the watch on the link; serves phonectl on its admin socket.
import DaemonConfiguration
import DaemonRuntime

DaemonLauncher.main(
    name: "phoned",
    usage: """
        Usage: phoned [--config FILE]

        Runs the phone daemon with the configuration in FILE (default: config/phoned.json).
        Prints "phoned ready port=<port> ..." on stdout once it serves the watch and phonectl.
        Stops gracefully on SIGTERM or SIGINT. docs/OPERATIONS.md documents every config key;
        --print-config-table prints that table; --print-config KEY prints one key's value
        as loaded from FILE (a relative path resolved against the current directory).
        """,
    defaultConfig: "config/phoned.json", configuration: PhonedConfiguration.self, logLevel: \.logLevel,
    stateDirectory: \.stateDirectory,
    make: { try PhoneDaemon(configuration: $0, logger: $1) })
