import LinkProtocol

/// Any bytes, cut into reads of any sizes, through `FrameDecoder`.
///
/// Properties: the frames and the error do not depend on how the stream was cut; every frame
/// re-encodes to exactly the bytes it was decoded from (so the codec is strict and loses nothing);
/// no frame exceeds the limit; an error repeats forever and what is left buffered is one partial frame.
enum FrameDecoderTarget {
    static func check(_ input: inout FuzzInput) throws {
        let maximum = FrameDecoder.allowedMaximumFrameLengths.lowerBound + Int(input.integer(UInt16.self))
        var cuts = input.bytes(8).map { Int($0 % 64) + 1 }
        if cuts.isEmpty { cuts = [1] }
        let stream = input.rest()

        let whole = decode(stream, maximum: maximum, cuts: [stream.count + 1])
        let piecewise = decode(stream, maximum: maximum, cuts: cuts)
        try require(whole.frames == piecewise.frames, "frames depend on how the stream was cut: \(cuts)")
        try require(whole.error == piecewise.error, "the error depends on how the stream was cut: \(cuts)")

        var consumed = 0
        for frame in whole.frames {
            let encoded = frame.encoded()
            try require(
                encoded.count - LinkFrame.lengthPrefixByteCount <= maximum, "a \(frame.kind) frame over the limit")
            try require(
                stream.count >= consumed + encoded.count
                    && Array(stream[consumed..<(consumed + encoded.count)]) == encoded,
                "a \(frame.kind) frame does not re-encode to the bytes it came from at offset \(consumed)")
            consumed += encoded.count
        }
        try require(whole.errorIsFinal && piecewise.errorIsFinal, "an error did not repeat after more bytes were fed")
        if whole.error == nil {
            try require(
                whole.buffered == stream.count - consumed,
                "buffered \(whole.buffered) of \(stream.count - consumed) left")
        }
    }

    /// Feeds `stream` in reads of the `cuts` sizes (cycled), draining after each read.
    private static func decode(_ stream: [UInt8], maximum: Int, cuts: [Int]) -> (
        frames: [LinkFrame], error: FrameError?, buffered: Int, errorIsFinal: Bool
    ) {
        var decoder = FrameDecoder(maximumFrameLength: maximum)
        var frames: [LinkFrame] = []
        var offset = 0
        var cut = 0
        repeat {
            let end = min(stream.count, offset + cuts[cut % cuts.count])
            decoder.feed(stream[offset..<end])
            offset = end
            cut += 1
            do {
                while let frame = try decoder.nextFrame() { frames.append(frame) }
            } catch {
                // Errors are final: the next call must throw the same one, and feeding must not revive it.
                decoder.feed([0, 0, 0, 1, FrameKind.welcome.rawValue])
                let again = Result { () throws(FrameError) in try decoder.nextFrame() }
                return (frames, error, decoder.bufferedByteCount, again == .failure(error))
            }
        } while offset < stream.count
        return (frames, nil, decoder.bufferedByteCount, true)
    }
}
