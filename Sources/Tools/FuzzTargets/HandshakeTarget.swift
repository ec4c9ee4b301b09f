import LinkProtocol
import LinkRuntime

/// One side's `Handshake`, with the real HMAC authenticator, fed any sequence of frames: the honest
/// peer's (same key), an impostor's (another key), frames made from the input, mutated honest frames,
/// its own frames reflected back, and deadlines.
///
/// Properties: the side never accepts the peer without the key — the frame that authenticates the peer
/// (the dialer's proof at the listener, the listener's challenge at the dialer) always came from the
/// honest peer, and the accepted identity is the honest peer's; `authenticated` is emitted at most once
/// and only in that state; a closed handshake does nothing more; every frame it sends survives the codec.
enum HandshakeTarget {
    /// Who made a frame the side under test received.
    private enum Origin { case honest, impostor, input }

    static let key = [UInt8](repeating: 0x5A, count: 32)
    static let otherKey = [UInt8](repeating: 0xA5, count: 32)
    static let instance = InstanceID(bytes: [UInt8](repeating: 0x11, count: 16))!
    static let peerInstance = InstanceID(bytes: [UInt8](repeating: 0x22, count: 16))!

    static func check(_ input: inout FuzzInput, side: HandshakeSide) throws {
        let role: LinkRole = side == .dialer ? .watch : .phone
        let peerSide: HandshakeSide = side == .dialer ? .listener : .dialer
        var subject = Handshake(
            configuration: .init(side: side, role: role, instance: instance), authenticator: try authenticator(key))
        var honest = Handshake(
            configuration: .init(side: peerSide, role: role.counterpart, instance: peerInstance),
            authenticator: try authenticator(key))
        var impostor = Handshake(
            configuration: .init(side: peerSide, role: role.counterpart, instance: peerInstance),
            authenticator: try authenticator(otherKey))
        var fromHonest = honest.handle(.started(nonce: input.fixed(32))).sentFrames
        var fromImpostor = impostor.handle(.started(nonce: input.fixed(32))).sentFrames
        var sent: [LinkFrame] = []
        var authenticatedActions = 0

        func deliver(_ frame: LinkFrame, from origin: Origin) throws {
            let before = subject.state
            let actions = subject.handle(.frameReceived(frame))
            try record(actions)
            // The step where the peer's proof is checked: it must be the honest peer's frame.
            let acceptedPeer: Bool
            switch (before, subject.state) {
            case (.awaitingProof, .authenticated), (.awaitingChallenge, .awaitingWelcome): acceptedPeer = true
            default: acceptedPeer = false
            }
            if acceptedPeer {
                try require(origin == .honest, "accepted the peer on a \(frame.kind) frame from \(origin)")
            }
            if let peer = subject.peer {
                try require(
                    peer == PeerIdentity(role: role.counterpart, instance: peerInstance), "authenticated \(peer)")
            }
        }

        func record(_ actions: [Handshake.Action]) throws {
            for action in actions {
                switch action {
                case .send(let frame):
                    var decoder = FrameDecoder()
                    decoder.feed(frame.encoded())
                    try require(
                        (try? decoder.nextFrame()) == frame, "a sent \(frame.kind) frame did not survive the codec")
                    sent.append(frame)
                    if honest.state.isRunning { fromHonest += honest.handle(.frameReceived(frame)).sentFrames }
                    if impostor.state.isRunning { fromImpostor += impostor.handle(.frameReceived(frame)).sentFrames }
                case .authenticated:
                    authenticatedActions += 1
                    try require(authenticatedActions == 1, "authenticated twice")
                    try require(subject.peer != nil, "an authenticated action outside the authenticated state")
                case .scheduleDeadline, .close:
                    break
                }
            }
        }

        try record(subject.handle(.started(nonce: input.fixed(32))))
        var steps = 0
        while !input.isAtEnd, steps < 64, subject.state.isRunning {
            steps += 1
            switch input.byte() % 6 {
            case 0:
                if !fromHonest.isEmpty { try deliver(fromHonest.removeFirst(), from: .honest) }
            case 1:
                if !fromImpostor.isEmpty { try deliver(fromImpostor.removeFirst(), from: .impostor) }
            case 2:
                let kind = input.byte()
                if let frame = try? LinkFrame.decode(kindByte: kind, body: input.chunk()[...]) {
                    try deliver(frame, from: .input)
                }
            case 3:
                try record(subject.handle(.deadlinePassed))
            case 4:
                let index = Int(input.byte())
                if !sent.isEmpty { try deliver(sent[index % sent.count], from: .input) }
            default:
                // An honest frame with one byte changed: accepted only if it decodes to the same frame.
                guard let original = fromHonest.first else { continue }
                var bytes = original.encoded()
                let position = Int(input.integer(UInt16.self)) % bytes.count
                bytes[position] ^= input.byte()
                var decoder = FrameDecoder()
                decoder.feed(bytes)
                if let frame = (try? decoder.nextFrame()) ?? nil {
                    fromHonest.removeFirst()
                    try deliver(frame, from: frame == original ? .honest : .input)
                }
            }
        }
        if case .closed = subject.state {
            let late =
                subject.handle(.deadlinePassed) + (fromHonest.first.map { subject.handle(.frameReceived($0)) } ?? [])
            try require(late.isEmpty, "a closed handshake acted again: \(late)")
        }
    }

    static func authenticator(_ key: [UInt8]) throws -> PairingKeyAuthenticator {
        do {
            return try PairingKeyAuthenticator(key: key)
        } catch {
            throw PropertyViolation(description: "a 32-byte key was refused: \(error)")
        }
    }
}

extension [Handshake.Action] {
    var sentFrames: [LinkFrame] {
        compactMap { if case .send(let frame) = $0 { frame } else { nil } }
    }
}

extension Handshake.State {
    /// Started and neither authenticated nor closed.
    var isRunning: Bool {
        switch self {
        case .awaitingChallenge, .awaitingWelcome, .awaitingHello, .awaitingProof: true
        case .idle, .authenticated, .closed: false
        }
    }
}
