/// Big-endian integer encoding for the link's on-disk formats (the outbox records, the state files).
package enum BigEndian {
    /// Appends `value`'s bytes, most significant first.
    package static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
    }

    /// Reads a `T` from `bytes[offset...]`; the caller has checked that enough bytes remain.
    package static func read<T: FixedWidthInteger>(_: T.Type, from bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        for index in offset..<(offset + MemoryLayout<T>.size) {
            value = value << 8 | T(bytes[index])
        }
        return value
    }
}
