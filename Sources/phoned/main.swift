// phoned: the phone daemon. Sole writer of the document directory; runs the SyncEngine; listens
// for the watch on the link; serves phonectl on its admin socket.
import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime

// Before any thread exists (see SignalWatcher): every thread inherits the block.
SignalWatcher.block()

let usage = """
    Usage: phoned [--config FILE]

    Runs the phone daemon with the configuration in FILE (default: config/phoned.json).
    Prints "phoned ready port=<port> ..." on stdout once it serves the watch and phonectl.
    Stops gracefully on SIGTERM or SIGINT. docs/OPERATIONS.md documents every config key.
    """

var configPath = "config/phoned.json"
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

let configuration: PhonedConfiguration
do {
    configuration = try PhonedConfiguration.load(path: configPath)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(78)
}

ignoreSIGPIPE()
let logger = Logger(component: "phoned", minimumLevel: configuration.logLevel)
let daemon: PhoneDaemon
do {
    daemon = try PhoneDaemon(configuration: configuration, logger: logger)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(78)
}

let signals = SignalWatcher(loop: daemon.loop) { signal in
    guard signal != SIGHUP else {
        logger.notice("SIGHUP ignored: phoned re-reads nothing at run time; restart it to apply config changes")
        return
    }
    logger.notice("stopping", ["signal": SignalWatcher.name(of: signal)])
    daemon.stop()
    // Let the shuttingDown frame and the admin replies flush, then leave.
    daemon.loop.scheduleTimer(after: .milliseconds(200)) { exit(0) }
}

daemon.loop.execute {
    do {
        let port = try daemon.start()
        FileHandle.standardOutput.write(Data("phoned ready port=\(port) admin=\(configuration.adminSocket) instance=\(daemon.state.instance)\n".utf8))
        logger.info("ready", ["port": port, "documents": configuration.documentsDirectory])
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
