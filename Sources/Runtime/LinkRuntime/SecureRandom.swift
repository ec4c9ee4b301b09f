import COpenSSL

/// Cryptographically secure random bytes from libcrypto's `RAND_bytes`, for handshake nonces and instance IDs.
package enum SecureRandom {
    /// Returns `count` random bytes, or throws if libcrypto cannot provide them (never weaker bytes instead).
    package static func bytes(count: Int) throws(SecureRandomError) -> [UInt8] {
        guard count >= 0, count <= Int(Int32.max) else { throw .invalidCount(count) }
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { buffer in
            RAND_bytes(buffer.baseAddress, Int32(buffer.count))
        }
        guard status == 1 else { throw .generatorFailed(byteCount: count) }
        return bytes
    }
}

/// Why ``SecureRandom`` produced no bytes.
package enum SecureRandomError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The requested count is negative or larger than `RAND_bytes` accepts.
    case invalidCount(Int)
    /// `RAND_bytes` reported failure, typically because the system entropy source is unavailable.
    case generatorFailed(byteCount: Int)

    /// One sentence for the log.
    package var description: String {
        switch self {
        case .invalidCount(let count):
            "cannot draw \(count) random bytes; the count must be between 0 and \(Int32.max)"
        case .generatorFailed(let byteCount):
            "RAND_bytes failed to produce \(byteCount) random bytes;"
                + " is the system entropy source (getrandom, /dev/urandom) available?"
        }
    }
}
