import LinkProtocol

/// A stand-in for HMAC in pure tests: four FNV-1a hashes of key and transcript, 32 bytes in all.
///
/// Not cryptographic, but any change to the key or the transcript changes the proof, which is all the
/// state machine's tests need.
struct FakeAuthenticator: HandshakeAuthenticator {
    /// The pretend pairing key.
    let key: [UInt8]

    /// The fake MAC of `transcript` under `key`.
    func proof(for transcript: [UInt8]) -> [UInt8] {
        (0..<4).flatMap { lane -> [UInt8] in
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(lane)
            for byte in key + [0xFF] + transcript {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            return (0..<8).map { UInt8(truncatingIfNeeded: hash >> UInt64(8 * $0)) }
        }
    }

    /// Plain comparison; constant time does not matter in a pure test.
    func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool {
        proof == self.proof(for: transcript)
    }
}

/// Fixed identities and nonces for handshake tests.
enum HandshakeSamples {
    static let watchInstance = FrameSamples.instance(0x10)
    static let phoneInstance = FrameSamples.instance(0x80)
    static let dialerNonce = FrameSamples.bytes32(0xD1)
    static let listenerNonce = FrameSamples.bytes32(0x11)
    static let key: [UInt8] = Array("correct horse battery staple".utf8)

    /// The watch dialling, with `key`.
    static func watchDialer(key: [UInt8] = key, version: UInt16 = Handshake.protocolVersion) -> Handshake {
        Handshake(
            configuration: .init(side: .dialer, role: .watch, instance: watchInstance, version: version),
            authenticator: FakeAuthenticator(key: key)
        )
    }

    /// The phone listening, with `key`.
    static func phoneListener(key: [UInt8] = key, version: UInt16 = Handshake.protocolVersion) -> Handshake {
        Handshake(
            configuration: .init(side: .listener, role: .phone, instance: phoneInstance, version: version),
            authenticator: FakeAuthenticator(key: key)
        )
    }
}

/// Two handshakes wired back to back through an in-memory pipe, pumped until neither has anything to do.
struct HandshakePipe {
    /// One end of the pipe.
    enum End: Equatable {
        case dialer
        case listener

        var other: End { self == .dialer ? .listener : .dialer }
    }

    var dialer: Handshake
    var listener: Handshake
    /// Every action each end emitted, in order.
    var actions: [End: [Handshake.Action]] = [.dialer: [], .listener: []]
    /// Frames each end received after it had finished the handshake (the session's share).
    var lateFrames: [End: [LinkFrame]] = [.dialer: [], .listener: []]
    /// Every frame on the wire, in order, with its sender.
    var wire: [(from: End, frame: LinkFrame)] = []

    /// Starts both ends (listener first, as accept precedes the first read) and pumps until quiet.
    mutating func run(
        dialerNonce: [UInt8] = HandshakeSamples.dialerNonce,
        listenerNonce: [UInt8] = HandshakeSamples.listenerNonce
    ) {
        var pending: [(End, Handshake.Event)] = [
            (.listener, .started(nonce: listenerNonce)),
            (.dialer, .started(nonce: dialerNonce)),
        ]
        while !pending.isEmpty {
            let (end, event) = pending.removeFirst()
            if case .frameReceived(let frame) = event, self[end].state.isFinal {
                if case .authenticated = self[end].state { lateFrames[end, default: []].append(frame) }
                continue
            }
            let emitted = self[end].handle(event)
            actions[end, default: []].append(contentsOf: emitted)
            for action in emitted {
                if case .send(let frame) = action {
                    // Round-trip through the codec so the pipe carries exactly what TCP would.
                    var decoder = FrameDecoder()
                    decoder.feed(frame.encoded())
                    let received = (try? decoder.nextFrame()) ?? nil
                    precondition(received == frame, "frame did not survive the codec: \(frame)")
                    wire.append((end, frame))
                    pending.append((end.other, .frameReceived(frame)))
                }
            }
        }
    }

    subscript(end: End) -> Handshake {
        get { end == .dialer ? dialer : listener }
        set {
            if end == .dialer { dialer = newValue } else { listener = newValue }
        }
    }
}

extension Handshake.State {
    /// Whether the handshake reached `authenticated` or `closed`.
    var isFinal: Bool {
        switch self {
        case .authenticated, .closed: true
        default: false
        }
    }
}
