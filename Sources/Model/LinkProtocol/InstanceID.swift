/// A daemon's 16-byte instance ID: random, drawn once when its state directory is created and kept for life.
///
/// A wiped state directory means a new instance, so the peer can tell a reset phone from a restarted one.
/// This module never generates one (that needs randomness); the caller supplies the bytes.
/// It prints as 32 lowercase hex digits.
package struct InstanceID: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes in an instance ID, on the wire and on disk.
    package static let byteCount = 16

    /// The first eight bytes, big-endian.
    private let high: UInt64
    /// The last eight bytes, big-endian.
    private let low: UInt64

    /// Creates an instance ID from exactly ``byteCount`` bytes; returns `nil` for any other count.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 {
                high = high << 8 | UInt64(byte)
            } else {
                low = low << 8 | UInt64(byte)
            }
        }
        self.high = high
        self.low = low
    }

    /// Parses 32 hex digits (either case), as written by ``description``; returns `nil` for anything else.
    package init?(hex: some StringProtocol) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        var pending: UInt8?
        for character in hex.utf8 {
            guard let nibble = Self.nibble(character) else { return nil }
            if let high = pending {
                bytes.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
        }
        guard pending == nil else { return nil }
        self.init(bytes: bytes)
    }

    /// The 16 bytes, in wire order.
    package var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(Self.byteCount)
        for shift in stride(from: 56, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            result.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
        }
        return result
    }

    /// 32 lowercase hex digits.
    package var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(Self.byteCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The value of one ASCII hex digit, or `nil` if `character` is not one.
    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
