// watchd: the watch daemon. Keeps a plain-file cache fed by the phone's pushes, edits
// optimistically, runs the workout-session coordinator; dials the phone; serves watchctl.
import DaemonConfiguration
import DaemonRuntime

DaemonLauncher.main(
    name: "watchd",
    usage: """
        Usage: watchd [--config FILE]

        Runs the watch daemon with the configuration in FILE (default: config/watchd.json).
        Prints "watchd ready ..." on stdout once its cache is applied and it serves watchctl.
        Stops gracefully on SIGTERM or SIGINT. docs/OPERATIONS.md documents every config key;
        --print-config-table prints that table; --print-config KEY prints one key's value
        as loaded from FILE (a relative path resolved against the current directory).
        """,
    defaultConfig: "config/watchd.json", configuration: WatchdConfiguration.self, logLevel: \.logLevel,
    stateDirectory: \.stateDirectory,
    make: { try WatchDaemon(configuration: $0, logger: $1) })
