/// Splits the byte stream from the peer into ``LinkFrame`` values, however the reads happen to be cut.
///
/// Usage: after every read, ``feed(_:)`` the bytes, then call ``nextFrame()`` until it returns `nil`.
/// Partial frames wait for more bytes; one read may complete many frames.
///
/// Limits and why:
/// - The length prefix `L` (see ``LinkFrame``) must be at least 1, because it counts the kind byte.
/// - `L` must not exceed ``maximumFrameLength`` (default 1 MiB, ``defaultMaximumFrameLength``). The check
///   runs as soon as the 4 length bytes are buffered, before any body byte is needed, and the decoder never
///   reserves memory for a declared length: a peer cannot make this side allocate by announcing a large frame.
///   If the caller drains frames after every feed, the buffer holds at most one partial frame plus one read.
///
/// Errors are final: the stream cannot be resynchronised, so after the first ``FrameError`` every later
/// ``nextFrame()`` throws the same error and fed bytes are dropped. The shell then sends an error frame
/// (``FrameError/linkErrorCode``) and closes.
package struct FrameDecoder: Sendable {
    /// The default ``maximumFrameLength``: 1 MiB, room for any payload the link's channels accept.
    package static let defaultMaximumFrameLength = 1_048_576
    /// The values ``maximumFrameLength`` may take. The lower bound leaves room for every handshake frame
    /// (a challenge is 84 bytes) and any error frame worth reading; the upper bound is what 4 bytes can say.
    package static let allowedMaximumFrameLengths = 128...Int(UInt32.max)

    /// The largest length prefix accepted, in bytes (counting kind byte and body, not the prefix itself).
    package let maximumFrameLength: Int

    /// Bytes received and not yet consumed start at `readIndex`; the front is dropped now and then.
    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not yet consumed.
    private var readIndex = 0
    /// The first error, repeated forever once set.
    private var failure: FrameError?
    /// Once the handshake is over, every frame must carry the peer's tag (``FrameSeal``).
    private var opener: FrameSeal?

    /// Creates a decoder refusing frames longer than `maximumFrameLength` bytes.
    ///
    /// The configuration loader checks a configured value against ``allowedMaximumFrameLengths`` first.
    package init(maximumFrameLength: Int = FrameDecoder.defaultMaximumFrameLength) {
        // A value outside the range is a configuration bug caught earlier by the loader, not peer input.
        precondition(
            Self.allowedMaximumFrameLengths.contains(maximumFrameLength),
            "maximumFrameLength \(maximumFrameLength) is outside \(Self.allowedMaximumFrameLengths)"
        )
        self.maximumFrameLength = maximumFrameLength
    }

    /// From now on every frame must be sealed by `seal` (the peer's side of the session): a frame
    /// whose tag does not verify is ``FrameError/notAuthentic(frame:)``. Bytes already buffered count.
    package mutating func requireSeal(_ seal: FrameSeal) { opener = seal }

    /// Bytes received but not yet returned as frames (a partial frame), for diagnostics and tests.
    package var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends bytes read from the connection. Bytes fed after an error are dropped.
    package mutating func feed(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete frame, or `nil` if more bytes are needed.
    ///
    /// Throws when the buffered bytes cannot be a valid frame; see the type's doc for what that means
    /// for the connection.
    package mutating func nextFrame() throws(FrameError) -> LinkFrame? {
        if let failure { throw failure }
        do {
            return try decodeNext()
        } catch {
            failure = error
            buffer = []
            readIndex = 0
            throw error
        }
    }

    /// Decodes one frame from the buffer if it is complete, validating the length prefix first.
    private mutating func decodeNext() throws(FrameError) -> LinkFrame? {
        let prefix = LinkFrame.lengthPrefixByteCount
        guard bufferedByteCount >= prefix else { return nil }
        var declared: UInt32 = 0
        for byte in buffer[readIndex..<readIndex + prefix] {
            declared = declared << 8 | UInt32(byte)
        }
        guard declared > 0 else { throw .zeroLength }
        // A tag rides on top of the largest frame the peer may send.
        let tag = opener == nil ? 0 : FrameSeal.tagByteCount
        guard Int(declared) <= maximumFrameLength + tag else {
            throw .frameTooLarge(declared: declared, maximum: maximumFrameLength + tag)
        }
        let frameEnd = readIndex + prefix + Int(declared)
        guard buffer.count >= frameEnd else { return nil }
        let bodyEnd = frameEnd - tag
        if var opener {
            guard Int(declared) > tag,
                opener.open(buffer[readIndex..<bodyEnd], tag: buffer[bodyEnd..<frameEnd])
            else { throw .notAuthentic(frame: opener.counter) }
            self.opener = opener
        }
        let kindIndex = readIndex + prefix
        let frame = try LinkFrame.decode(kindByte: buffer[kindIndex], body: buffer[(kindIndex + 1)..<bodyEnd])
        readIndex = frameEnd
        return frame
    }

    /// Drops consumed bytes from the front once they are at least half the buffer, so the cost of moving
    /// the remainder is paid for by the bytes consumed since the last move: linear overall.
    private mutating func compactIfWorthwhile() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
        } else if readIndex >= Self.retainedCapacity / 16, readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }

    /// Capacity kept across frames when the buffer empties; a larger buffer (after a big frame) is released.
    private static let retainedCapacity = 64 * 1024
}
