import LinkProtocol
import Testing

@Suite("LinkFrame encoding and body decoding")
struct LinkFrameCodingTests {
    @Test("the samples cover every frame kind")
    func samplesCoverEveryKind() {
        #expect(FrameSamples.coveredKinds == Set(FrameKind.allCases))
    }

    @Test("every frame round-trips through its wire bytes", arguments: FrameSamples.everyKind)
    func roundTrip(frame: LinkFrame) throws {
        let wire = frame.encoded()
        var decoder = FrameDecoder()
        decoder.feed(wire)
        #expect(try decoder.nextFrame() == frame)
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("the length prefix counts the kind byte and the body, big-endian", arguments: FrameSamples.everyKind)
    func lengthPrefix(frame: LinkFrame) {
        let wire = frame.encoded()
        let declared = wire.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(declared == wire.count - 4)
        #expect(wire[4] == frame.kind.rawValue)
    }

    @Test("a ping is laid out byte by byte as documented")
    func pingLayout() {
        #expect(
            LinkFrame.ping(token: 0x0102_0304_0506_0708).encoded()
                == [0, 0, 0, 9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]
        )
    }

    @Test("a hello is laid out byte by byte as documented")
    func helloLayout() {
        let wire = LinkFrame.hello(
            version: 0x0102,
            role: .watch,
            instance: FrameSamples.instance(0x10),
            nonce: FrameSamples.bytes32(0xA1)
        ).encoded()
        let expected: [UInt8] =
            [0, 0, 0, 52, 0x01, 0x01, 0x02, 0x02] + (0x10...0x1F).map { UInt8($0) } + FrameSamples.bytes32(0xA1)
        #expect(wire == expected)
    }

    @Test("a message sets only flag bit 0 for wantsReply")
    func messageFlags() {
        #expect(LinkFrame.message(id: 9, wantsReply: true, payload: []).encoded()[13] == 0x01)
        #expect(LinkFrame.message(id: 9, wantsReply: false, payload: []).encoded()[13] == 0x00)
    }

    @Test(
        "a fixed-size body one byte short or long is malformed",
        arguments: [
            LinkFrame.hello(
                version: 1, role: .watch, instance: FrameSamples.instance(1), nonce: FrameSamples.bytes32(2)),
            .challenge(
                version: 1,
                role: .phone,
                instance: FrameSamples.instance(1),
                nonce: FrameSamples.bytes32(2),
                proof: FrameSamples.bytes32(3)
            ),
            .proof(FrameSamples.bytes32(4)),
            .ping(token: 5),
            .pong(token: 6),
            .contextAck(generation: 7, sender: FrameSamples.instance(8)),
            .messageDelivered(id: 9),
            .userInfoAck(queue: FrameSamples.instance(10), sequence: 11),
            .appState(.foreground),
        ]
    )
    func wrongFixedSize(frame: LinkFrame) throws {
        let body = Array(frame.encoded().dropFirst(5))
        let kind = frame.kind
        for wrong in [Array(body.dropLast()), body + [0]] {
            #expect {
                try LinkFrame.decode(kindByte: kind.rawValue, body: wrong[...])
            } throws: { error in
                guard case .malformedBody(let reportedKind, _) = error as? FrameError else { return false }
                return reportedKind == kind
            }
        }
    }

    @Test("a welcome with a body is malformed")
    func welcomeWithBody() {
        #expect(throws: FrameError.malformedBody(kind: .welcome, reason: "1 unexpected trailing bytes")) {
            try LinkFrame.decode(kindByte: 0x04, body: [0][...])
        }
    }

    @Test("out-of-range enumerations and reserved bits are malformed, naming the field")
    func invalidFieldValues() {
        let instance = FrameSamples.instance(0).bytes
        let nonce = FrameSamples.bytes32(1)
        let cases: [(UInt8, [UInt8], FrameError)] = [
            (0x01, [0, 1, 3] + instance + nonce, .malformedBody(kind: .hello, reason: "unknown role 3")),
            (0x01, [0, 1, 0] + instance + nonce, .malformedBody(kind: .hello, reason: "unknown role 0")),
            (0x05, [0, 0], .malformedBody(kind: .error, reason: "unknown error code 0")),
            (0x05, [0xFF, 0xFF, 0x41], .malformedBody(kind: .error, reason: "unknown error code 65535")),
            (0x05, [0, 1, 0xC3, 0x28], .malformedBody(kind: .error, reason: "reason is not valid UTF-8")),
            (
                0x20, [0, 0, 0, 0, 0, 0, 0, 1, 0x02],
                .malformedBody(kind: .message, reason: "reserved flag bits set in 0x2")
            ),
            (
                0x23, [0, 0, 0, 0, 0, 0, 0, 1, 0, 99],
                .malformedBody(kind: .messageFailed, reason: "unknown failure code 99")
            ),
            (
                0x23, [0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0xFF],
                .malformedBody(kind: .messageFailed, reason: "reason is not valid UTF-8")
            ),
            (0x50, [2], .malformedBody(kind: .appState, reason: "unknown app state 2")),
            (
                0x24, [0, 0, 0, 0, 0, 0, 0, 1, 0x80],
                .malformedBody(kind: .messageData, reason: "reserved flag bits set in 0x80")
            ),
            (0x51, [0x08], .malformedBody(kind: .watchState, reason: "reserved flag bits set in 0x8")),
            (
                0x63, instance + [0, 0, 0, 0, 0, 0, 0, 1, 0, 9],
                .malformedBody(kind: .fileDone, reason: "unknown file outcome code 9")
            ),
            (
                0x60, instance + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + nonce + [0xC3, 0x28],
                .malformedBody(kind: .fileOffer, reason: "metadata is not valid UTF-8")
            ),
            (
                0x60, instance + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [1, 2],
                .malformedBody(kind: .fileOffer, reason: "body ends inside digest (needs 32 bytes, 2 left)")
            ),
            (0x51, [], .malformedBody(kind: .watchState, reason: "body ends inside flags (needs 1 bytes, 0 left)")),
            (
                0x10, [0, 0, 0],
                .malformedBody(kind: .context, reason: "body ends inside generation (needs 8 bytes, 3 left)")
            ),
            (
                0x02, [0, 1, 1] + instance + nonce + [1],
                .malformedBody(kind: .challenge, reason: "body ends inside proof (needs 32 bytes, 1 left)")
            ),
        ]
        for (kind, body, expected) in cases {
            #expect(throws: expected) { try LinkFrame.decode(kindByte: kind, body: body[...]) }
        }
    }

    @Test(
        "unknown kind bytes are refused",
        arguments: [UInt8(0x00), 0x08, 0x0F, 0x12, 0x25, 0x33, 0x41, 0x52, 0x65, 0xFF])
    func unknownKind(kind: UInt8) {
        #expect(throws: FrameError.unknownKind(kind)) { try LinkFrame.decode(kindByte: kind, body: [][...]) }
    }

    @Test("frame errors map to the link error code sent before closing")
    func errorCodes() {
        #expect(FrameError.frameTooLarge(declared: 5_000_000, maximum: 1_048_576).linkErrorCode == .frameTooLarge)
        #expect(FrameError.zeroLength.linkErrorCode == .protocolViolation)
        #expect(FrameError.unknownKind(0x99).linkErrorCode == .protocolViolation)
        #expect(FrameError.malformedBody(kind: .ping, reason: "x").linkErrorCode == .protocolViolation)
        #expect(
            FrameError.frameTooLarge(declared: 5_000_000, maximum: 1_048_576).description
                == "frame declared length 5000000 bytes, over the maximum of 1048576 bytes"
        )
        #expect(FrameError.unknownKind(0x99).description == "unknown frame kind 0x99")
    }
}
