/// Why bytes from the peer are not a valid frame. Every case is the peer's fault, never a local bug.
///
/// After any of these the stream cannot be resynchronised: the shell sends an error frame with
/// ``linkErrorCode`` and ``description`` if it still can, closes the connection and logs the reason.
package enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The length prefix was zero; every frame has at least its kind byte.
    case zeroLength
    /// The length prefix exceeds the configured maximum; refused from the 4 length bytes alone.
    case frameTooLarge(declared: UInt32, maximum: Int)
    /// The kind byte is not one of ``FrameKind``.
    case unknownKind(UInt8)
    /// The body does not have the layout its kind requires; `reason` says what was wrong.
    case malformedBody(kind: FrameKind, reason: String)
    /// After the handshake: the frame's tag does not verify (``FrameSeal``), so it was altered,
    /// injected, replayed or reordered on the way; `frame` counts the peer's sealed frames before it.
    case notAuthentic(frame: UInt64)

    /// The code to put in the error frame sent before closing.
    package var linkErrorCode: LinkErrorCode {
        switch self {
        case .frameTooLarge: .frameTooLarge
        case .notAuthentic: .authenticationFailed
        case .zeroLength, .unknownKind, .malformedBody: .protocolViolation
        }
    }

    /// One sentence a person can act on, suitable as the error frame's reason and for the log.
    package var description: String {
        switch self {
        case .zeroLength:
            "frame declared length 0; a frame holds at least its kind byte"
        case .frameTooLarge(let declared, let maximum):
            "frame declared length \(declared) bytes, over the maximum of \(maximum) bytes"
        case .unknownKind(let kind):
            "unknown frame kind 0x\(String(kind, radix: 16))"
        case .malformedBody(let kind, let reason):
            "malformed \(kind) frame: \(reason)"
        case .notAuthentic(let frame):
            "frame \(frame) of the session failed authentication: altered, injected or replayed on the way"
        }
    }
}
