import LinkProtocol
import Testing

@Suite("Frame seals: every frame after the handshake carries a tag")
struct FrameSealTests {
    static let transcript = HandshakeTests.transcript
    static let authenticator = FakeAuthenticator(key: HandshakeSamples.key)

    private func linkedPair() -> (LinkPair, ConnectionID) {
        var pair = LinkPair()
        pair.start()
        pair.forget()
        return (pair, ConnectionID(pair.open.sorted().first!))
    }

    /// The phone's view after the watch's bytes arrived: what its app heard and whether it kept the link.
    private func refused(_ pair: LinkPair) -> Bool {
        !pair.phone.isLinked
            && pair.framesSent[.phone]!.contains {
                if case .error(.authenticationFailed, _) = $0 { true } else { false }
            }
            && !pair.notifications(.phone).contains { if case .launchReceived = $0 { true } else { false } }
            && !pair.notifications(.phone).contains { if case .messageReceived = $0 { true } else { false } }
    }

    private static let message = LinkFrame.message(id: 1, wantsReply: false, payload: Array("set 3 done".utf8))

    @Test(
        "a sealed frame is its encoding with the tag counted in the length; it opens once, in order, for its sender only"
    )
    func layout() throws {
        var watch = FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .watch)
        let bare = Self.message.encoded()
        let first = watch.seal(Self.message)
        let second = watch.seal(Self.message)
        #expect(first.count == bare.count + FrameSeal.tagByteCount)
        #expect(Array(first[4..<bare.count]) == Array(bare[4...]))
        #expect(first[0..<4] == [0, 0, 0, UInt8(bare.count - 4 + FrameSeal.tagByteCount)])
        #expect(first != second, "the counter is in the tag")

        var opener = FrameDecoder()
        opener.requireSeal(FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .watch))
        opener.feed(first + second)
        #expect(try opener.nextFrame() == Self.message)
        #expect(try opener.nextFrame() == Self.message)

        // Out of order, or opened as the other side's: refused, and the decoder stays failed.
        var reordered = FrameDecoder()
        reordered.requireSeal(FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .watch))
        reordered.feed(second)
        #expect(throws: FrameError.notAuthentic(frame: 0)) { try reordered.nextFrame() }
        var reflected = FrameDecoder()
        reflected.requireSeal(FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .phone))
        reflected.feed(first)
        #expect(throws: FrameError.notAuthentic(frame: 0)) { try reflected.nextFrame() }
        // Another session (a fresh nonce) does not take this one's frames.
        var other = Self.transcript
        other.dialer.nonce = [UInt8](repeating: 0x42, count: 32)
        var replayed = FrameDecoder()
        replayed.requireSeal(FrameSeal(authenticator: Self.authenticator, transcript: other, sender: .watch))
        replayed.feed(first)
        #expect(throws: FrameError.notAuthentic(frame: 0)) { try replayed.nextFrame() }
    }

    @Test("every bit of a sealed frame is covered: flipping any one is refused")
    func everyBit() {
        var watch = FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .watch)
        let sealed = watch.seal(Self.message)
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x10
            var decoder = FrameDecoder()
            decoder.requireSeal(
                FrameSeal(authenticator: Self.authenticator, transcript: Self.transcript, sender: .watch))
            decoder.feed(altered)
            // A length byte altered may leave the frame incomplete (nil) or too large; never accepted.
            let result = Result { () throws(FrameError) in try decoder.nextFrame() }
            if case .success(let frame?) = result { Issue.record("byte \(index) altered was accepted as \(frame)") }
        }
    }

    @Test(
        "on a live link, a frame altered, replayed, reflected or sent bare closes it with authenticationFailed; the app hears nothing of it"
    )
    func refusedOnTheLink() {
        var (pair, connection) = linkedPair()
        var bytes = pair.wire([Self.message], from: .watch, on: connection)
        bytes[bytes.count - FrameSeal.tagByteCount - 1] ^= 0x01
        pair.handle(.phone, .bytesReceived(connection, bytes, now: pair.now))
        #expect(refused(pair))

        (pair, connection) = linkedPair()
        let sealed = pair.wire([Self.message], from: .watch, on: connection)
        pair.handle(.phone, .bytesReceived(connection, sealed, now: pair.now))
        #expect(
            pair.notifications(.phone).contains(
                .messageReceived(id: 1, payload: Array("set 3 done".utf8), wantsReply: false)))
        pair.forget()
        pair.handle(.phone, .bytesReceived(connection, sealed, now: pair.now))
        #expect(refused(pair), "replayed")

        (pair, connection) = linkedPair()
        let own = pair.wire([.launch(payload: [1])], from: .phone, on: connection)
        pair.handle(.phone, .bytesReceived(connection, own, now: pair.now))
        #expect(refused(pair), "reflected")

        (pair, connection) = linkedPair()
        pair.handle(.phone, .bytesReceived(connection, Self.message.encoded(), now: pair.now))
        #expect(refused(pair), "bare")
    }

    @Test("the handshake's own frames go bare; the engine seals from the first frame after it, in both directions")
    func sealedFromTheFirstSessionFrame() {
        var pair = LinkPair()
        pair.start()
        for side in [LinkPair.Side.phone, .watch] {
            let actions = pair.recorded[side]!
            let sealAt = actions.firstIndex { if case .seal = $0 { true } else { false } }
            let handshakeKinds: Set<FrameKind> = [.hello, .challenge, .proof, .welcome]
            let sends = actions.enumerated().compactMap { index, action -> (Int, FrameKind)? in
                if case .send(_, let frame) = action { (index, frame.kind) } else { nil }
            }
            #expect(sealAt != nil, "\(side) never sealed")
            for (index, kind) in sends {
                #expect(handshakeKinds.contains(kind) == (index < sealAt!), "\(side): \(kind) at \(index)")
            }
        }
        #expect(pair.phone.isLinked && pair.watch.isLinked)
    }
}
