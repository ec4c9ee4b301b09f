extension LinkFrame {
    /// Parses the body of a frame whose kind byte was `kindByte`; `body` is everything after the kind byte.
    ///
    /// Strict: see the table and rules on ``LinkFrame``. ``FrameDecoder`` calls this once it holds a whole
    /// frame; it is exposed for tests and tools that already split the stream.
    package static func decode(kindByte: UInt8, body: ArraySlice<UInt8>) throws(FrameError) -> LinkFrame {
        guard let kind = FrameKind(rawValue: kindByte) else { throw .unknownKind(kindByte) }
        var reader = ByteReader(kind: kind, body: body)
        let frame: LinkFrame
        switch kind {
        case .hello:
            frame = .hello(
                version: try reader.readUInt16("version"),
                role: try role(&reader),
                instance: try reader.readInstanceID("instance"),
                nonce: try reader.readBytes(nonceByteCount, "nonce")
            )
        case .challenge:
            frame = .challenge(
                version: try reader.readUInt16("version"),
                role: try role(&reader),
                instance: try reader.readInstanceID("instance"),
                nonce: try reader.readBytes(nonceByteCount, "nonce"),
                proof: try reader.readBytes(proofByteCount, "proof")
            )
        case .proof:
            frame = .proof(try reader.readBytes(proofByteCount, "proof"))
        case .welcome:
            frame = .welcome
        case .error:
            let raw = try reader.readUInt16("code")
            guard let code = LinkErrorCode(rawValue: raw) else {
                throw .malformedBody(kind: kind, reason: "unknown error code \(raw)")
            }
            frame = .error(code: code, reason: try reader.readRestAsUTF8("reason"))
        case .ping:
            frame = .ping(token: try reader.readUInt64("token"))
        case .pong:
            frame = .pong(token: try reader.readUInt64("token"))
        case .context:
            frame = .context(
                generation: try reader.readUInt64("generation"),
                sender: try reader.readInstanceID("sender instance"),
                payload: reader.readRest()
            )
        case .contextAck:
            frame = .contextAck(
                generation: try reader.readUInt64("generation"),
                sender: try reader.readInstanceID("sender instance")
            )
        case .message, .messageData:
            let id = try reader.readUInt64("id")
            let flags = try reader.readUInt8("flags")
            guard flags & ~wantsReplyFlag == 0 else {
                throw .malformedBody(kind: kind, reason: "reserved flag bits set in 0x\(String(flags, radix: 16))")
            }
            let wantsReply = flags & wantsReplyFlag != 0
            frame =
                kind == .message
                ? .message(id: id, wantsReply: wantsReply, payload: reader.readRest())
                : .messageData(id: id, wantsReply: wantsReply, payload: reader.readRest())
        case .messageReply:
            frame = .messageReply(id: try reader.readUInt64("id"), payload: reader.readRest())
        case .messageDelivered:
            frame = .messageDelivered(id: try reader.readUInt64("id"))
        case .messageFailed:
            let id = try reader.readUInt64("id")
            let raw = try reader.readUInt16("code")
            guard let code = MessageFailureCode(rawValue: raw) else {
                throw .malformedBody(kind: kind, reason: "unknown failure code \(raw)")
            }
            frame = .messageFailed(id: id, code: code, reason: try reader.readRestAsUTF8("reason"))
        case .userInfo:
            frame = .userInfo(
                queue: try reader.readInstanceID("queue"),
                sequence: try reader.readUInt64("sequence"),
                payload: reader.readRest()
            )
        case .userInfoAck:
            frame = .userInfoAck(queue: try reader.readInstanceID("queue"), sequence: try reader.readUInt64("sequence"))
        case .userInfoRefused:
            frame = .userInfoRefused(
                queue: try reader.readInstanceID("queue"), sequence: try reader.readUInt64("sequence"),
                reason: try reader.readRestAsUTF8("reason"))
        case .launch:
            frame = .launch(payload: reader.readRest())
        case .appState:
            let raw = try reader.readUInt8("state")
            guard let state = AppState(rawValue: raw) else {
                throw .malformedBody(kind: kind, reason: "unknown app state \(raw)")
            }
            frame = .appState(state)
        case .watchState:
            let flags = try reader.readUInt8("flags")
            guard let state = WatchState(flags: flags) else {
                throw .malformedBody(kind: kind, reason: "reserved flag bits set in 0x\(String(flags, radix: 16))")
            }
            frame = .watchState(state)
        case .fileOffer:
            frame = .fileOffer(
                try fileKey(&reader), size: try reader.readUInt64("size"),
                digest: try reader.readBytes(digestByteCount, "digest"), metadata: try reader.readRestAsUTF8("metadata")
            )
        case .fileResume:
            frame = .fileResume(try fileKey(&reader), offset: try reader.readUInt64("offset"))
        case .fileChunk:
            frame = .fileChunk(try fileKey(&reader), offset: try reader.readUInt64("offset"), data: reader.readRest())
        case .fileDone:
            let key = try fileKey(&reader)
            let raw = try reader.readUInt16("code")
            guard let code = FileOutcomeCode(rawValue: raw) else {
                throw .malformedBody(kind: kind, reason: "unknown file outcome code \(raw)")
            }
            frame = .fileDone(key, code: code, reason: try reader.readRestAsUTF8("reason"))
        case .fileCancel:
            frame = .fileCancel(try fileKey(&reader))
        }
        try reader.expectEnd()
        return frame
    }

    /// A file transfer's key: the sender's file queue and the file's sequence in it.
    private static func fileKey(_ reader: inout ByteReader) throws(FrameError) -> TransferKey {
        TransferKey(queue: try reader.readInstanceID("queue"), sequence: try reader.readUInt64("sequence"))
    }

    /// Reads a role byte, refusing values other than phone and watch.
    private static func role(_ reader: inout ByteReader) throws(FrameError) -> LinkRole {
        let raw = try reader.readUInt8("role")
        guard let role = LinkRole(rawValue: raw) else {
            throw .malformedBody(kind: reader.kind, reason: "unknown role \(raw)")
        }
        return role
    }
}
