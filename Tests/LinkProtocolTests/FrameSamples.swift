import LinkProtocol

/// Fixed frames and IDs shared by the codec and handshake tests.
enum FrameSamples {
    /// An instance ID whose bytes are `seed, seed+1, …, seed+15`.
    static func instance(_ seed: UInt8) -> InstanceID {
        InstanceID(bytes: (0..<16).map { seed &+ UInt8($0) })!
    }

    /// A 32-byte value whose bytes are all `fill` (nonces and proofs).
    static func bytes32(_ fill: UInt8) -> [UInt8] {
        [UInt8](repeating: fill, count: 32)
    }

    /// At least one frame of every kind, including empty payloads, extreme integers and non-ASCII text.
    static let everyKind: [LinkFrame] = [
        .hello(version: 1, role: .watch, instance: instance(0x10), nonce: bytes32(0xA1)),
        .hello(version: .max, role: .phone, instance: instance(0xF8), nonce: bytes32(0x00)),
        .challenge(version: 1, role: .phone, instance: instance(0x20), nonce: bytes32(0xB2), proof: bytes32(0xC3)),
        .proof(bytes32(0xD4)),
        .welcome,
        .error(code: .unsupportedVersion, reason: "peer speaks protocol 2, this side speaks 1"),
        .error(code: .shuttingDown, reason: ""),
        .error(code: .replaced, reason: "ersetzt durch eine neuere Verbindung ⌚️"),
        .ping(token: 0),
        .ping(token: .max),
        .pong(token: 0x0102_0304_0506_0708),
        .context(generation: 7, sender: instance(0x30), payload: Array("{\"runs\":[]}".utf8)),
        .context(generation: .max, sender: instance(0x31), payload: []),
        .contextAck(generation: 7, sender: instance(0x30)),
        .message(id: 1, wantsReply: true, payload: [0x00, 0xFF, 0x7F]),
        .message(id: 2, wantsReply: false, payload: []),
        .messageReply(id: 1, payload: Array("ok".utf8)),
        .messageReply(id: 3, payload: []),
        .messageDelivered(id: 2),
        .messageFailed(id: 4, code: .deliveryFailed, reason: "no message handler on the watch"),
        .messageFailed(id: 5, code: .payloadTooLarge, reason: ""),
        .messageData(id: 6, wantsReply: true, payload: [0x7B, 0x00, 0xFF]),
        .messageData(id: 7, wantsReply: false, payload: []),
        .userInfo(queue: instance(0x40), sequence: 42, payload: Array(repeating: 0x5A, count: 1000)),
        .userInfo(queue: instance(0x41), sequence: 0, payload: []),
        .userInfoAck(queue: instance(0x40), sequence: 42),
        .userInfoRefused(queue: instance(0x40), sequence: 43, reason: "cannot read it"),
        .launch(payload: Array("workout".utf8)),
        .launch(payload: []),
        .appState(.foreground),
        .appState(.background),
        .watchState(.installed),
        .fileOffer(
            TransferKey(queue: instance(0x50), sequence: 1), size: 5_242_880, digest: bytes32(0xE1),
            metadata: "{\"kind\":\"x\"}"),
        .fileOffer(TransferKey(queue: instance(0x50), sequence: .max), size: 0, digest: bytes32(0), metadata: ""),
        .fileResume(TransferKey(queue: instance(0x50), sequence: 1), offset: 65_536),
        .fileChunk(TransferKey(queue: instance(0x50), sequence: 1), offset: 0, data: [0x00, 0xFF, 0x10]),
        .fileChunk(TransferKey(queue: instance(0x50), sequence: 2), offset: .max, data: []),
        .fileDone(TransferKey(queue: instance(0x50), sequence: 1), code: .delivered, reason: ""),
        .fileDone(TransferKey(queue: instance(0x50), sequence: 3), code: .insufficientSpace, reason: "quota ⌚️"),
        .fileCancel(TransferKey(queue: instance(0x50), sequence: 1)),
        .watchState(WatchState(isPaired: false, isWatchAppInstalled: true, isComplicationEnabled: false)),
    ]

    /// Every frame kind at least once, so adding a kind without a sample fails a test.
    static var coveredKinds: Set<FrameKind> { Set(everyKind.map(\.kind)) }
}
