/// CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF.
///
/// The checksum iSCSI (RFC 3720) and ext4 use; it detects all burst errors up to 32 bits, which is
/// what a torn or bit-flipped record on disk looks like. Computed slicing-by-8: eight 256-entry
/// tables let the loop consume eight bytes per step.
package enum CRC32C {
    /// `tables[k][b]` is the CRC contribution of byte `b` followed by `k` zero bytes.
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for k in 1..<8 {
                let previous = tables[k - 1][byte]
                tables[k][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        update(0, with: bytes)
    }

    /// Extends `crc` (a finished checksum of earlier bytes, or 0 for none) over `bytes`.
    ///
    /// `update(update(0, a), b) == checksum(a + b)`, so a record's fields can be checksummed in
    /// place without concatenating them.
    package static func update(_ crc: UInt32, with bytes: some Collection<UInt8>) -> UInt32 {
        let tables = Self.tables
        if let state = bytes.withContiguousStorageIfAvailable({ slicingBy8(~crc, $0, tables) }) {
            return ~state
        }
        return ~Array(bytes).withUnsafeBufferPointer { slicingBy8(~crc, $0, tables) }
    }

    /// The inner loop over raw state (not yet inverted back).
    private static func slicingBy8(
        _ initial: UInt32, _ buffer: UnsafeBufferPointer<UInt8>, _ t: [[UInt32]]
    ) -> UInt32 {
        var state = initial
        var index = 0
        let count = buffer.count
        while count - index >= 8 {
            let low =
                state
                ^ (UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                    | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24)
            state =
                t[7][Int(low & 0xFF)] ^ t[6][Int((low >> 8) & 0xFF)]
                ^ t[5][Int((low >> 16) & 0xFF)] ^ t[4][Int(low >> 24)]
                ^ t[3][Int(buffer[index + 4])] ^ t[2][Int(buffer[index + 5])]
                ^ t[1][Int(buffer[index + 6])] ^ t[0][Int(buffer[index + 7])]
            index += 8
        }
        while index < count {
            state = (state >> 8) ^ t[0][Int((state ^ UInt32(buffer[index])) & 0xFF)]
            index += 1
        }
        return state
    }
}
