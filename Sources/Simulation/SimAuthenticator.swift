import LinkProtocol

/// The handshake's proof, made deterministic and cheap for simulation (no cryptography: nothing
/// here faces an attacker). Both sides share the same pairing key implicitly.
struct SimAuthenticator: HandshakeAuthenticator {
    func proof(for transcript: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var out: [UInt8] = []
        for round in 0..<4 {
            hash ^= UInt64(round)
            for byte in transcript {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            withUnsafeBytes(of: hash.littleEndian) { out += $0 }
        }
        return out
    }

    func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool { proof == self.proof(for: transcript) }
}
