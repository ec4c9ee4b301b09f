// watchd: the watch daemon. Keeps a plain-file cache fed by the phone's pushes, edits
// optimistically, runs the workout-session coordinator; dials the phone; serves watchctl.
import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime

// Before any thread exists (see SignalWatcher): every thread inherits the block.
SignalWatcher.block()

let usage = """
    Usage: watchd [--config FILE]

    Runs the watch daemon with the configuration in FILE (default: config/watchd.json).
    Prints "watchd ready ..." on stdout once its cache is applied and it serves watchctl.
    Stops gracefully on SIGTERM or SIGINT. docs/OPERATIONS.md documents every config key.
    """

var configPath = "config/watchd.json"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "-h", "--help":
        print(usage)
        exit(0)
    case "--config":
        guard let value = arguments.popFirst() else {
            FileHandle.standardError.write(Data("Error: --config needs a file\n\(usage)\n".utf8))
            exit(64)
        }
        configPath = value
    default:
        FileHandle.standardError.write(Data("Error: unknown argument \(argument)\n\(usage)\n".utf8))
        exit(64)
    }
}

let configuration: WatchdConfiguration
do {
    configuration = try WatchdConfiguration.load(path: configPath)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(78)
}

ignoreSIGPIPE()
let logger = Logger(component: "watchd", minimumLevel: configuration.logLevel)
let daemon: WatchDaemon
do {
    daemon = try WatchDaemon(configuration: configuration, logger: logger)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(78)
}

let signals = SignalWatcher(loop: daemon.loop) { signal in
    guard signal != SIGHUP else {
        logger.notice("SIGHUP ignored: watchd re-reads nothing at run time; restart it to apply config changes")
        return
    }
    logger.notice("stopping", ["signal": SignalWatcher.name(of: signal)])
    daemon.stop()
    daemon.loop.scheduleTimer(after: .milliseconds(200)) { exit(0) }
}

daemon.loop.execute {
    do {
        try daemon.start()
        FileHandle.standardOutput.write(Data("watchd ready phone=\(configuration.phoneAddress) admin=\(configuration.adminSocket) instance=\(daemon.state.instance)\n".utf8))
        logger.info("ready", ["phone": configuration.phoneAddress.description])
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}
// Park the main thread with the signals still blocked. Not dispatchMain(): on Linux it parks the
// main thread in sigsuspend with an empty mask, so a process-directed SIGTERM is taken there (the
// kernel tries the main thread first) and its default action kills the daemon with status 143
// before the SignalWatcher's sigwait ever sees it. Nothing here uses the main dispatch queue.
withExtendedLifetime(signals) {
    while true { pause() }
}
