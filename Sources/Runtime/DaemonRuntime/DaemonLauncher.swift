import DaemonConfiguration
import Foundation
import POSIX

/// What `DaemonLauncher` runs: a daemon whose whole life happens on one event loop.
package protocol LaunchedDaemon: AnyObject, Sendable {
    var loop: EventLoop { get }
    /// Runs the start-up sequence on the loop; returns the readiness line (printed on stdout).
    func start() throws -> String
    /// Graceful shutdown on the loop: the daemon's node finishes what is in hand, stops taking
    /// work, tells the peer, closes the link and exits.
    func stop(signal: String)
}

/// The `main` both daemons share: `--config FILE` / `--help` / `--print-config-table` (the
/// Markdown table docs/OPERATIONS.md shows) / `--print-config KEY` (one value as loaded, for
/// scripts that must find a daemon's files without parsing its config), strict config loading (exit 78 on a bad file, naming
/// the key), one daemon per state directory (`StateDirectoryLock`; a second exits 78), signals taken with `sigwait` (SIGTERM/SIGINT stop gracefully and exit
/// 0; SIGHUP is logged and ignored), the readiness line on stdout, then the loop runs forever.
package enum DaemonLauncher {
    /// Parses the command line, loads the configuration, builds and starts the daemon; never returns.
    package static func main<Configuration: ConfigRecord, Daemon: LaunchedDaemon>(
        name: String, usage: String, defaultConfig: String, configuration _: Configuration.Type,
        logLevel: (Configuration) -> LogLevel, stateDirectory: (Configuration) -> String,
        make: (Configuration, Logger) throws -> Daemon
    ) -> Never {
        // Before any thread exists (see SignalWatcher): every thread inherits the block.
        SignalWatcher.block()
        CurrentProcess.limitRetainedHeap()
        var configPath = defaultConfig
        var printedKey: String?
        var arguments = CurrentProcess.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "-h", "--help":
                print(usage)
                exit(0)
            case "--config":
                guard let value = arguments.popFirst() else { fail("--config needs a file\n\(usage)", status: 64) }
                configPath = value
            case "--print-config-table":
                print(Configuration.markdownTable)
                exit(0)
            case "--print-config":
                guard let key = arguments.popFirst() else { fail("--print-config needs a key\n\(usage)", status: 64) }
                printedKey = key
            default:
                fail("unknown argument \(argument)\n\(usage)", status: 64)
            }
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(path: configPath)
        } catch {
            fail("\(error)", status: 78)
        }
        if let printedKey {
            guard let value = configuration.value(of: printedKey) else {
                fail("--print-config: \(name) has no config key \"\(printedKey)\"", status: 64)
            }
            print(value)
            exit(0)
        }
        ignoreSIGPIPE()
        let logger = Logger(component: name, minimumLevel: logLevel(configuration))
        let daemon: Daemon
        do {
            // Before the daemon reads or sweeps anything: a second one on the same state stops here.
            try StateDirectoryLock.acquire(stateDirectory(configuration), daemon: name)
            daemon = try make(configuration, logger)
        } catch {
            fail("\(error)", status: 78)
        }
        let signals = SignalWatcher(loop: daemon.loop) { signal in
            guard signal != SignalWatcher.hangUp else {
                logger.notice("SIGHUP ignored: \(name) re-reads nothing at run time; restart it to apply changes")
                return
            }
            daemon.stop(signal: SignalWatcher.name(of: signal))
        }
        daemon.loop.execute {
            do {
                let line = try daemon.start()
                FileHandle.standardOutput.write(Data("\(line)\n".utf8))
                logger.info("ready")
            } catch {
                FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
                exit(1)
            }
        }
        releaseFreeMemory(every: 60, logger: logger)
        // The main thread has nothing left to do; the loop and signal threads carry on.
        signals.waitForever()
    }

    /// Carries out an engine's actions in order. A failed durable write stops the daemon (exit 75):
    /// after a failed fsync nothing is known about the file, and start-up recovers from disk.
    package static func performDurably<Action>(
        _ actions: [Action], logger: Logger, _ perform: (Action) throws -> Void
    ) {
        for action in actions {
            do {
                try perform(action)
            } catch {
                logger.error("durable write failed; exiting to recover from disk", ["reason": "\(error)"])
                exit(75)
            }
        }
    }

    /// Gives the heap's free pages back to the system every `seconds`, on a thread of its own.
    /// glibc keeps what a thread's arena freed below its top for good (only the top is trimmed on
    /// its own): a long-lived phoned held 27 MB in 8 arenas with 8 MB in use, and its RSS climbed
    /// with it (docs/CHAOS.md, the endurance test). A trim of that phoned took about 30 ms, too
    /// long a pause for the loop.
    private static func releaseFreeMemory(every seconds: UInt32, logger: Logger) {
        do {
            try SystemThread.start {
                while true {
                    sleep(seconds)
                    CurrentProcess.releaseFreeMemory()
                }
            }.detach()
        } catch {
            logger.warning("free memory is not given back periodically", ["reason": "\(error)"])
        }
    }

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
        exit(status)
    }
}
