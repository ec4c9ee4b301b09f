/// The link's opening exchange: mutual proof of the pairing key, bound to fresh nonces, roles and instances.
///
/// ```
/// dialer (watch)                                      listener (phone)
///   hello{version, role, instance, nonce}        -->
///                                                <--  challenge{version, role, instance, nonce, proofL}
///   proof{proofD}                                -->
///                                                <--  welcome
/// ```
///
/// `proofL` and `proofD` are the authenticator's MAC over ``HandshakeTranscript`` proved by the listener's and
/// the dialer's role respectively. Each side checks the other's version (``LinkErrorCode/unsupportedVersion``),
/// that the peer has the other role (``LinkErrorCode/wrongRole``) and its proof
/// (``LinkErrorCode/authenticationFailed``). Any other frame before completion is a
/// ``LinkErrorCode/protocolViolation``; a deadline that passes first is a ``LinkErrorCode/handshakeTimeout``.
/// On each of these the machine emits `send(.error(...))` then `close`, and processes nothing more.
/// An error frame from the peer closes without an answer.
///
/// The machine never reads a clock or a random source. What the shell MUST do:
/// - On connect (dialer) or accept (listener), draw ``LinkFrame/nonceByteCount`` bytes from the CSPRNG and
///   feed `.started(nonce:)`.
/// - Perform every action in order: `send` encodes and writes the frame; `scheduleDeadline(after:)` arms a
///   timer that later feeds `.deadlinePassed` (feeding it late, or after completion, is harmless);
///   `close` flushes the frames already sent, closes the socket and logs the reason and message;
///   `authenticated` hands the connection to the session.
/// - Feed every decoded frame with `.frameReceived` until `authenticated` or `close`; after `authenticated`
///   frames belong to the session, never to this machine. A ``FrameError`` from the decoder is handled by the
///   shell (error frame with ``FrameError/linkErrorCode``, close), not fed here.
package struct Handshake: Sendable {
    /// The protocol version this build speaks. 2: workout documents carry per-field HLC stamps
    /// (schemaVersion 2) and are merged; a version-1 peer would drop the stamps, so it is refused.
    /// 3: the rest of WCSession's channels (from `messageData`, 0x24, on); a version-2 peer would
    /// close the link on the first frame of a kind it does not know, so it is refused at once.
    /// 4: every frame after the handshake is sealed (``FrameSeal``); a version-3 peer sends them bare.
    package static let protocolVersion: UInt16 = 4
    /// How long a handshake may take unless configured otherwise.
    package static let defaultTimeout: Duration = .seconds(5)

    /// Facts the shell reports to the machine.
    package enum Event: Equatable, Sendable {
        /// The connection is open; `nonce` holds ``LinkFrame/nonceByteCount`` fresh bytes from the CSPRNG.
        case started(nonce: [UInt8])
        /// A complete frame arrived from the peer.
        case frameReceived(LinkFrame)
        /// The deadline requested by ``Action/scheduleDeadline(after:)`` passed.
        case deadlinePassed
    }

    /// What the shell must do, in order.
    package enum Action: Equatable, Sendable {
        /// Write this frame to the peer.
        case send(LinkFrame)
        /// Feed ``Event/deadlinePassed`` once this much time has passed.
        case scheduleDeadline(after: Duration)
        /// The peer proved the pairing key; start the session with this peer.
        case authenticated(PeerIdentity)
        /// Close the connection (after flushing frames already sent) and log `reason` and `message`.
        case close(reason: LinkErrorCode, message: String)
    }

    /// Where the handshake stands. Every state not listed as final moves to `closed` on a bad frame, a
    /// peer error frame or the deadline.
    package enum State: Equatable, Sendable {
        /// Created, nothing sent; `started` moves a dialer to `awaitingChallenge`, a listener to `awaitingHello`.
        case idle
        /// Dialer sent hello; a valid challenge moves to `awaitingWelcome`.
        case awaitingChallenge(localNonce: [UInt8])
        /// Dialer verified the listener and sent its proof; welcome moves to `authenticated`.
        case awaitingWelcome(peer: PeerIdentity)
        /// Listener waits for hello; a valid hello moves to `awaitingProof`.
        case awaitingHello(localNonce: [UInt8])
        /// Listener sent its challenge; a dialer proof that verifies moves to `authenticated`.
        case awaitingProof(peer: PeerIdentity, transcript: HandshakeTranscript)
        /// Final: both sides proved the key; later frames belong to the session.
        case authenticated(PeerIdentity)
        /// Final: the handshake failed or the peer closed it, for this reason; nothing more is processed.
        case closed(LinkErrorCode)
    }

    /// Who this side is and how it runs the handshake.
    package struct Configuration: Equatable, Sendable {
        /// Whether this side dialled or accepted.
        package var side: HandshakeSide
        /// This side's device role; the peer must have the ``LinkRole/counterpart``.
        package var role: LinkRole
        /// This side's instance ID.
        package var instance: InstanceID
        /// The protocol version this side speaks; the peer must speak the same.
        package var version: UInt16
        /// How long the handshake may take before it fails with ``LinkErrorCode/handshakeTimeout``.
        package var timeout: Duration

        /// Describes one side; `version` and `timeout` default to this build's values.
        package init(
            side: HandshakeSide,
            role: LinkRole,
            instance: InstanceID,
            version: UInt16 = Handshake.protocolVersion,
            timeout: Duration = Handshake.defaultTimeout
        ) {
            self.side = side
            self.role = role
            self.instance = instance
            self.version = version
            self.timeout = timeout
        }
    }

    /// This side's settings.
    package let configuration: Configuration
    /// Where the handshake stands.
    package internal(set) var state: State = .idle
    /// Makes and checks proofs; holds the pairing key.
    let authenticator: any HandshakeAuthenticator
    /// What both proofs cover, once this side has it: the session's frames are sealed to it (``FrameSeal``).
    package internal(set) var transcript: HandshakeTranscript?

    /// Creates a handshake in ``State/idle``; nothing happens until ``Event/started(nonce:)``.
    package init(configuration: Configuration, authenticator: any HandshakeAuthenticator) {
        self.configuration = configuration
        self.authenticator = authenticator
    }

    /// The verified peer once authenticated, otherwise `nil`.
    package var peer: PeerIdentity? {
        if case .authenticated(let peer) = state { peer } else { nil }
    }

    /// Advances the handshake by one event and returns the actions to perform, in order.
    ///
    /// Starting twice, or feeding frames or deadlines before starting or frames after authentication, is a
    /// bug in the shell and stops the process with the state it happened in.
    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .started(let nonce):
            return start(nonce: nonce)
        case .frameReceived(let frame):
            return receive(frame)
        case .deadlinePassed:
            switch state {
            case .idle:
                preconditionFailure("Handshake got deadlinePassed in state idle: the deadline is scheduled by started")
            case .authenticated, .closed:
                return []
            case .awaitingChallenge, .awaitingWelcome, .awaitingHello, .awaitingProof:
                return fail(.handshakeTimeout, "handshake did not complete within \(configuration.timeout)")
            }
        }
    }
}
