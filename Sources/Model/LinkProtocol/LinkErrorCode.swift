/// Why a link is being closed: the code of an error frame (kind 0x05), two bytes big-endian on the wire.
///
/// The same codes label ``Handshake/Action/close(reason:message:)`` so the shell logs one vocabulary
/// whichever side noticed the problem. A code this build does not know makes the error frame malformed.
package enum LinkErrorCode: UInt16, Sendable, CustomStringConvertible {
    /// The peer sent something this protocol does not allow here: a malformed frame, an unknown kind,
    /// or a frame out of order (for example anything but the handshake before it completed).
    case protocolViolation = 1
    /// The peer declared a frame longer than this side's maximum frame length.
    case frameTooLarge = 2
    /// The peer speaks another protocol version.
    case unsupportedVersion = 3
    /// The peer claims the same role as this side (two phones or two watches).
    case wrongRole = 4
    /// A handshake proof did not verify: the two sides hold different pairing keys, or someone replayed
    /// or reflected a proof.
    case authenticationFailed = 5
    /// The handshake did not complete before its deadline.
    case handshakeTimeout = 6
    /// This side already serves as many connections as it accepts.
    case tooManyConnections = 7
    /// A newer authenticated connection from the same peer replaced this one.
    case replaced = 8
    /// This side is shutting down.
    case shuttingDown = 9
    /// The peer missed too many heartbeats; it is unreachable even though TCP still looks open.
    case heartbeatTimeout = 10

    /// The case name, for logs.
    package var description: String {
        switch self {
        case .protocolViolation: "protocolViolation"
        case .frameTooLarge: "frameTooLarge"
        case .unsupportedVersion: "unsupportedVersion"
        case .wrongRole: "wrongRole"
        case .authenticationFailed: "authenticationFailed"
        case .handshakeTimeout: "handshakeTimeout"
        case .tooManyConnections: "tooManyConnections"
        case .replaced: "replaced"
        case .shuttingDown: "shuttingDown"
        case .heartbeatTimeout: "heartbeatTimeout"
        }
    }
}

/// Why the receiver could not handle a message: the code of a messageFailed frame (kind 0x23), two bytes
/// big-endian. Names follow WatchConnectivity's `WCError`. An unknown code makes the frame malformed.
package enum MessageFailureCode: UInt16, Sendable, CustomStringConvertible {
    /// The receiver has no handler for messages (WCError `deliveryFailed`).
    case deliveryFailed = 1
    /// The receiver handled the message but its reply could not be sent: over the message limit
    /// (WCError `messageReplyFailed`).
    case messageReplyFailed = 2
    /// The receiver could not decode the payload (WCError `payloadUnsupportedTypes`).
    case payloadUnsupportedTypes = 3
    /// The payload exceeds what the receiver accepts (WCError `payloadTooLarge`); the reason is the
    /// receiver's limit in decimal bytes.
    case payloadTooLarge = 4

    /// The case name, for logs.
    package var description: String {
        switch self {
        case .deliveryFailed: "deliveryFailed"
        case .messageReplyFailed: "messageReplyFailed"
        case .payloadUnsupportedTypes: "payloadUnsupportedTypes"
        case .payloadTooLarge: "payloadTooLarge"
        }
    }
}
