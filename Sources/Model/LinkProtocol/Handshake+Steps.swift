extension Handshake {
    /// Handles `started`: schedules the deadline, and the dialer opens with hello.
    mutating func start(nonce: [UInt8]) -> [Action] {
        // Both are shell bugs: the shell starts once, with a nonce of the size the protocol fixes.
        precondition(state == .idle, "Handshake got started in state \(state); start it once")
        precondition(
            nonce.count == LinkFrame.nonceByteCount,
            "Handshake nonce must be \(LinkFrame.nonceByteCount) bytes, got \(nonce.count)"
        )
        var actions: [Action] = [.scheduleDeadline(after: configuration.timeout)]
        switch configuration.side {
        case .dialer:
            actions.append(
                .send(
                    .hello(
                        version: configuration.version,
                        role: configuration.role,
                        instance: configuration.instance,
                        nonce: nonce
                    )
                )
            )
            state = .awaitingChallenge(localNonce: nonce)
        case .listener:
            state = .awaitingHello(localNonce: nonce)
        }
        return actions
    }

    /// Handles a frame from the peer according to the current state.
    mutating func receive(_ frame: LinkFrame) -> [Action] {
        if case .error(let code, let reason) = frame, state.isInProgress {
            state = .closed(code)
            return [.close(reason: code, message: "the peer closed the link: \(reason)")]
        }
        switch (state, frame) {
        case (.idle, _):
            preconditionFailure("Handshake got a \(frame.kind) frame in state idle: feed started first")
        case (.authenticated, _):
            preconditionFailure("Handshake got a \(frame.kind) frame in state authenticated: the session owns it")
        case (.closed, _):
            return []
        case (.awaitingHello(let localNonce), .hello(let version, let role, let instance, let nonce)):
            return receiveHello(
                localNonce: localNonce,
                version: version,
                dialer: HandshakeParticipant(role: role, instance: instance, nonce: nonce)
            )
        case (
            .awaitingChallenge(let localNonce),
            .challenge(let version, let role, let instance, let nonce, let proof)
        ):
            return receiveChallenge(
                localNonce: localNonce,
                version: version,
                listener: HandshakeParticipant(role: role, instance: instance, nonce: nonce),
                proof: proof
            )
        case (.awaitingProof(let peer, let transcript), .proof(let proof)):
            guard authenticator.isValid(proof, for: transcript.bytes(provenBy: peer.role)) else {
                return fail(
                    .authenticationFailed,
                    "the \(peer.role)'s proof did not verify: the pairing keys differ,"
                        + " or the proof was replayed or reflected"
                )
            }
            state = .authenticated(peer)
            return [.send(.welcome), .authenticated(peer)]
        case (.awaitingWelcome(let peer), .welcome):
            state = .authenticated(peer)
            return [.authenticated(peer)]
        case (.awaitingHello, _), (.awaitingChallenge, _), (.awaitingProof, _), (.awaitingWelcome, _):
            return fail(
                .protocolViolation,
                "expected \(state.expectedKind) during the handshake, received \(frame.kind)"
            )
        }
    }

    /// Listener: checks the dialer's hello and answers with a challenge carrying this side's proof.
    private mutating func receiveHello(localNonce: [UInt8], version: UInt16, dialer: HandshakeParticipant) -> [Action] {
        if let refusal = refusal(version: version, role: dialer.role) { return refusal }
        let listener = HandshakeParticipant(
            role: configuration.role,
            instance: configuration.instance,
            nonce: localNonce
        )
        let transcript = HandshakeTranscript(version: version, dialer: dialer, listener: listener)
        self.transcript = transcript
        state = .awaitingProof(peer: PeerIdentity(role: dialer.role, instance: dialer.instance), transcript: transcript)
        return [
            .send(
                .challenge(
                    version: configuration.version,
                    role: configuration.role,
                    instance: configuration.instance,
                    nonce: localNonce,
                    proof: authenticator.proof(for: transcript.bytes(provenBy: configuration.role))
                )
            )
        ]
    }

    /// Dialer: checks the listener's challenge and proof, then proves the key in turn.
    private mutating func receiveChallenge(
        localNonce: [UInt8],
        version: UInt16,
        listener: HandshakeParticipant,
        proof: [UInt8]
    ) -> [Action] {
        if let refusal = refusal(version: version, role: listener.role) { return refusal }
        let dialer = HandshakeParticipant(role: configuration.role, instance: configuration.instance, nonce: localNonce)
        let transcript = HandshakeTranscript(version: version, dialer: dialer, listener: listener)
        guard authenticator.isValid(proof, for: transcript.bytes(provenBy: listener.role)) else {
            return fail(
                .authenticationFailed,
                "the \(listener.role)'s proof did not verify: the pairing keys differ, or the proof was replayed"
            )
        }
        self.transcript = transcript
        state = .awaitingWelcome(peer: PeerIdentity(role: listener.role, instance: listener.instance))
        return [.send(.proof(authenticator.proof(for: transcript.bytes(provenBy: configuration.role))))]
    }

    /// The failure actions if the peer's version or role is unacceptable, otherwise `nil`.
    private mutating func refusal(version: UInt16, role: LinkRole) -> [Action]? {
        if version != configuration.version {
            return fail(
                .unsupportedVersion,
                "peer speaks protocol \(version), this side speaks \(configuration.version)"
            )
        }
        let expected = configuration.role.counterpart
        if role != expected {
            return fail(
                .wrongRole, "peer says it is a \(role), but a \(configuration.role) links only with a \(expected)")
        }
        return nil
    }

    /// Ends the handshake because this side detected a problem: tell the peer why, then close.
    mutating func fail(_ code: LinkErrorCode, _ message: String) -> [Action] {
        state = .closed(code)
        return [.send(.error(code: code, reason: message)), .close(reason: code, message: message)]
    }
}

extension Handshake.State {
    /// Whether the handshake is still running (neither authenticated nor closed, and started).
    var isInProgress: Bool {
        switch self {
        case .awaitingChallenge, .awaitingWelcome, .awaitingHello, .awaitingProof: true
        case .idle, .authenticated, .closed: false
        }
    }

    /// The frame kind this state waits for, for error messages.
    var expectedKind: String {
        switch self {
        case .awaitingChallenge: "challenge"
        case .awaitingWelcome: "welcome"
        case .awaitingHello: "hello"
        case .awaitingProof: "proof"
        case .idle, .authenticated, .closed: "nothing"
        }
    }
}
