import COpenSSL
import LinkProtocol

/// Proves and checks knowledge of the pairing key with HMAC-SHA256 from the system libcrypto.
///
/// Proofs are 32 bytes. ``isValid(_:for:)`` compares with `CRYPTO_memcmp`, whose running time does not
/// depend on where the bytes differ, so a peer cannot learn a valid proof byte by byte from timing.
/// The key never appears in `description`, so logging the authenticator cannot leak it.
package struct PairingKeyAuthenticator: HandshakeAuthenticator, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// Bytes in an HMAC-SHA256 output.
    package static let proofByteCount = 32

    /// The pairing key, as read from the configured key file.
    private let key: [UInt8]
    /// The same key set up once for the frames' seals.
    private let frameKey: HMACKey

    /// Creates an authenticator for `key`; an empty key is refused because it would authenticate anyone.
    package init(key: [UInt8]) throws(PairingKeyError) {
        guard !key.isEmpty else { throw .empty }
        guard key.count <= Int(Int32.max) else { throw .tooLong(byteCount: key.count) }
        guard let frameKey = HMACKey(key: key) else { throw .unusable }
        self.key = key
        self.frameKey = frameKey
    }

    /// HMAC-SHA256 of `transcript` under the pairing key.
    package func proof(for transcript: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Self.proofByteCount)
        var outputLength: UInt32 = 0
        // HMAC wants a non-null data pointer even for zero bytes; a spare byte gives it one.
        let data = transcript.isEmpty ? [0] : transcript
        let result = key.withUnsafeBytes { keyBytes in
            data.withUnsafeBufferPointer { dataBytes in
                output.withUnsafeMutableBufferPointer { outputBytes in
                    HMAC(
                        EVP_sha256(),
                        keyBytes.baseAddress,
                        Int32(keyBytes.count),
                        dataBytes.baseAddress,
                        transcript.count,
                        outputBytes.baseAddress,
                        &outputLength
                    )
                }
            }
        }
        // With a valid digest and a key length checked in init, HMAC fails only when memory allocation
        // fails; there is no sound way to continue the handshake without a proof.
        precondition(result != nil && outputLength == UInt32(Self.proofByteCount), "HMAC-SHA256 failed in libcrypto")
        return output
    }

    /// Whether `proof` is the HMAC-SHA256 of `transcript`, compared in constant time; a wrong length is `false`.
    package func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool {
        Self.matches(proof[...]) { self.proof(for: transcript) }
    }

    /// The MAC of the parts joined, from the key set up once (a frame's seal).
    package func proof(forParts parts: [ArraySlice<UInt8>]) -> [UInt8] { frameKey.mac(parts) }

    /// Whether `proof` is the MAC of the parts joined, compared in constant time.
    package func isValid(_ proof: ArraySlice<UInt8>, forParts parts: [ArraySlice<UInt8>]) -> Bool {
        Self.matches(proof) { frameKey.mac(parts) }
    }

    /// Whether `proof` is the `expected` MAC: a wrong length is `false` (nothing computed), the bytes
    /// are compared with `CRYPTO_memcmp`.
    private static func matches(_ proof: ArraySlice<UInt8>, expected: () -> [UInt8]) -> Bool {
        guard proof.count == proofByteCount else { return false }
        let difference = expected().withUnsafeBytes { expectedBytes in
            proof.withUnsafeBytes { proofBytes in
                CRYPTO_memcmp(expectedBytes.baseAddress, proofBytes.baseAddress, proofByteCount)
            }
        }
        return difference == 0
    }

    /// Says how long the key is, never what it is.
    package var description: String { "PairingKeyAuthenticator(key: \(key.count) bytes)" }

    /// Same as ``description``, so `debugPrint` and string interpolation in logs cannot leak the key.
    package var debugDescription: String { description }
}

/// Why a pairing key cannot be used.
package enum PairingKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key has no bytes; HMAC with an empty key would let anyone who knows that pass the handshake.
    case empty
    /// The key is longer than libcrypto's HMAC accepts.
    case tooLong(byteCount: Int)
    /// libcrypto could not set up an HMAC context with the key.
    case unusable

    /// One sentence for the daemon's start-up error.
    package var description: String {
        switch self {
        case .empty: "the pairing key is empty; put at least 32 random bytes in the pairing-key file"
        case .tooLong(let byteCount): "the pairing key is \(byteCount) bytes, longer than HMAC accepts"
        case .unusable: "libcrypto could not set up HMAC-SHA256 with the pairing key"
        }
    }
}
