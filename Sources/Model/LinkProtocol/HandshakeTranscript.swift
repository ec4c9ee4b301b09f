/// Which end of the TCP connection a handshake runs on; independent of the device role.
package enum HandshakeSide: Sendable, Equatable, CustomStringConvertible {
    /// The side that connected (normally the watch): sends hello, then its proof.
    case dialer
    /// The side that accepted (normally the phone): answers hello with a challenge, then welcomes.
    case listener

    /// `dialer` or `listener`.
    package var description: String {
        switch self {
        case .dialer: "dialer"
        case .listener: "listener"
        }
    }
}

/// What one side contributes to a handshake: its role, instance ID and fresh nonce.
package struct HandshakeParticipant: Equatable, Sendable {
    /// The device role this side claims.
    package var role: LinkRole
    /// This side's instance ID.
    package var instance: InstanceID
    /// This side's fresh 32-byte nonce for this handshake.
    package var nonce: [UInt8]

    /// Bundles one side's contribution.
    package init(role: LinkRole, instance: InstanceID, nonce: [UInt8]) {
        self.role = role
        self.instance = instance
        self.nonce = nonce
    }
}

/// The bytes both proofs are computed over; binding the version, both roles, instances and nonces.
///
/// ```
/// "watchsync-link" (14 ASCII bytes) || version u16
///   || prover role u8
///   || dialer role u8 || dialer instance 16 || dialer nonce 32
///   || listener role u8 || listener instance 16 || listener nonce 32
/// ```
///
/// The prover role is the role of the side producing the proof, so the listener's proof can never be
/// sent back as the dialer's (a reflection). Each side's fresh nonce makes a recorded proof useless in any
/// later handshake (a replay). The leading constant keeps these MACs apart from any other use of the key.
package struct HandshakeTranscript: Equatable, Sendable {
    /// Domain-separation prefix.
    package static let domain: [UInt8] = Array("watchsync-link".utf8)

    /// The protocol version both sides speak.
    package var version: UInt16
    /// The side that connected.
    package var dialer: HandshakeParticipant
    /// The side that accepted.
    package var listener: HandshakeParticipant

    /// Collects the handshake's inputs.
    package init(version: UInt16, dialer: HandshakeParticipant, listener: HandshakeParticipant) {
        self.version = version
        self.dialer = dialer
        self.listener = listener
    }

    /// The transcript bytes as proved by the side whose role is `prover`.
    package func bytes(provenBy prover: LinkRole) -> [UInt8] {
        var writer = ByteWriter()
        writer.reserve(Self.domain.count + 3 + 2 * (1 + InstanceID.byteCount + LinkFrame.nonceByteCount))
        writer.write(Self.domain)
        writer.write(version)
        writer.write(prover.rawValue)
        for participant in [dialer, listener] {
            writer.write(participant.role.rawValue)
            writer.write(participant.instance.bytes)
            writer.write(participant.nonce)
        }
        return writer.bytes
    }
}

/// Who the peer proved to be: the result of a successful handshake.
package struct PeerIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The peer's device role.
    package var role: LinkRole
    /// The peer's instance ID; a new one means the peer's state was wiped.
    package var instance: InstanceID

    /// Names a peer.
    package init(role: LinkRole, instance: InstanceID) {
        self.role = role
        self.instance = instance
    }

    /// `watch 0011…` style, for logs.
    package var description: String { "\(role) \(instance)" }
}
