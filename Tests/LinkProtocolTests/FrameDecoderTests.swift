import LinkProtocol
import Testing

@Suite("FrameDecoder")
struct FrameDecoderTests {
    /// The wire bytes of every sample frame, back to back.
    static let stream: [UInt8] = FrameSamples.everyKind.flatMap { $0.encoded() }

    /// Feeds `chunks` in order, draining frames after each feed as the shell does.
    static func decode(_ chunks: [ArraySlice<UInt8>], maximumFrameLength: Int = FrameDecoder.defaultMaximumFrameLength)
        throws(FrameError) -> [LinkFrame]
    {
        var decoder = FrameDecoder(maximumFrameLength: maximumFrameLength)
        var frames: [LinkFrame] = []
        for chunk in chunks {
            decoder.feed(chunk)
            while let frame = try decoder.nextFrame() {
                frames.append(frame)
            }
        }
        return frames
    }

    @Test("all frames fed in one read come out in order")
    func wholeStream() throws {
        #expect(try Self.decode([Self.stream[...]]) == FrameSamples.everyKind)
    }

    @Test("all frames fed one byte at a time come out the same")
    func oneByteAtATime() throws {
        let chunks = Self.stream.indices.map { Self.stream[$0..<($0 + 1)] }
        #expect(try Self.decode(chunks) == FrameSamples.everyKind)
    }

    @Test("every frame split at every point comes out the same", arguments: FrameSamples.everyKind)
    func everySplitPoint(frame: LinkFrame) throws {
        let wire = frame.encoded()
        for split in 0...wire.count {
            #expect(try Self.decode([wire[..<split], wire[split...]]) == [frame], "split at \(split)")
        }
    }

    @Test("the whole stream split at every point into two reads comes out the same")
    func streamSplitAtEveryPoint() throws {
        for split in stride(from: 0, through: Self.stream.count, by: 1) {
            #expect(try Self.decode([Self.stream[..<split], Self.stream[split...]]) == FrameSamples.everyKind)
        }
    }

    @Test("reads of varying sizes that straddle frame boundaries come out the same", arguments: [2, 3, 7, 64, 1001])
    func fixedChunkSizes(size: Int) throws {
        let chunks = stride(from: 0, to: Self.stream.count, by: size).map {
            Self.stream[$0..<min($0 + size, Self.stream.count)]
        }
        #expect(try Self.decode(chunks) == FrameSamples.everyKind)
    }

    @Test("a partial frame waits for more bytes and reports what it holds")
    func partialFrameWaits() throws {
        let wire = LinkFrame.ping(token: 1).encoded()
        var decoder = FrameDecoder()
        decoder.feed(wire.prefix(7))
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 7)
        decoder.feed(wire.dropFirst(7))
        #expect(try decoder.nextFrame() == .ping(token: 1))
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("a declared length over the maximum is refused from the 4 length bytes, no body needed")
    func tooLargeRefusedFromHeader() throws {
        var decoder = FrameDecoder(maximumFrameLength: 1024)
        decoder.feed([0x00, 0x00, 0x04])
        #expect(try decoder.nextFrame() == nil)
        decoder.feed([0x01])
        #expect(throws: FrameError.frameTooLarge(declared: 1025, maximum: 1024)) { try decoder.nextFrame() }
    }

    @Test("a 4 GiB declaration with its kind byte is refused after exactly 5 bytes, under the default maximum")
    func hugeDeclarationRefused() {
        var decoder = FrameDecoder()
        decoder.feed([0xFF, 0xFF, 0xFF, 0xFF, 0x20])
        #expect(decoder.bufferedByteCount == 5)
        #expect(throws: FrameError.frameTooLarge(declared: UInt32.max, maximum: 1_048_576)) { try decoder.nextFrame() }
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("a declared length equal to the maximum is accepted, one more is refused")
    func exactlyMaximumAccepted() throws {
        let fits = LinkFrame.launch(payload: [UInt8](repeating: 7, count: 199))
        #expect(try Self.decode([fits.encoded()[...]], maximumFrameLength: 200) == [fits])
        let tooLong = LinkFrame.launch(payload: [UInt8](repeating: 7, count: 200))
        #expect(throws: FrameError.frameTooLarge(declared: 201, maximum: 200)) {
            try Self.decode([tooLong.encoded()[...]], maximumFrameLength: 200)
        }
    }

    @Test("a zero length is refused")
    func zeroLength() {
        #expect(throws: FrameError.zeroLength) { try Self.decode([[0, 0, 0, 0][...]]) }
    }

    @Test("an unknown kind is refused once its frame is complete")
    func unknownKind() {
        #expect(throws: FrameError.unknownKind(0x99)) { try Self.decode([[0, 0, 0, 2, 0x99, 0x00][...]]) }
    }

    @Test("a wrong-size fixed body is refused through the decoder")
    func malformedThroughDecoder() {
        #expect(throws: FrameError.malformedBody(kind: .ping, reason: "body ends inside token (needs 8 bytes, 7 left)"))
        {
            try Self.decode([[0, 0, 0, 8, 0x06, 1, 2, 3, 4, 5, 6, 7][...]])
        }
    }

    @Test("frames before a bad one are delivered; after it the decoder stays failed and drops input")
    func staysFailed() throws {
        var decoder = FrameDecoder()
        decoder.feed(LinkFrame.ping(token: 1).encoded() + [0, 0, 0, 0] + LinkFrame.ping(token: 2).encoded())
        #expect(try decoder.nextFrame() == .ping(token: 1))
        #expect(throws: FrameError.zeroLength) { try decoder.nextFrame() }
        decoder.feed(LinkFrame.pong(token: 3).encoded())
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: FrameError.zeroLength) { try decoder.nextFrame() }
    }

    @Test("a long stream fed in small reads decodes completely and leaves nothing behind")
    func longStream() throws {
        let frames = (0..<20_000).map {
            LinkFrame.message(id: UInt64($0), wantsReply: $0 % 2 == 0, payload: [UInt8(truncatingIfNeeded: $0)])
        }
        let stream = frames.flatMap { $0.encoded() }
        var decoder = FrameDecoder()
        var decoded: [LinkFrame] = []
        for start in stride(from: 0, to: stream.count, by: 100) {
            decoder.feed(stream[start..<min(start + 100, stream.count)])
            while let frame = try decoder.nextFrame() {
                decoded.append(frame)
            }
        }
        #expect(decoded == frames)
        #expect(decoder.bufferedByteCount == 0)
    }
}
