/// The sender side of transferFile: the durable file outbox's files, in sequence order. One file is
/// on the wire at a time (the oldest), so the receiver's per-queue mark (`QueueMark`) names every file
/// it finished; the durable copy (the bytes, size, digest, metadata) lives in the shell's store.
struct FileOutbox: Sendable, Equatable {
    let queue: InstanceID
    var pending: [OutboundFile]
    /// The sequence the next file asked for gets (the store checks it, never issues it).
    var nextIssued: UInt64
}

extension LinkEngine {
    /// The bytes of file data in one `fileChunk`: the configured chunk, or less when frames are small.
    var fileChunkBytes: Int {
        max(1, min(configuration.fileChunkBytes, configuration.maximumFrameLength - 64))
    }

    // MARK: Sending

    /// The app asks for a file transfer: numbered here, in call order, and copied by the shell.
    mutating func fileRequested(_ source: FileSource, metadata: String, into actions: inout [Action]) {
        guard var outbox = files else { return actions.append(.log(.noFileOutbox)) }
        let sequence = outbox.nextIssued
        outbox.nextIssued += 1
        files = outbox
        actions.append(.enqueueFile(sequence: sequence, source, metadata: metadata))
    }

    /// A file is on disk in the outbox: it joins the queue, and is offered if it is the oldest.
    mutating func filePersisted(_ file: OutboundFile, into actions: inout [Action]) {
        guard var outbox = files, !outbox.pending.contains(where: { $0.sequence == file.sequence }) else { return }
        outbox.pending.append(file)
        outbox.pending.sort { $0.sequence < $1.sequence }
        outbox.nextIssued = max(outbox.nextIssued, file.sequence + 1)
        files = outbox
        offerFile(into: &actions)
    }

    /// Offers the oldest file on the link, once per link.
    mutating func offerFile(into actions: inout [Action]) {
        guard let current = link, configuration.role == .watch || watchState.sendRefusal == nil,
            var outbox = files, var head = outbox.pending.first, !head.offered
        else { return }
        head.offered = true
        head.nextOffset = nil
        outbox.pending[0] = head
        files = outbox
        let key = TransferKey(queue: outbox.queue, sequence: head.sequence)
        actions.append(
            .send(current.connection, .fileOffer(key, size: head.size, digest: head.digest, metadata: head.metadata)))
    }

    /// The receiver holds `[0, offset)`: that much is acknowledged, and the rest goes from there,
    /// at most `fileWindowChunks` chunks ahead of the acknowledgement (so heartbeats, messages and
    /// the context never wait behind more than that on the connection).
    mutating func fileResumed(_ key: TransferKey, offset: UInt64, now: LinkInstant, into actions: inout [Action]) {
        guard var outbox = files, key.queue == outbox.queue, var head = outbox.pending.first,
            head.sequence == key.sequence, head.offered
        else { return }
        guard offset <= head.size else {
            violation(
                "fileResume past the end of file \(key) (\(offset) of \(head.size) bytes)", now: now, into: &actions)
            return
        }
        if head.nextOffset == nil || offset < head.acknowledged { head.nextOffset = offset }
        head.acknowledged = offset
        outbox.pending[0] = head
        files = outbox
        sendFileChunks(into: &actions)
    }

    /// Puts the head file's next chunks on the wire, within the window.
    mutating func sendFileChunks(into actions: inout [Action]) {
        guard let current = link, var outbox = files, var head = outbox.pending.first, var next = head.nextOffset
        else { return }
        let chunk = UInt64(fileChunkBytes)
        let window = chunk * UInt64(max(1, configuration.fileWindowChunks))
        let key = TransferKey(queue: outbox.queue, sequence: head.sequence)
        while next < head.size, next - head.acknowledged < window {
            let length = min(chunk, head.size - next)
            actions.append(.sendFileChunk(current.connection, key, offset: next, length: Int(length)))
            next += length
        }
        head.nextOffset = next
        outbox.pending[0] = head
        files = outbox
    }

    /// The receiver ended the transfer: the file leaves the outbox and the app hears how it went.
    mutating func fileDone(_ key: TransferKey, code: FileOutcomeCode, reason: String, into actions: inout [Action]) {
        guard var outbox = files, key.queue == outbox.queue,
            let index = outbox.pending.firstIndex(where: { $0.sequence == key.sequence })
        else { return }
        outbox.pending.remove(at: index)
        files = outbox
        actions.append(.removeOutboundFile(sequence: key.sequence))
        let error: LinkError?
        switch code {
        case .delivered: error = nil
        case .insufficientSpace: error = .insufficientSpace(reason: reason)
        case .deliveryFailed: error = .deliveryFailed(reason: reason)
        }
        actions.append(.notify(.fileFinished(sequence: key.sequence, error)))
        offerFile(into: &actions)
    }

    /// `WCSessionFileTransfer.cancel()`: the file leaves the outbox; the receiver drops what it
    /// holds of it (told now if the file is on the wire).
    mutating func cancelFile(sequence: UInt64, into actions: inout [Action]) {
        guard var outbox = files, let index = outbox.pending.firstIndex(where: { $0.sequence == sequence }) else {
            actions.append(.log(.unknownFileCancelIgnored(sequence: sequence)))
            return
        }
        let file = outbox.pending.remove(at: index)
        files = outbox
        if file.offered, let current = link {
            actions.append(.send(current.connection, .fileCancel(TransferKey(queue: outbox.queue, sequence: sequence))))
        }
        actions.append(.removeOutboundFile(sequence: sequence))
        actions.append(.notify(.fileFinished(sequence: sequence, .transferCancelled)))
        offerFile(into: &actions)
    }

    /// Why cancelling file `sequence` would be refused (it is not outstanding), or nil.
    package func fileCancellationError(sequence: UInt64) -> LinkError? {
        files?.pending.contains { $0.sequence == sequence } == true ? nil : .unknownTransfer(sequence: sequence)
    }

    // MARK: Receiving

    /// An offer: already delivered (its queue's mark applied it) is answered delivered again; a file
    /// the app still has in its inbox is handed to it again; a file over the inbox quota is refused
    /// with `insufficientSpace`; otherwise the receiver resumes from what it durably holds.
    mutating func fileOffered(
        _ key: TransferKey, size: UInt64, digest: [UInt8], metadata: String, into actions: inout [Action]
    ) {
        guard let current = link else { return }
        let mark = transferMarks[key.queue]
        if mark?.isDuplicate(sequence: key.sequence, digest: QueueMark.digest(ofFile: digest)) == true {
            actions.append(.send(current.connection, .fileDone(key, code: .delivered, reason: "")))
            return
        }
        if let mark, key.sequence <= mark.highest, inbound[key] == nil {
            actions.append(.log(.senderWentBack(key, highest: mark.highest)))
        }
        // Files of a queue come one at a time: an offer of a later one makes earlier partials stale.
        for stale in inbound.keys.sorted(by: { $0.sequence < $1.sequence })
        where stale.queue == key.queue && stale.sequence < key.sequence && inbound[stale]?.stage == .receiving {
            inbound[stale] = nil
            actions.append(.discardInboundFile(stale))
        }
        if var existing = inbound[key] {
            // Offered again (a new link): resume from what is durable; bytes written past it are cut.
            if existing.stage == .receiving {
                existing.received = existing.durable
                inbound[key] = existing
                actions.append(.prepareInboundFile(key, keepingBytes: existing.durable))
                actions.append(.send(current.connection, .fileResume(key, offset: existing.durable)))
            }
            return
        }
        if restoredInbox.remove(key) != nil {
            inbound[key] = InboundFile(
                size: size, digest: digest, metadata: metadata, received: size, durable: size, stage: .delivered)
            actions.append(.notify(.fileReceived(ReceivedFile(key: key, size: size, metadata: metadata))))
            return
        }
        let reserved = inbound.values.reduce(UInt64(0)) { $0 + $1.size }
        let quota = UInt64(max(0, configuration.maximumInboxBytes))
        guard size <= quota, reserved <= quota - size else {
            let reason = "a file of \(size) bytes does not fit the \(quota)-byte inbox (\(reserved) bytes in use)"
            restoredPartials[key] = nil
            actions.append(.discardInboundFile(key))
            actions.append(.send(current.connection, .fileDone(key, code: .insufficientSpace, reason: reason)))
            return
        }
        var held = restoredPartials.removeValue(forKey: key) ?? 0
        if held > size { held = 0 }
        inbound[key] = InboundFile(
            size: size, digest: digest, metadata: metadata, received: held, durable: held, stage: .receiving)
        actions.append(.prepareInboundFile(key, keepingBytes: held))
        if held == size {
            inbound[key]?.stage = .verifying
            actions.append(.verifyInboundFile(key, digest: digest))
        } else {
            actions.append(.send(current.connection, .fileResume(key, offset: held)))
        }
    }

    /// A chunk: written, and acknowledged once the shell reports it synced
    /// (`inboundChunkPersisted`), so the loop never waits on a sync. A chunk that does not continue
    /// the file where it stands is ignored (the sender resends from the acknowledged offset on the
    /// next offer); one past its end closes the link.
    mutating func fileChunkReceived(
        _ key: TransferKey, offset: UInt64, data: [UInt8], now: LinkInstant, into actions: inout [Action]
    ) {
        guard link != nil, var file = inbound[key], file.stage == .receiving, offset == file.received else { return }
        guard UInt64(data.count) <= file.size - file.received else {
            violation("fileChunk past the end of file \(key)", now: now, into: &actions)
            return
        }
        actions.append(.writeInboundChunk(key, offset: offset, data: data))
        file.received += UInt64(data.count)
        inbound[key] = file
    }

    /// The partial is durable through `through`: acknowledged to the sender; when that is the whole
    /// file, the digest check starts.
    mutating func inboundChunkPersisted(_ key: TransferKey, through: UInt64, into actions: inout [Action]) {
        guard var file = inbound[key], file.stage == .receiving, through > file.durable, through <= file.received else {
            return
        }
        file.durable = through
        if let current = link { actions.append(.send(current.connection, .fileResume(key, offset: through))) }
        if through == file.size {
            file.stage = .verifying
            actions.append(.verifyInboundFile(key, digest: file.digest))
        }
        inbound[key] = file
    }

    /// The shell checked the whole file's digest: a match goes to the inbox and to the app; a
    /// mismatch is dropped and reported to the sender as `deliveryFailed`.
    mutating func inboundFileVerified(_ key: TransferKey, matches: Bool, into actions: inout [Action]) {
        guard var file = inbound[key], file.stage == .verifying else { return }
        guard matches else {
            inbound[key] = nil
            actions.append(.discardInboundFile(key))
            if let current = link {
                let reason = "the \(file.size) bytes received do not match the offered SHA-256"
                actions.append(.send(current.connection, .fileDone(key, code: .deliveryFailed, reason: reason)))
            }
            return
        }
        file.stage = .delivered
        inbound[key] = file
        actions.append(.deliverInboundFile(key))
        actions.append(.notify(.fileReceived(ReceivedFile(key: key, size: file.size, metadata: file.metadata))))
    }

    /// The app is done with a received file (it moved it out of the inbox, or not): what is left in
    /// the inbox is deleted (WatchConnectivity's contract), the queue's mark persisted, and the
    /// sender told the file was delivered.
    mutating func fileProcessed(_ key: TransferKey, into actions: inout [Action]) {
        guard let file = inbound[key], file.stage == .delivered else { return }
        inbound[key] = nil
        actions.append(.discardInboundFile(key))
        var mark = transferMarks[key.queue] ?? QueueMark()
        let digest = QueueMark.digest(ofFile: file.digest)
        if !mark.isDuplicate(sequence: key.sequence, digest: digest) {
            mark.apply(sequence: key.sequence, digest: digest, window: configuration.transferWindow)
            transferMarks[key.queue] = mark
            actions.append(.persistTransferMark(queue: key.queue, mark))
        }
        if let current = link {
            actions.append(.send(current.connection, .fileDone(key, code: .delivered, reason: "")))
        }
    }

    /// The sender cancelled: what arrived of the file is dropped (a file already handed to the app
    /// stays with it).
    mutating func fileCancelled(_ key: TransferKey, into actions: inout [Action]) {
        restoredPartials[key] = nil
        guard let file = inbound[key], file.stage != .delivered else { return }
        inbound[key] = nil
        actions.append(.discardInboundFile(key))
    }

    /// A new link: every file is offered again from where the receiver stands.
    mutating func filesLinkLost() {
        guard var outbox = files else { return }
        for index in outbox.pending.indices {
            outbox.pending[index].offered = false
            outbox.pending[index].nextOffset = nil
        }
        files = outbox
    }
}
