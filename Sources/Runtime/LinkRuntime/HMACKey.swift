import COpenSSL
import Synchronization

/// HMAC-SHA256 under one key, set up once (OpenSSL 3's `EVP_MAC`). Every frame after the handshake
/// is sealed and opened with the pairing key: with the one-shot `HMAC()` each of those fetched the
/// digest and hashed the key's pads again, which cost phoned 30% of its CPU while draining a queue.
/// Here a MAC re-initialises the keyed context (`EVP_MAC_init` without a key keeps it) and feeds it
/// the parts, so a frame pays for hashing its bytes.
final class HMACKey: @unchecked Sendable {
    // @unchecked: `context` is used only inside `lock`.
    private let lock = Mutex<Void>(())
    private let context: OpaquePointer

    /// A context keyed with `key`; nil when libcrypto cannot make one (out of memory).
    init?(key: [UInt8]) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        let keyed = "digest".withCString { name in
            "SHA256".withCString { digest in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withUnsafeBufferPointer { bytes in
                    EVP_MAC_init(context, bytes.baseAddress, bytes.count, &parameters)
                }
            }
        }
        guard keyed == 1 else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit { EVP_MAC_CTX_free(context) }

    /// The MAC of the parts joined.
    func mac(_ parts: [ArraySlice<UInt8>]) -> [UInt8] {
        lock.withLock { _ in
            var output = [UInt8](repeating: 0, count: PairingKeyAuthenticator.proofByteCount)
            var length = 0
            var succeeded = EVP_MAC_init(context, nil, 0, nil) == 1
            for part in parts where !part.isEmpty && succeeded {
                succeeded = part.withUnsafeBufferPointer { EVP_MAC_update(context, $0.baseAddress, $0.count) } == 1
            }
            succeeded =
                succeeded
                && output.withUnsafeMutableBufferPointer {
                    EVP_MAC_final(context, $0.baseAddress, &length, $0.count)
                } == 1
            // As for `HMAC()` in the handshake: with a keyed context this fails only when memory runs out.
            precondition(succeeded && length == output.count, "HMAC-SHA256 failed in libcrypto")
            return output
        }
    }
}
