import LinkProtocol
import LinkRuntime
import Testing

@Suite("Handshake with the real pairing-key authenticator and CSPRNG nonces")
struct HandshakeWithPairingKeyTests {
    /// Runs a watch dialer against a phone listener with the given keys until neither has anything to do.
    ///
    /// Returns every action of each side. Frames cross through the codec, as they would over TCP.
    static func run(dialerKey: [UInt8], listenerKey: [UInt8]) throws -> (
        dialer: [Handshake.Action], listener: [Handshake.Action]
    ) {
        let watch = try #require(InstanceID(bytes: SecureRandom.bytes(count: InstanceID.byteCount)))
        let phone = try #require(InstanceID(bytes: SecureRandom.bytes(count: InstanceID.byteCount)))
        var sides = [
            Handshake(
                configuration: .init(side: .dialer, role: .watch, instance: watch),
                authenticator: try PairingKeyAuthenticator(key: dialerKey)
            ),
            Handshake(
                configuration: .init(side: .listener, role: .phone, instance: phone),
                authenticator: try PairingKeyAuthenticator(key: listenerKey)
            ),
        ]
        var log: [[Handshake.Action]] = [[], []]
        var pending: [(Int, Handshake.Event)] = [
            (1, .started(nonce: try SecureRandom.bytes(count: LinkFrame.nonceByteCount))),
            (0, .started(nonce: try SecureRandom.bytes(count: LinkFrame.nonceByteCount))),
        ]
        while !pending.isEmpty {
            let (side, event) = pending.removeFirst()
            if case .frameReceived = event, sides[side].peer != nil { continue }
            let actions = sides[side].handle(event)
            log[side] += actions
            for case .send(let frame) in actions {
                var decoder = FrameDecoder()
                decoder.feed(frame.encoded())
                pending.append((1 - side, .frameReceived(try #require(try decoder.nextFrame()))))
            }
        }
        return (log[0], log[1])
    }

    @Test("the same pairing key authenticates both sides")
    func sameKey() throws {
        let key = try SecureRandom.bytes(count: 32)
        let (dialer, listener) = try Self.run(dialerKey: key, listenerKey: key)
        let dialerPeer = try #require(dialer.last)
        let listenerPeer = try #require(listener.last)
        guard case .authenticated(let phone) = dialerPeer, case .authenticated(let watch) = listenerPeer else {
            Issue.record("not authenticated: \(dialer) / \(listener)")
            return
        }
        #expect(phone.role == .phone)
        #expect(watch.role == .watch)
    }

    @Test("different pairing keys fail with authenticationFailed on both sides")
    func differentKeys() throws {
        let (dialer, listener) = try Self.run(
            dialerKey: SecureRandom.bytes(count: 32),
            listenerKey: SecureRandom.bytes(count: 32)
        )
        guard case .close(let dialerReason, _) = try #require(dialer.last),
            case .close(let listenerReason, _) = try #require(listener.last)
        else {
            Issue.record("expected both sides to close: \(dialer) / \(listener)")
            return
        }
        #expect(dialerReason == .authenticationFailed)
        #expect(listenerReason == .authenticationFailed)
        #expect(!dialer.contains { if case .authenticated = $0 { true } else { false } })
        #expect(!listener.contains { if case .authenticated = $0 { true } else { false } })
    }
}
