import LinkProtocol
import Testing

@Suite("Handshake: refusals")
struct HandshakeRefusalTests {
    typealias Samples = HandshakeSamples

    /// The actions of a side that detects `code`: the error frame to the peer, then the close.
    static func refusal(_ code: LinkErrorCode, _ message: String) -> [Handshake.Action] {
        [.send(.error(code: code, reason: message)), .close(reason: code, message: message)]
    }

    /// A listener that has received the sample hello, and the challenge it sent.
    static func listenerAwaitingProof(nonce: [UInt8] = Samples.listenerNonce) -> (Handshake, [UInt8]) {
        var listener = Samples.phoneListener()
        _ = listener.handle(.started(nonce: nonce))
        let actions = listener.handle(
            .frameReceived(
                .hello(
                    version: Handshake.protocolVersion, role: .watch, instance: Samples.watchInstance,
                    nonce: Samples.dialerNonce))
        )
        guard case .send(.challenge(_, _, _, _, let proof)) = actions.first else { return (listener, []) }
        return (listener, proof)
    }

    @Test("a wrong key is detected by the dialer, which tells the listener; both close with authenticationFailed")
    func wrongKey() {
        var pipe = HandshakePipe(
            dialer: Samples.watchDialer(key: Array("other key".utf8)), listener: Samples.phoneListener())
        pipe.run()
        let message = "the phone's proof did not verify: the pairing keys differ, or the proof was replayed"
        #expect(pipe.dialer.state == .closed(.authenticationFailed))
        #expect(pipe.actions[.dialer]?.suffix(2) == Self.refusal(.authenticationFailed, message)[...])
        #expect(pipe.listener.state == .closed(.authenticationFailed))
        #expect(
            pipe.actions[.listener]?.last
                == .close(reason: .authenticationFailed, message: "the peer closed the link: \(message)")
        )
        #expect(pipe.wire.map(\.frame.kind) == [.hello, .challenge, .error])
        #expect(pipe.dialer.peer == nil && pipe.listener.peer == nil)
    }

    @Test("a peer of the previous protocol version is refused by the listener with both versions named")
    func versionMismatch() {
        var pipe = HandshakePipe(dialer: Samples.watchDialer(version: 3), listener: Samples.phoneListener())
        pipe.run()
        let message = "peer speaks protocol 3, this side speaks 4"
        #expect(
            pipe.actions[.listener] == [.scheduleDeadline(after: .seconds(5))]
                + Self.refusal(.unsupportedVersion, message))
        #expect(pipe.dialer.state == .closed(.unsupportedVersion))
        #expect(
            pipe.actions[.dialer]?.last
                == .close(reason: .unsupportedVersion, message: "the peer closed the link: \(message)"))
    }

    @Test("a challenge with another version is refused by the dialer")
    func dialerChecksVersion() {
        var dialer = Samples.watchDialer()
        _ = dialer.handle(.started(nonce: Samples.dialerNonce))
        let challenge = LinkFrame.challenge(
            version: 5,
            role: .phone,
            instance: Samples.phoneInstance,
            nonce: Samples.listenerNonce,
            proof: FrameSamples.bytes32(0)
        )
        #expect(
            dialer.handle(.frameReceived(challenge))
                == Self.refusal(.unsupportedVersion, "peer speaks protocol 5, this side speaks 4"))
    }

    @Test("two watches are refused with wrongRole")
    func twoWatches() {
        let listener = Handshake(
            configuration: .init(side: .listener, role: .watch, instance: Samples.phoneInstance),
            authenticator: FakeAuthenticator(key: Samples.key)
        )
        var pipe = HandshakePipe(dialer: Samples.watchDialer(), listener: listener)
        pipe.run()
        let message = "peer says it is a watch, but a watch links only with a phone"
        #expect(pipe.actions[.listener] == [.scheduleDeadline(after: .seconds(5))] + Self.refusal(.wrongRole, message))
        #expect(pipe.dialer.state == .closed(.wrongRole))
        #expect(pipe.wire.map(\.frame.kind) == [.hello, .error])
    }

    @Test("a challenge from another watch is refused by the dialer with wrongRole")
    func dialerChecksRole() {
        var dialer = Samples.watchDialer()
        _ = dialer.handle(.started(nonce: Samples.dialerNonce))
        let challenge = LinkFrame.challenge(
            version: Handshake.protocolVersion,
            role: .watch,
            instance: Samples.phoneInstance,
            nonce: Samples.listenerNonce,
            proof: FrameSamples.bytes32(0)
        )
        #expect(
            dialer.handle(.frameReceived(challenge))
                == Self.refusal(.wrongRole, "peer says it is a watch, but a watch links only with a phone")
        )
    }

    @Test("the listener's own proof reflected back as the dialer's proof is rejected")
    func reflectedProof() throws {
        var (listener, listenerProof) = Self.listenerAwaitingProof()
        try #require(listenerProof.count == 32)
        #expect(
            listener.handle(.frameReceived(.proof(listenerProof)))
                == Self.refusal(
                    .authenticationFailed,
                    "the watch's proof did not verify: the pairing keys differ, or the proof was replayed or reflected"
                )
        )
        #expect(listener.peer == nil)
    }

    @Test("a dialer proof recorded from an earlier session is rejected by a listener with a fresh nonce")
    func replayedProof() throws {
        var recorded = HandshakePipe(dialer: Samples.watchDialer(), listener: Samples.phoneListener())
        recorded.run()
        let hello = try #require(recorded.wire.first { $0.frame.kind == .hello }?.frame)
        let proof = try #require(recorded.wire.first { $0.frame.kind == .proof }?.frame)

        // The same listener nonce would accept the recording: the fresh nonce is what defeats the replay.
        var sameNonce = Samples.phoneListener()
        _ = sameNonce.handle(.started(nonce: Samples.listenerNonce))
        _ = sameNonce.handle(.frameReceived(hello))
        #expect(
            sameNonce.handle(.frameReceived(proof)).last
                == .authenticated(PeerIdentity(role: .watch, instance: Samples.watchInstance)))

        var fresh = Samples.phoneListener()
        _ = fresh.handle(.started(nonce: FrameSamples.bytes32(0x42)))
        _ = fresh.handle(.frameReceived(hello))
        #expect(
            fresh.handle(.frameReceived(proof))
                == Self.refusal(
                    .authenticationFailed,
                    "the watch's proof did not verify: the pairing keys differ, or the proof was replayed or reflected"
                )
        )
        #expect(fresh.state == .closed(.authenticationFailed))
    }

    @Test(
        "any non-handshake frame before hello is a protocol violation",
        arguments: FrameSamples.everyKind.filter { ![.hello, .error].contains($0.kind) }
    )
    func violationBeforeHello(frame: LinkFrame) {
        var listener = Samples.phoneListener()
        _ = listener.handle(.started(nonce: Samples.listenerNonce))
        #expect(
            listener.handle(.frameReceived(frame))
                == Self.refusal(.protocolViolation, "expected hello during the handshake, received \(frame.kind)")
        )
        #expect(
            listener.handle(
                .frameReceived(
                    .hello(
                        version: Handshake.protocolVersion, role: .watch, instance: Samples.watchInstance,
                        nonce: Samples.dialerNonce)))
                == [])
    }

    @Test("a session frame or a repeated hello while the listener awaits the proof is a protocol violation")
    func violationAwaitingProof() {
        var (listener, _) = Self.listenerAwaitingProof()
        #expect(
            listener.handle(.frameReceived(.context(generation: 1, sender: Samples.phoneInstance, payload: [])))
                == Self.refusal(.protocolViolation, "expected proof during the handshake, received context")
        )
        var (again, _) = Self.listenerAwaitingProof()
        let hello = LinkFrame.hello(
            version: Handshake.protocolVersion, role: .watch, instance: Samples.watchInstance,
            nonce: Samples.dialerNonce)
        #expect(
            again.handle(.frameReceived(hello))
                == Self.refusal(.protocolViolation, "expected proof during the handshake, received hello"))
    }

    @Test("a session frame before welcome is a protocol violation for the dialer")
    func violationBeforeWelcome() throws {
        var dialer = Samples.watchDialer()
        _ = dialer.handle(.started(nonce: Samples.dialerNonce))
        #expect(
            dialer.handle(.frameReceived(.message(id: 1, wantsReply: false, payload: [])))
                == Self.refusal(.protocolViolation, "expected challenge during the handshake, received message")
        )

        var pipe = HandshakePipe(dialer: Samples.watchDialer(), listener: Samples.phoneListener())
        pipe.run()
        let challenge = try #require(pipe.wire.first { $0.frame.kind == .challenge }?.frame)
        var waiting = Samples.watchDialer()
        _ = waiting.handle(.started(nonce: Samples.dialerNonce))
        #expect(waiting.handle(.frameReceived(challenge)).count == 1)
        #expect(waiting.state == .awaitingWelcome(peer: PeerIdentity(role: .phone, instance: Samples.phoneInstance)))
        #expect(
            waiting.handle(.frameReceived(.appState(.foreground)))
                == Self.refusal(.protocolViolation, "expected welcome during the handshake, received appState")
        )
    }

    @Test("a deadline before completion fails with handshakeTimeout, in every waiting state")
    func deadlineBeforeCompletion() {
        let message = "handshake did not complete within 5.0 seconds"
        var listener = Samples.phoneListener()
        _ = listener.handle(.started(nonce: Samples.listenerNonce))
        #expect(listener.handle(.deadlinePassed) == Self.refusal(.handshakeTimeout, message))
        #expect(listener.state == .closed(.handshakeTimeout))
        #expect(listener.handle(.deadlinePassed) == [])

        var (awaitingProof, _) = Self.listenerAwaitingProof()
        #expect(awaitingProof.handle(.deadlinePassed) == Self.refusal(.handshakeTimeout, message))

        var dialer = Samples.watchDialer()
        _ = dialer.handle(.started(nonce: Samples.dialerNonce))
        #expect(dialer.handle(.deadlinePassed) == Self.refusal(.handshakeTimeout, message))
    }

    @Test("an error frame from the peer closes with its code and is not answered")
    func peerError() {
        var dialer = Samples.watchDialer()
        _ = dialer.handle(.started(nonce: Samples.dialerNonce))
        #expect(
            dialer.handle(.frameReceived(.error(code: .tooManyConnections, reason: "already linked to a watch")))
                == [.close(reason: .tooManyConnections, message: "the peer closed the link: already linked to a watch")]
        )
        #expect(dialer.state == .closed(.tooManyConnections))
        #expect(dialer.handle(.deadlinePassed) == [])
    }

    @Test("nothing is processed after a close")
    func nothingAfterClose() {
        var (listener, _) = Self.listenerAwaitingProof()
        _ = listener.handle(.deadlinePassed)
        #expect(listener.handle(.frameReceived(.proof(FrameSamples.bytes32(1)))) == [])
        #expect(listener.handle(.frameReceived(.error(code: .shuttingDown, reason: "bye"))) == [])
        #expect(listener.state == .closed(.handshakeTimeout))
    }
}
