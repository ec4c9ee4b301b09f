extension LinkFrame {
    /// The complete wire bytes of this frame: length prefix, kind byte and body.
    ///
    /// The caller compares `encoded().count - 4` with the peer's maximum frame length before sending; this
    /// function does not know it.
    package func encoded() -> [UInt8] {
        let body = encodedBody()
        // The length counts the kind byte; a body near 4 GiB cannot come from this program's callers.
        precondition(body.count < Int(UInt32.max), "a \(kind) frame body of \(body.count) bytes cannot be framed")
        var writer = ByteWriter()
        writer.reserve(Self.lengthPrefixByteCount + 1 + body.count)
        writer.write(UInt32(body.count + 1))
        writer.write(kind.rawValue)
        writer.write(body)
        return writer.bytes
    }

    /// The body bytes (everything after the kind byte), laid out as in the table on ``LinkFrame``.
    private func encodedBody() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .hello(let version, let role, let instance, let nonce):
            Self.requireSize(nonce, Self.nonceByteCount, "hello nonce")
            writer.write(version)
            writer.write(role.rawValue)
            writer.write(instance.bytes)
            writer.write(nonce)
        case .challenge(let version, let role, let instance, let nonce, let proof):
            Self.requireSize(nonce, Self.nonceByteCount, "challenge nonce")
            Self.requireSize(proof, Self.proofByteCount, "challenge proof")
            writer.write(version)
            writer.write(role.rawValue)
            writer.write(instance.bytes)
            writer.write(nonce)
            writer.write(proof)
        case .proof(let proof):
            Self.requireSize(proof, Self.proofByteCount, "proof")
            writer.write(proof)
        case .welcome:
            break
        case .error(let code, let reason):
            writer.write(code.rawValue)
            writer.write(Array(reason.utf8))
        case .ping(let token), .pong(let token):
            writer.write(token)
        case .context(let generation, let sender, let payload):
            writer.reserve(8 + InstanceID.byteCount + payload.count)
            writer.write(generation)
            writer.write(sender.bytes)
            writer.write(payload)
        case .contextAck(let generation, let sender):
            writer.write(generation)
            writer.write(sender.bytes)
        case .message(let id, let wantsReply, let payload), .messageData(let id, let wantsReply, let payload):
            writer.reserve(9 + payload.count)
            writer.write(id)
            writer.write(wantsReply ? Self.wantsReplyFlag : UInt8(0))
            writer.write(payload)
        case .messageReply(let id, let payload):
            writer.reserve(8 + payload.count)
            writer.write(id)
            writer.write(payload)
        case .messageDelivered(let id):
            writer.write(id)
        case .messageFailed(let id, let code, let reason):
            writer.write(id)
            writer.write(code.rawValue)
            writer.write(Array(reason.utf8))
        case .userInfo(let queue, let sequence, let payload):
            writer.reserve(InstanceID.byteCount + 8 + payload.count)
            writer.write(queue.bytes)
            writer.write(sequence)
            writer.write(payload)
        case .userInfoAck(let queue, let sequence):
            writer.write(queue.bytes)
            writer.write(sequence)
        case .userInfoRefused(let queue, let sequence, let reason):
            writer.write(queue.bytes)
            writer.write(sequence)
            writer.write(Array(reason.utf8))
        case .launch(let payload):
            writer.write(payload)
        case .appState(let state):
            writer.write(state.rawValue)
        case .watchState(let state):
            writer.write(state.flags)
        case .fileOffer(let key, let size, let digest, let metadata):
            Self.requireSize(digest, Self.digestByteCount, "file digest")
            Self.write(key, into: &writer)
            writer.write(size)
            writer.write(digest)
            writer.write(Array(metadata.utf8))
        case .fileResume(let key, let offset):
            Self.write(key, into: &writer)
            writer.write(offset)
        case .fileChunk(let key, let offset, let data):
            writer.reserve(InstanceID.byteCount + 16 + data.count)
            Self.write(key, into: &writer)
            writer.write(offset)
            writer.write(data)
        case .fileDone(let key, let code, let reason):
            Self.write(key, into: &writer)
            writer.write(code.rawValue)
            writer.write(Array(reason.utf8))
        case .fileCancel(let key):
            Self.write(key, into: &writer)
        }
        return writer.bytes
    }

    private static func write(_ key: TransferKey, into writer: inout ByteWriter) {
        writer.write(key.queue.bytes)
        writer.write(key.sequence)
    }

    /// Bit 0 of a message frame's flags byte.
    static let wantsReplyFlag: UInt8 = 0x01

    /// Stops the process when a locally built frame carries a field of the wrong size.
    private static func requireSize(_ bytes: [UInt8], _ size: Int, _ field: String) {
        // Nonces come from the CSPRNG and proofs from HMAC-SHA256, both fixed-size; another size is a bug here.
        precondition(bytes.count == size, "\(field) must be \(size) bytes, got \(bytes.count)")
    }
}
