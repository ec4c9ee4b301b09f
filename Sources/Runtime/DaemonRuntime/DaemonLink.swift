import DaemonConfiguration
import DurableFiles
import LinkProtocol
import LinkRuntime
import POSIX

extension LinkEndpoint {
    /// A daemon's endpoint: its state directory (created with a fresh instance ID when new), the
    /// pairing key from its file (refused when missing, empty or readable by others), and redial
    /// jitter seeded from the process ID.
    package static func forDaemon(
        configuration: LinkConfiguration, stateDirectory: String, pairingKeyFile: String, address: Address,
        loop: EventLoop, journalMaximumBytes: Int
    ) throws -> LinkEndpoint {
        let state = try LinkStateDirectory(root: stateDirectory) { try SecureRandom.bytes(count: 16) }
        let endpoint = try LinkEndpoint(
            configuration: configuration, state: state, pairingKey: try PairingKeyFile.load(pairingKeyFile),
            address: address, loop: loop, seed: UInt64(truncatingIfNeeded: CurrentProcess.id))
        // Kept with the file turned off (0): it still counts events for `metrics`.
        endpoint.journal = EventJournal(
            stateDirectory: stateDirectory, role: configuration.role, instance: state.instance,
            maximumBytes: journalMaximumBytes)
        return endpoint
    }
}

extension SystemdNotifier {
    /// Sends `WATCHDOG=1` every `watchdogInterval` on `loop` while the daemon runs (nothing when
    /// systemd asked for no watchdog). Returns the first timer, for cancelling at shutdown.
    @discardableResult
    package func keepWatchdogFed(on loop: EventLoop, timer: @escaping (TimerID) -> Void) -> TimerID? {
        guard let interval = watchdogInterval else { return nil }
        func arm() -> TimerID {
            loop.scheduleTimer(after: interval) {
                try? self.watchdog()
                timer(arm())
            }
        }
        let first = arm()
        timer(first)
        return first
    }
}

extension LinkSettings {
    /// The link engine's configuration for `role` with these settings (the rest at its defaults).
    package func configuration(role: LinkRole) -> LinkConfiguration {
        var configuration = LinkConfiguration(role: role)
        configuration.heartbeatInterval = heartbeatInterval
        configuration.missedHeartbeatsBeforeUnreachable = missedHeartbeats
        configuration.handshakeTimeout = handshakeTimeout
        configuration.messageReplyTimeout = messageReplyTimeout
        configuration.maximumFrameLength = maximumFrameBytes
        configuration.maximumInboxBytes = fileInboxQuotaBytes
        return configuration
    }
}
