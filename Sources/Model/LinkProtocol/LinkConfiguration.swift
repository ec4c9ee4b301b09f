/// The limits and timings of one link endpoint. Every limit carries its unit in its name or type.
package struct LinkConfiguration: Sendable, Equatable {
    package var role: LinkRole
    /// Protocol version spoken in the handshake.
    package var protocolVersion: UInt16 = Handshake.protocolVersion
    /// Largest frame (kind + body) accepted; a larger declared length closes the connection.
    package var maximumFrameLength: Int = 1 << 20
    /// A connection that has not authenticated within this is closed with `handshakeTimeout`.
    package var handshakeTimeout: Duration = .seconds(5)
    /// At most this many connections may be mid-handshake at once. A new one at the cap closes the
    /// stalest (see `LinkEngine.connectionOpened`): refusing the newest instead would let a trickle
    /// of idle connections keep the paired peer out for good.
    package var maximumUnauthenticatedConnections: Int = 8
    /// At most this many of them from one source address: one address can never crowd out another.
    package var maximumUnauthenticatedConnectionsPerAddress: Int = 4
    /// How often each side pings an established peer.
    package var heartbeatInterval: Duration = .milliseconds(500)
    /// The peer is declared unreachable (and the connection closed) after this many intervals of silence.
    package var missedHeartbeatsBeforeUnreachable: Int = 4
    /// A message that wants a reply (or a transport ack) fails with `messageReplyTimedOut` after this.
    package var messageReplyTimeout: Duration = .seconds(5)
    /// First redial delay after a failed dial or a lost connection (watch side); doubles up to the maximum.
    package var initialRedialDelay: Duration = .milliseconds(100)
    /// Cap on the redial delay, small so a healed partition reconnects within about a second.
    package var maximumRedialDelay: Duration = .seconds(1)
    /// Transfers sent but not yet acknowledged, at most (flow control for long queues).
    package var transferWindow: Int = 128
    /// WatchConnectivity's limits on payload sizes, in bytes.
    package var maximumContextBytes: Int = 262_144
    package var maximumMessageBytes: Int = 65_536
    package var maximumUserInfoBytes: Int = 65_536
    /// File data in one `fileChunk` frame (less when `maximumFrameLength` is smaller).
    package var fileChunkBytes: Int = 65_536
    /// Chunks of a file on the wire ahead of the receiver's acknowledgement, at most: a large file
    /// never puts more than this in front of a heartbeat, a message or the context.
    package var fileWindowChunks: Int = 4
    /// The receiving inbox's quota: files arriving and files the app has not taken yet, together;
    /// an offer that does not fit is refused with `insufficientSpace`.
    package var maximumInboxBytes: Int = 256 << 20

    package init(role: LinkRole) {
        self.role = role
    }

    /// Silence longer than this closes the connection.
    package var peerSilenceLimit: Duration { heartbeatInterval * missedHeartbeatsBeforeUnreachable }
}

/// A point on the endpoint's monotonic clock: time since an arbitrary origin the shell chose at start.
/// The engine never reads a clock; every event that needs the time carries one of these.
package struct LinkInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var sinceOrigin: Duration

    package init(_ sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    package static func < (lhs: LinkInstant, rhs: LinkInstant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }

    package func advanced(by duration: Duration) -> LinkInstant { LinkInstant(sinceOrigin + duration) }

    package var description: String { "\(sinceOrigin)" }
}

/// Errors reported to the app, named after WatchConnectivity's `WCError` where it has a code for the
/// case (its `WCError.Code` value in brackets); `transferCancelled`, `insufficientSpace` and
/// `unknownTransfer` are this project's own.
package enum LinkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No handshake with the paired peer has ever completed (`sessionNotActivated`, 7004).
    case sessionNotActivated
    /// The counterpart is not reachable now; nothing was queued (`notReachable`, 7007).
    case notReachable
    /// The payload exceeds the channel's limit (`payloadTooLarge`, 7009).
    case payloadTooLarge(size: Int, limit: Int)
    /// No reply or transport ack arrived in time (`messageReplyTimedOut`, 7012).
    case messageReplyTimedOut
    /// The message could not be delivered or handled (`deliveryFailed`, 7014).
    case deliveryFailed(reason: String)
    /// The receiver handled the message but its reply could not be sent (`messageReplyFailed`, 7011).
    case messageReplyFailed(reason: String)
    /// The receiver could not decode the payload (`payloadUnsupportedTypes`, 7010).
    case payloadUnsupportedTypes(reason: String)
    /// The transfer was cancelled (`queue cancel`, `file cancel`) before the peer acknowledged it.
    /// `WCError` has no such code, and WatchConnectivity documents no callback for a cancelled
    /// transfer; here a cancelled file transfer finishes with this error (`fileFinished`), and a
    /// cancelled userInfo transfer is reported as `transferCancelled(sequence:payload:wasSent:)`,
    /// this error naming it in the journal's `transfer.failed` line.
    case transferCancelled
    /// No outstanding transfer has that sequence.
    case unknownTransfer(sequence: UInt64)
    /// The file to transfer cannot be read (`fileAccessDenied`, 7013).
    case fileAccessDenied(reason: String)
    /// The receiver's inbox quota has no room for the file. `WCError`'s nearest code,
    /// `insufficientSpaceForUserInfoTransfer` (7015), is about userInfo transfers, not files.
    case insufficientSpace(reason: String)
    /// The watch reports itself unpaired: the phone sends nothing to it (`deviceNotPaired`, 7005).
    case deviceNotPaired
    /// The watch reports the watch app uninstalled: the phone sends nothing to it
    /// (`watchAppNotInstalled`, 7006).
    case watchAppNotInstalled

    package var description: String {
        switch self {
        case .sessionNotActivated: return "sessionNotActivated: no handshake with the paired peer has completed yet"
        case .notReachable: return "notReachable: the counterpart is not reachable"
        case .payloadTooLarge(let size, let limit):
            return "payloadTooLarge: \(size) bytes exceeds the \(limit)-byte limit"
        case .messageReplyTimedOut: return "messageReplyTimedOut: no reply within the timeout"
        case .deliveryFailed(let reason): return "deliveryFailed: \(reason)"
        case .messageReplyFailed(let reason): return "messageReplyFailed: \(reason)"
        case .payloadUnsupportedTypes(let reason): return "payloadUnsupportedTypes: \(reason)"
        case .transferCancelled: return "transferCancelled"
        case .unknownTransfer(let sequence): return "no outstanding transfer \(sequence)"
        case .fileAccessDenied(let reason): return "fileAccessDenied: \(reason)"
        case .insufficientSpace(let reason): return "insufficientSpace: \(reason)"
        case .deviceNotPaired: return "deviceNotPaired: the watch is not paired"
        case .watchAppNotInstalled: return "watchAppNotInstalled: the watch app is not installed"
        }
    }
}
