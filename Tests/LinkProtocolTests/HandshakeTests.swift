import LinkProtocol
import Testing

@Suite("Handshake: successful runs")
struct HandshakeTests {
    typealias Samples = HandshakeSamples

    /// The transcript a run with the sample identities and nonces proves.
    static let transcript = HandshakeTranscript(
        version: Handshake.protocolVersion,
        dialer: HandshakeParticipant(role: .watch, instance: Samples.watchInstance, nonce: Samples.dialerNonce),
        listener: HandshakeParticipant(role: .phone, instance: Samples.phoneInstance, nonce: Samples.listenerNonce)
    )
    static let authenticator = FakeAuthenticator(key: Samples.key)
    static let listenerProof = authenticator.proof(for: transcript.bytes(provenBy: .phone))
    static let dialerProof = authenticator.proof(for: transcript.bytes(provenBy: .watch))

    @Test("the transcript binds version, prover role, both roles, instances and nonces in the documented order")
    func transcriptLayout() {
        let expected: [UInt8] =
            Array("watchsync-link".utf8) + [0x00, 0x04] + [0x01]
            + [0x02] + Samples.watchInstance.bytes + Samples.dialerNonce
            + [0x01] + Samples.phoneInstance.bytes + Samples.listenerNonce
        #expect(Self.transcript.bytes(provenBy: .phone) == expected)
        #expect(Self.listenerProof != Self.dialerProof)
    }

    @Test("each step emits exactly the documented actions")
    func stepByStep() {
        var dialer = Samples.watchDialer()
        var listener = Samples.phoneListener()
        let hello = LinkFrame.hello(
            version: Handshake.protocolVersion, role: .watch, instance: Samples.watchInstance,
            nonce: Samples.dialerNonce)
        let challenge = LinkFrame.challenge(
            version: Handshake.protocolVersion,
            role: .phone,
            instance: Samples.phoneInstance,
            nonce: Samples.listenerNonce,
            proof: Self.listenerProof
        )

        #expect(listener.handle(.started(nonce: Samples.listenerNonce)) == [.scheduleDeadline(after: .seconds(5))])
        #expect(listener.state == .awaitingHello(localNonce: Samples.listenerNonce))

        #expect(
            dialer.handle(.started(nonce: Samples.dialerNonce)) == [
                .scheduleDeadline(after: .seconds(5)), .send(hello),
            ])
        #expect(dialer.state == .awaitingChallenge(localNonce: Samples.dialerNonce))

        #expect(listener.handle(.frameReceived(hello)) == [.send(challenge)])
        #expect(dialer.handle(.frameReceived(challenge)) == [.send(.proof(Self.dialerProof))])
        #expect(dialer.peer == nil)

        let watch = PeerIdentity(role: .watch, instance: Samples.watchInstance)
        #expect(listener.handle(.frameReceived(.proof(Self.dialerProof))) == [.send(.welcome), .authenticated(watch)])
        #expect(listener.state == .authenticated(watch))
        #expect(listener.peer == watch)

        let phone = PeerIdentity(role: .phone, instance: Samples.phoneInstance)
        #expect(dialer.handle(.frameReceived(.welcome)) == [.authenticated(phone)])
        #expect(dialer.peer == phone)
    }

    @Test("two machines back to back authenticate and each reports the other's identity")
    func backToBack() {
        var pipe = HandshakePipe(dialer: Samples.watchDialer(), listener: Samples.phoneListener())
        pipe.run()
        let watch = PeerIdentity(role: .watch, instance: Samples.watchInstance)
        let phone = PeerIdentity(role: .phone, instance: Samples.phoneInstance)
        #expect(pipe.listener.peer == watch)
        #expect(pipe.dialer.peer == phone)
        #expect(pipe.actions[.listener]?.last == .authenticated(watch))
        #expect(pipe.actions[.dialer]?.last == .authenticated(phone))
        #expect(pipe.wire.map(\.frame.kind) == [.hello, .challenge, .proof, .welcome])
    }

    @Test("roles are independent of who dials: a phone may dial a listening watch")
    func phoneDials() {
        let dialer = Handshake(
            configuration: .init(side: .dialer, role: .phone, instance: Samples.phoneInstance),
            authenticator: FakeAuthenticator(key: Samples.key)
        )
        let listener = Handshake(
            configuration: .init(side: .listener, role: .watch, instance: Samples.watchInstance),
            authenticator: FakeAuthenticator(key: Samples.key)
        )
        var pipe = HandshakePipe(dialer: dialer, listener: listener)
        pipe.run()
        #expect(pipe.dialer.peer == PeerIdentity(role: .watch, instance: Samples.watchInstance))
        #expect(pipe.listener.peer == PeerIdentity(role: .phone, instance: Samples.phoneInstance))
    }

    @Test("a configured timeout is the deadline requested at start")
    func configuredTimeout() {
        var dialer = Handshake(
            configuration: .init(
                side: .dialer, role: .watch, instance: Samples.watchInstance, timeout: .milliseconds(1500)),
            authenticator: FakeAuthenticator(key: Samples.key)
        )
        #expect(
            dialer.handle(.started(nonce: Samples.dialerNonce)).first == .scheduleDeadline(after: .milliseconds(1500)))
    }

    @Test("a deadline after completion does nothing, on either side")
    func deadlineAfterCompletion() {
        var pipe = HandshakePipe(dialer: Samples.watchDialer(), listener: Samples.phoneListener())
        pipe.run()
        #expect(pipe.dialer.handle(.deadlinePassed) == [])
        #expect(pipe.listener.handle(.deadlinePassed) == [])
        #expect(pipe.dialer.peer != nil)
        #expect(pipe.listener.peer != nil)
    }
}
