/// Per-frame integrity after the handshake (protocol 4): every frame either side sends once the link
/// is authenticated carries a 32-byte tag, the authenticator's MAC under the pairing key of
///
/// ```
/// "watchsync-frame" (15 ASCII bytes) || session key (32 bytes) || sender role u8 || counter u64
///   || the frame's bytes as sent, length prefix included, tag excluded
/// ```
///
/// The length prefix counts the tag: a sealed frame is `L (u32) | kind | body | tag 32` with
/// `L = 1 + body + 32`. `session` is the MAC of `"watchsync-session" || transcript` (the handshake's
/// transcript, as the listener proves it), so it differs for every connection; `counter` counts the
/// frames one side has sent on this connection, from 0. A receiver recomputes the tag with the
/// sender's role and its own count of frames received, so a frame altered, injected, replayed,
/// reordered, dropped in the middle of the stream, or reflected back to its sender fails — and so does
/// a frame recorded on an earlier connection. The handshake's own frames are not sealed: they carry
/// their proofs, and the session is known only at its end.
///
/// One value seals (the sender's, kept by the shell that writes to the socket) or opens (the
/// receiver's, kept by the link engine's decoder); each counts its own direction.
package struct FrameSeal: Sendable, Equatable, CustomStringConvertible {
    /// Bytes in a tag.
    package static let tagByteCount = LinkFrame.proofByteCount
    static let frameDomain: [UInt8] = Array("watchsync-frame".utf8)
    static let sessionDomain: [UInt8] = Array("watchsync-session".utf8)

    let authenticator: any HandshakeAuthenticator
    /// The session's binding: a MAC of the handshake's transcript.
    let session: [UInt8]
    /// The role of the side that sends the frames this value seals or opens.
    let sender: LinkRole
    /// Frames sealed or opened so far.
    package private(set) var counter: UInt64 = 0

    /// The seal for frames `sender` sends on the connection whose handshake ran over `transcript`.
    package init(authenticator: any HandshakeAuthenticator, transcript: HandshakeTranscript, sender: LinkRole) {
        self.authenticator = authenticator
        self.sender = sender
        session = authenticator.proof(for: Self.sessionDomain + transcript.bytes(provenBy: transcript.listener.role))
    }

    /// The frame's wire bytes, sealed with the next counter.
    package mutating func seal(_ frame: LinkFrame) -> [UInt8] {
        var bytes = frame.encoded()
        bytes.reserveCapacity(bytes.count + Self.tagByteCount)
        let declared = UInt32(bytes.count - LinkFrame.lengthPrefixByteCount + Self.tagByteCount)
        for index in 0..<LinkFrame.lengthPrefixByteCount {
            bytes[index] = UInt8(
                truncatingIfNeeded: declared >> (8 * UInt32(LinkFrame.lengthPrefixByteCount - 1 - index)))
        }
        bytes += authenticator.proof(forParts: [header(), bytes[...]])
        counter += 1
        return bytes
    }

    /// Whether `tag` seals `bytes` (length prefix to the end of the body) as the next frame; counts it
    /// when it does.
    package mutating func open(_ bytes: ArraySlice<UInt8>, tag: ArraySlice<UInt8>) -> Bool {
        guard authenticator.isValid(tag, forParts: [header(), bytes]) else { return false }
        counter += 1
        return true
    }

    /// What the tag covers before the frame's bytes: the domain, the session, the sender, the counter.
    private func header() -> ArraySlice<UInt8> {
        var header: [UInt8] = []
        header.reserveCapacity(Self.frameDomain.count + session.count + 9)
        header += Self.frameDomain
        header += session
        header.append(sender.rawValue)
        for shift in stride(from: 56, through: 0, by: -8) {
            header.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift)))
        }
        return header[...]
    }

    /// Equal when they seal the same direction of the same session at the same count.
    package static func == (lhs: FrameSeal, rhs: FrameSeal) -> Bool {
        lhs.session == rhs.session && lhs.sender == rhs.sender && lhs.counter == rhs.counter
    }

    /// Never the session bytes.
    package var description: String { "FrameSeal(\(sender), frame \(counter))" }
}
