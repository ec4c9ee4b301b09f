/// Produces and checks the handshake's proofs of knowing the pairing key, and the frames' seals.
///
/// The link runtime implements this with HMAC-SHA256 over the pairing key and a constant-time compare;
/// pure tests use a fake. Injecting it keeps ``Handshake`` free of key material and of libcrypto.
/// Conformers must return proofs of exactly ``LinkFrame/proofByteCount`` bytes.
package protocol HandshakeAuthenticator: Sendable {
    /// The proof for `transcript`: a MAC keyed with the pairing key.
    func proof(for transcript: [UInt8]) -> [UInt8]
    /// Whether `proof` is the proof for `transcript`, compared in constant time; a wrong length is `false`.
    func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool
    /// `proof(for:)` of the parts joined, without joining them: a frame's seal, once per frame.
    func proof(forParts parts: [ArraySlice<UInt8>]) -> [UInt8]
    /// `isValid(_:for:)` of the parts joined.
    func isValid(_ proof: ArraySlice<UInt8>, forParts parts: [ArraySlice<UInt8>]) -> Bool
}

extension HandshakeAuthenticator {
    package func proof(forParts parts: [ArraySlice<UInt8>]) -> [UInt8] { proof(for: Array(parts.joined())) }

    package func isValid(_ proof: ArraySlice<UInt8>, forParts parts: [ArraySlice<UInt8>]) -> Bool {
        isValid(Array(proof), for: Array(parts.joined()))
    }
}
