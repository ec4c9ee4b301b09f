/// The one-byte kind that follows a frame's length and says how to read its body.
///
/// Kinds are grouped by channel in the high nibble: 0x0_ link control and handshake, 0x1_ context,
/// 0x2_ messages, 0x3_ userInfo transfers, 0x4_ launch, 0x5_ app and watch state, 0x6_ files. Any other byte is refused with
/// ``FrameError/unknownKind(_:)``.
package enum FrameKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Handshake step 1, dialer to listener.
    case hello = 0x01
    /// Handshake step 2, listener to dialer.
    case challenge = 0x02
    /// Handshake step 3, dialer to listener.
    case proof = 0x03
    /// Handshake step 4, listener to dialer: the link is authenticated.
    case welcome = 0x04
    /// The sender is closing the link and says why.
    case error = 0x05
    /// Heartbeat request.
    case ping = 0x06
    /// Heartbeat answer.
    case pong = 0x07
    /// Application context (the latest complete state).
    case context = 0x10
    /// The receiver durably applied a context generation.
    case contextAck = 0x11
    /// A best-effort message.
    case message = 0x20
    /// The reply to a message that asked for one.
    case messageReply = 0x21
    /// Transport acknowledgement of a message that asked for no reply.
    case messageDelivered = 0x22
    /// The receiver could not handle a message.
    case messageFailed = 0x23
    /// A best-effort message of raw bytes (sendMessageData).
    case messageData = 0x24
    /// One durable userInfo transfer.
    case userInfo = 0x30
    /// The receiver durably processed a userInfo transfer.
    case userInfoAck = 0x31
    /// The receiving app could not process a userInfo transfer (it cannot decode it): done, failed.
    case userInfoRefused = 0x32
    /// Best-effort request to launch the watch app.
    case launch = 0x40
    /// The sender's app moved to the foreground or background.
    case appState = 0x50
    /// The watch's pairing, app and complication state.
    case watchState = 0x51
    /// A file transfer's offer (size, digest, metadata).
    case fileOffer = 0x60
    /// Where to send a file from: the receiver's durable offset (and chunk ack).
    case fileResume = 0x61
    /// A piece of a file.
    case fileChunk = 0x62
    /// A file transfer ended at the receiver.
    case fileDone = 0x63
    /// The sender cancelled a file transfer.
    case fileCancel = 0x64

    /// The case name, for logs and error messages.
    package var description: String {
        switch self {
        case .hello: "hello"
        case .challenge: "challenge"
        case .proof: "proof"
        case .welcome: "welcome"
        case .error: "error"
        case .ping: "ping"
        case .pong: "pong"
        case .context: "context"
        case .contextAck: "contextAck"
        case .message: "message"
        case .messageReply: "messageReply"
        case .messageDelivered: "messageDelivered"
        case .messageFailed: "messageFailed"
        case .messageData: "messageData"
        case .userInfo: "userInfo"
        case .userInfoAck: "userInfoAck"
        case .userInfoRefused: "userInfoRefused"
        case .launch: "launch"
        case .appState: "appState"
        case .watchState: "watchState"
        case .fileOffer: "fileOffer"
        case .fileResume: "fileResume"
        case .fileChunk: "fileChunk"
        case .fileDone: "fileDone"
        case .fileCancel: "fileCancel"
        }
    }
}
