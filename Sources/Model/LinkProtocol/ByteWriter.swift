/// Appends big-endian integers and raw bytes to a growing byte array: the encoding half of the codec.
struct ByteWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// Reserves room for `count` more bytes so encoding a frame allocates once.
    mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Appends one byte.
    mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    /// Appends `value` as 2 bytes, big-endian.
    mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` as 4 bytes, big-endian.
    mutating func write(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    /// Appends `value` as 8 bytes, big-endian.
    mutating func write(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Appends `value` verbatim.
    mutating func write(_ value: some Collection<UInt8>) {
        bytes.append(contentsOf: value)
    }
}
