import LinkProtocol

/// The handshake's proofs and the frames' seals, made deterministic and cheap for simulation (no
/// cryptography: nothing here faces an attacker). Both sides share the same pairing key implicitly.
/// Every frame is sealed and opened, so this runs over every byte twice: one pass, eight bytes at a
/// time, then 32 bytes drawn from the result.
struct SimAuthenticator: HandshakeAuthenticator {
    func proof(for transcript: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(transcript.count)
        transcript.withUnsafeBytes { bytes in
            var index = 0
            while index + 8 <= bytes.count {
                hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
                index += 8
            }
            while index < bytes.count {
                hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for lane in 0..<4 {
            // SplitMix64's finaliser: each lane a different, well-mixed function of the hash.
            var z = hash &+ UInt64(lane + 1) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            withUnsafeBytes(of: z.littleEndian) { out += $0 }
        }
        return out
    }

    func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool { proof == self.proof(for: transcript) }
}
