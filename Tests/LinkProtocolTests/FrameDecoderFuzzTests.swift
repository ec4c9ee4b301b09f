import LinkProtocol
import Testing

/// SplitMix64: a tiny deterministic generator so every fuzz run sees the same inputs and a failure replays.
struct SplitMix64: RandomNumberGenerator {
    /// The generator's state; the seed.
    private var state: UInt64

    /// Starts the sequence at `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 pseudo-random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("FrameDecoder fuzzing")
struct FrameDecoderFuzzTests {
    static let seed: UInt64 = 0x5741_5443_4853_594E

    @Test("random bytes in random reads never trap; every outcome is a frame, a wait or a FrameError")
    func randomBytes() {
        var generator = SplitMix64(seed: Self.seed)
        var outcomes = (frames: 0, errors: 0, waiting: 0)
        for _ in 0..<4000 {
            let count = Int.random(in: 0...96, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Plausible prefixes reach the body parsers instead of stopping at a huge length.
            if Bool.random(using: &generator), bytes.count >= 5 {
                bytes[0] = 0
                bytes[1] = 0
                bytes[2] = 0
                bytes[3] = UInt8(bytes.count - 4)
                bytes[4] = FrameKind.allCases.randomElement(using: &generator)!.rawValue
            }
            var decoder = FrameDecoder(maximumFrameLength: 128)
            var offset = 0
            var failed = false
            while offset < bytes.count, !failed {
                let end = min(bytes.count, offset + Int.random(in: 1...8, using: &generator))
                decoder.feed(bytes[offset..<end])
                offset = end
                do {
                    while let frame = try decoder.nextFrame() {
                        outcomes.frames += 1
                        // Whatever decodes must re-encode to a frame that decodes to the same value.
                        var again = FrameDecoder()
                        again.feed(frame.encoded())
                        #expect((try? again.nextFrame()) == frame, "seed \(Self.seed)")
                    }
                } catch {
                    outcomes.errors += 1
                    failed = true
                }
            }
            if !failed { outcomes.waiting += 1 }
        }
        #expect(outcomes.frames > 0, "seed \(Self.seed)")
        #expect(outcomes.errors > 0, "seed \(Self.seed)")
    }

    @Test("random single-byte corruptions of valid frames are decoded or refused, never trap")
    func corruptedFrames() {
        var generator = SplitMix64(seed: Self.seed ^ 0xFF)
        let valid = FrameSamples.everyKind.map { $0.encoded() }
        for _ in 0..<3000 {
            var bytes = valid.randomElement(using: &generator)!
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[index] ^= UInt8.random(in: 1...255, using: &generator)
            var decoder = FrameDecoder()
            decoder.feed(bytes)
            _ = try? decoder.nextFrame()
        }
    }
}
