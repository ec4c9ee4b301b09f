/// The fuzz targets: one per parser that takes bytes from outside the process (docs/FUZZING.md).
///
/// Each target turns arbitrary bytes into inputs for one entry point and checks properties of what
/// comes out, not just that nothing trapped. The libFuzzer harnesses built by `scripts/fuzz` and the
/// corpus replay in `swift test` (FuzzCorpusTests) both call ``check(_:)``, so they run the same checks.
package enum FuzzTarget: String, CaseIterable, Sendable {
    case frameDecoder = "frame-decoder"
    case handshakeDialer = "handshake-dialer"
    case handshakeListener = "handshake-listener"
    case linkEngine = "link-engine"
    case transferLog = "transfer-log"
    case stateFiles = "state-files"
    case documentCoder = "document-coder"
    case watchContext = "watch-context"
    case config = "config"
    case adminRequest = "admin-request"
    case phoneDirectory = "phone-directory"
    case runIndex = "run-index"
    case pendingFiles = "pending-files"

    /// Feeds `bytes` to the target's entry point; throws ``PropertyViolation`` when a property fails.
    package func check(_ bytes: [UInt8]) throws {
        var input = FuzzInput(bytes)
        switch self {
        case .frameDecoder: try FrameDecoderTarget.check(&input)
        case .handshakeDialer: try HandshakeTarget.check(&input, side: .dialer)
        case .handshakeListener: try HandshakeTarget.check(&input, side: .listener)
        case .linkEngine: try LinkEngineTarget.check(&input)
        case .transferLog: try TransferLogTarget.check(&input)
        case .stateFiles: try StateFilesTarget.check(&input)
        case .documentCoder: try DocumentCoderTarget.check(&input)
        case .watchContext: try WatchContextTarget.check(&input)
        case .config: try ConfigTarget.check(&input)
        case .adminRequest: try AdminRequestTarget.check(&input)
        case .phoneDirectory: try PhoneDirectoryTarget.check(&input)
        case .runIndex: try RunIndexTarget.check(&input)
        case .pendingFiles: try PendingFilesTarget.check(&input)
        }
    }
}

/// A property of a target that did not hold for some input: a bug the fuzzer found.
package struct PropertyViolation: Error, CustomStringConvertible {
    package let description: String
}

/// Throws a ``PropertyViolation`` saying `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(PropertyViolation) {
    guard condition else { throw PropertyViolation(description: message()) }
}

/// Reads structured values from a fuzzer's bytes. Past the end every read yields zeros or nothing, so
/// every input means something and small mutations make small changes.
package struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A big-endian integer of `T`'s width.
    mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_: T.Type = T.self) -> T {
        var value: T = 0
        for _ in 0..<(T.bitWidth / 8) { value = value << 8 | T(byte()) }
        return value
    }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// Exactly `count` bytes, zero-padded past the end of the input.
    mutating func fixed(_ count: Int) -> [UInt8] {
        let taken = bytes(count)
        return taken + [UInt8](repeating: 0, count: count - taken.count)
    }

    /// A chunk prefixed by its length: one byte below 0xFF, or 0xFF then two more (255 + up to 65 535 bytes).
    mutating func chunk() -> [UInt8] {
        let short = Int(byte())
        return bytes(short < 0xFF ? short : 0xFF + Int(integer(UInt16.self)))
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { bytes(bytes.count - offset) }
}
