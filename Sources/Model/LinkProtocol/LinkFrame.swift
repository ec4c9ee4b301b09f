/// One frame of the link protocol: the unit both daemons exchange over their single TCP connection.
///
/// On the wire every frame is
///
/// ```
///  0               4     5
///  +---------------+-----+--------------------------+
///  | length L (u32)| kind| body (L - 1 bytes)       |
///  +---------------+-----+--------------------------+
/// ```
///
/// `L` is big-endian and counts the kind byte plus the body, so `L >= 1`; zero is a protocol error.
/// All integers are big-endian; IDs are 16 raw bytes; nonces and proofs are 32 raw bytes; text is UTF-8.
/// "rest" means the remainder of the body, possibly empty.
///
/// | kind | case | body |
/// |---|---|---|
/// | 0x01 | ``hello(version:role:instance:nonce:)`` | version u16, role u8, instance 16, nonce 32 |
/// | 0x02 | ``challenge(version:role:instance:nonce:proof:)`` | version u16, role u8, instance 16, nonce 32, proof 32 |
/// | 0x03 | ``proof(_:)`` | proof 32 |
/// | 0x04 | ``welcome`` | empty |
/// | 0x05 | ``error(code:reason:)`` | code u16, reason UTF-8 (rest) |
/// | 0x06 | ``ping(token:)`` | token u64 |
/// | 0x07 | ``pong(token:)`` | token u64 |
/// | 0x10 | ``context(generation:sender:payload:)`` | generation u64, sender instance 16, payload (rest) |
/// | 0x11 | ``contextAck(generation:sender:)`` | generation u64, sender instance 16 |
/// | 0x20 | ``message(id:wantsReply:payload:)`` | id u64, flags u8 (bit 0 wantsReply), payload (rest) |
/// | 0x21 | ``messageReply(id:payload:)`` | id u64, payload (rest) |
/// | 0x22 | ``messageDelivered(id:)`` | id u64 |
/// | 0x23 | ``messageFailed(id:code:reason:)`` | id u64, code u16, reason UTF-8 (rest) |
/// | 0x24 | ``messageData(id:wantsReply:payload:)`` | id u64, flags u8 (bit 0 wantsReply), payload (rest) |
/// | 0x30 | ``userInfo(queue:sequence:payload:)`` | queue 16, sequence u64, payload (rest) |
/// | 0x31 | ``userInfoAck(queue:sequence:)`` | queue 16, sequence u64 |
/// | 0x32 | ``userInfoRefused(queue:sequence:reason:)`` | queue 16, sequence u64, reason UTF-8 (rest) |
/// | 0x40 | ``launch(payload:)`` | payload (rest) |
/// | 0x50 | ``appState(_:)`` | state u8 (0 background, 1 foreground) |
/// | 0x51 | ``watchState(_:)`` | flags u8 (bit 0 paired, bit 1 app installed, bit 2 complication enabled) |
/// | 0x60 | ``fileOffer(_:size:digest:metadata:)`` | queue 16, sequence u64, size u64, SHA-256 32, metadata UTF-8 (rest) |
/// | 0x61 | ``fileResume(_:offset:)`` | queue 16, sequence u64, offset u64 |
/// | 0x62 | ``fileChunk(_:offset:data:)`` | queue 16, sequence u64, offset u64, data (rest) |
/// | 0x63 | ``fileDone(_:code:reason:)`` | queue 16, sequence u64, code u16, reason UTF-8 (rest) |
/// | 0x64 | ``fileCancel(_:)`` | queue 16, sequence u64 |
///
/// Decoding is strict so that both sides agree on every byte: a fixed-size body with the wrong length,
/// an unknown role, app state, error or failure code, a message flag bit other than bit 0, or invalid
/// UTF-8 text is ``FrameError/malformedBody(kind:reason:)``. Limits (the maximum `L`) live in
/// ``FrameDecoder``.
///
/// Values built locally must respect the sizes above (``nonceByteCount``, ``proofByteCount``); encoding
/// a frame that breaks them is a programming error and stops the process, because sending it would
/// only make the peer close the link.
package enum LinkFrame: Equatable, Sendable {
    /// Handshake step 1, dialer to listener: who the dialer is, and its fresh nonce.
    case hello(version: UInt16, role: LinkRole, instance: InstanceID, nonce: [UInt8])
    /// Handshake step 2, listener to dialer: who the listener is, its fresh nonce, and its proof over both.
    case challenge(version: UInt16, role: LinkRole, instance: InstanceID, nonce: [UInt8], proof: [UInt8])
    /// Handshake step 3, dialer to listener: the dialer's proof over the full transcript.
    case proof([UInt8])
    /// Handshake step 4, listener to dialer: the dialer's proof verified; the link is up.
    case welcome
    /// The sender is closing the link; `reason` is for people, `code` for programs.
    case error(code: LinkErrorCode, reason: String)
    /// Heartbeat: the receiver answers with a pong carrying the same token.
    case ping(token: UInt64)
    /// Heartbeat answer echoing the ping's token.
    case pong(token: UInt64)
    /// The sender's latest application context; generations only grow per sender instance.
    case context(generation: UInt64, sender: InstanceID, payload: [UInt8])
    /// The receiver durably applied (or already had) this generation from this sender instance.
    case contextAck(generation: UInt64, sender: InstanceID)
    /// A best-effort message; `wantsReply` asks for a messageReply instead of a messageDelivered.
    case message(id: UInt64, wantsReply: Bool, payload: [UInt8])
    /// The reply to message `id`.
    case messageReply(id: UInt64, payload: [UInt8])
    /// Message `id` (which wanted no reply) reached a handler.
    case messageDelivered(id: UInt64)
    /// Message `id` could not be handled.
    case messageFailed(id: UInt64, code: MessageFailureCode, reason: String)
    /// A best-effort message of raw bytes (`sendMessageData`): the message channel's ids, answers,
    /// timeout and order, but the payload goes to the app as bytes, never decoded by the link or the
    /// daemon's message handler; a reply to it is raw bytes too.
    case messageData(id: UInt64, wantsReply: Bool, payload: [UInt8])
    /// One durable transfer; receivers dedup by (`queue`, `sequence`), where `queue` identifies the
    /// sender's durable queue.
    case userInfo(queue: InstanceID, sequence: UInt64, payload: [UInt8])
    /// The receiver durably processed transfer `sequence` of `queue`.
    case userInfoAck(queue: InstanceID, sequence: UInt64)
    /// The receiving app could not process the transfer (`payloadUnsupportedTypes`): it is done,
    /// and failed, at the sender.
    case userInfoRefused(queue: InstanceID, sequence: UInt64, reason: String)
    /// Best-effort request to launch the watch app (HealthKit `startWatchApp`), never queued.
    case launch(payload: [UInt8])
    /// The sender's app moved to the foreground or background.
    case appState(AppState)
    /// The watch's pairing, app and complication state (watch → phone, on link-up and on change).
    case watchState(WatchState)
    /// A file the sender wants to transfer: its size, the SHA-256 of the whole file and the app's
    /// metadata. The receiver answers `fileResume` (from where to send) or `fileDone` (refused, or
    /// already delivered).
    case fileOffer(TransferKey, size: UInt64, digest: [UInt8], metadata: String)
    /// The receiver durably holds bytes `[0, offset)` of the file: send from there. Also the ack of
    /// every chunk.
    case fileResume(TransferKey, offset: UInt64)
    /// Bytes `[offset, offset + data.count)` of the file.
    case fileChunk(TransferKey, offset: UInt64, data: [UInt8])
    /// The transfer ended at the receiver: delivered (processed by its app) or refused.
    case fileDone(TransferKey, code: FileOutcomeCode, reason: String)
    /// The sender cancelled the transfer: the receiver drops what it holds of it.
    case fileCancel(TransferKey)

    /// Bytes in a handshake nonce.
    package static let nonceByteCount = 32
    /// Bytes in a handshake proof (an HMAC-SHA256 output).
    package static let proofByteCount = 32
    /// Bytes in a file's digest (SHA-256).
    package static let digestByteCount = 32
    /// Bytes in the length prefix.
    package static let lengthPrefixByteCount = 4

    /// The kind byte this frame is sent with.
    package var kind: FrameKind {
        switch self {
        case .hello: .hello
        case .challenge: .challenge
        case .proof: .proof
        case .welcome: .welcome
        case .error: .error
        case .ping: .ping
        case .pong: .pong
        case .context: .context
        case .contextAck: .contextAck
        case .message: .message
        case .messageReply: .messageReply
        case .messageDelivered: .messageDelivered
        case .messageFailed: .messageFailed
        case .messageData: .messageData
        case .userInfo: .userInfo
        case .userInfoAck: .userInfoAck
        case .userInfoRefused: .userInfoRefused
        case .launch: .launch
        case .appState: .appState
        case .watchState: .watchState
        case .fileOffer: .fileOffer
        case .fileResume: .fileResume
        case .fileChunk: .fileChunk
        case .fileDone: .fileDone
        case .fileCancel: .fileCancel
        }
    }
}
