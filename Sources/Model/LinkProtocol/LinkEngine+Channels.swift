/// One transfer waiting in the sender's durable outbox.
package struct OutboundTransfer: Equatable, Sendable {
    package var sequence: UInt64
    package var payload: [UInt8]
    /// Put on the wire at least once (or recovered from disk): it may have been delivered.
    package var everSent: Bool
    /// Sent on the current link and not yet acknowledged.
    var inFlight: Bool
}

extension LinkEngine {
    // MARK: Context (phone → watch)

    mutating func contextUpdated(_ payload: [UInt8], force: Bool, into actions: inout [Action]) {
        precondition(configuration.role == .phone, "only the phone updates the application context")
        if let error = admission(of: .context, bytes: payload.count) {
            actions.append(.notify(.contextRefused(error)))
            return
        }
        if !force, !contextGenerations.restoredUnconfirmed, let slot = contextSlot, slot.payload == payload {
            actions.append(.notify(.contextQueued(generation: slot.generation)))
            return
        }
        putInNextSlot(payload, reportingQueued: true, into: &actions)
    }

    /// `payload` in the slot under the next generation: written, and sent when the watch can take
    /// it. Sent before its write lands, unless the generations sent would run too far ahead of the
    /// slots on disk (`ContextGenerations`): the document it carries is durable already.
    private mutating func putInNextSlot(_ payload: [UInt8], reportingQueued: Bool, into actions: inout [Action]) {
        let (generation, persistFirst) = contextGenerations.next()
        let slot = ContextSlot(
            generation: generation, payload: payload, acknowledgedGeneration: contextSlot?.acknowledgedGeneration ?? 0)
        contextSlot = slot
        if persistFirst { actions.append(.persistContextSlot(slot, flushed: true)) }
        if reportingQueued { actions.append(.notify(.contextQueued(generation: generation))) }
        sendContextIfUnacknowledged(into: &actions)
        if !persistFirst { actions.append(.persistContextSlot(slot, flushed: false)) }
    }

    /// Sends the slot when linked and the watch has not acknowledged its generation. A newer slot sent
    /// while an older one is in flight supersedes it; the watch ignores the older on arrival.
    mutating func sendContextIfUnacknowledged(into actions: inout [Action]) {
        guard configuration.role == .phone, let current = link, let slot = contextSlot,
            slot.acknowledgedGeneration < slot.generation, watchState.sendRefusal == nil
        else { return }
        actions.append(
            .send(current.connection, .context(generation: slot.generation, sender: instance, payload: slot.payload)))
    }

    /// The acknowledgement is not written on its own: it rides with the next slot written. A phone
    /// restarted before that sends the watch a generation it holds, which the watch only acknowledges;
    /// an edit's round trip saves a slot write and its fsyncs.
    mutating func contextAcknowledged(generation: UInt64, sender: InstanceID, into actions: inout [Action]) {
        guard sender == instance, var slot = contextSlot, generation > slot.acknowledgedGeneration else { return }
        if generation > contextGenerations.used {
            // The watch holds a generation of this phone past any it knows of: this state directory
            // went back (restored from an older backup). What the watch holds is not this slot: the
            // slot goes again, numbered past it, by the link itself (the app's update was admitted
            // when it was made, and a watch unpaired now would refuse it again: seed 9501).
            actions.append(.log(.phoneWentBack(watchHolds: generation, newest: slot.generation)))
            contextGenerations.passed(generation)
            putInNextSlot(slot.payload, reportingQueued: false, into: &actions)
            return
        }
        slot.acknowledgedGeneration = min(generation, slot.generation)
        contextSlot = slot
        actions.append(.notify(.contextAcknowledged(generation: slot.acknowledgedGeneration)))
    }

    /// The watch persists a newer context before the app sees it, then acknowledges. A generation
    /// below the one applied from the same phone instance, or the same one with the same contents, is
    /// only acknowledged, with the generation the watch holds (a phone whose state went back learns
    /// it is behind); any generation from a new instance (a reset phone) is accepted and replaces the
    /// old wholesale.
    mutating func contextReceived(
        generation: UInt64, sender: InstanceID, payload: [UInt8], into actions: inout [Action]
    ) {
        guard let current = link else { return }
        if let last = receivedContext, last.sender == sender, generation <= last.generation {
            // The same generation with other contents only comes from a phone whose state went back
            // (a crashed one numbers past what it may have sent): it is the phone's newest, taken.
            if generation < last.generation || payload == last.payload {
                actions.append(.send(current.connection, .contextAck(generation: last.generation, sender: sender)))
                return
            }
            actions.append(.log(.contextGenerationReused(generation)))
        }
        let received = ReceivedContext(sender: sender, generation: generation, payload: payload)
        receivedContext = received
        actions.append(.persistReceivedContext(received))
        actions.append(.notify(.contextReceived(received)))
        actions.append(.send(current.connection, .contextAck(generation: generation, sender: sender)))
    }

    // MARK: Messages (both ways, reachable only)

    /// `sendMessage`, or `sendMessageData` when `asData`: the same admission, reachability, reply
    /// deadline and order (one connection, one id space); only the frame kind differs.
    mutating func messageSent(
        id: UInt64, payload: [UInt8], wantsReply: Bool, asData: Bool, now: LinkInstant, into actions: inout [Action]
    ) {
        if let error = admission(of: .message, bytes: payload.count) {
            actions.append(.notify(.messageCompleted(id: id, .failed(error))))
            return
        }
        guard isReachable, let current = link else {
            actions.append(.notify(.messageCompleted(id: id, .failed(.notReachable))))
            return
        }
        awaitingReply[id] = AwaitingReply(
            deadline: now.advanced(by: configuration.messageReplyTimeout), bytes: payload.count)
        let frame: LinkFrame =
            asData
            ? .messageData(id: id, wantsReply: wantsReply, payload: payload)
            : .message(id: id, wantsReply: wantsReply, payload: payload)
        actions.append(.send(current.connection, frame))
    }

    /// A message from the peer: over this side's limit it is refused with `payloadTooLarge` (its
    /// reason is the limit in decimal bytes) without reaching the app.
    mutating func messageReceived(
        id: UInt64, payload: [UInt8], wantsReply: Bool, asData: Bool, into actions: inout [Action]
    ) {
        let limit = configuration.maximumMessageBytes
        guard payload.count <= limit else {
            if let current = link {
                let refusal = LinkFrame.messageFailed(id: id, code: .payloadTooLarge, reason: "\(limit)")
                actions.append(.send(current.connection, refusal))
            }
            return
        }
        actions.append(
            .notify(
                asData
                    ? .messageDataReceived(id: id, payload: payload, wantsReply: wantsReply)
                    : .messageReceived(id: id, payload: payload, wantsReply: wantsReply)))
    }

    mutating func messageAnswered(id: UInt64, _ answer: MessageAnswer, into actions: inout [Action]) {
        guard let current = link else { return }
        switch answer {
        case .reply(let payload) where payload.count > configuration.maximumMessageBytes:
            let limit = configuration.maximumMessageBytes
            let reason = "the reply of \(payload.count) bytes exceeds the \(limit)-byte limit"
            actions.append(.send(current.connection, .messageFailed(id: id, code: .messageReplyFailed, reason: reason)))
        case .reply(let payload):
            actions.append(.send(current.connection, .messageReply(id: id, payload: payload)))
        case .handled:
            actions.append(.send(current.connection, .messageDelivered(id: id)))
        case .failed(let code, let reason):
            actions.append(.send(current.connection, .messageFailed(id: id, code: code, reason: reason)))
        }
    }

    /// The peer's `messageFailed`, as the error its code names.
    mutating func messageFailed(id: UInt64, code: MessageFailureCode, reason: String, into actions: inout [Action]) {
        let error: LinkError
        switch code {
        case .deliveryFailed: error = .deliveryFailed(reason: reason)
        case .messageReplyFailed: error = .messageReplyFailed(reason: reason)
        case .payloadUnsupportedTypes: error = .payloadUnsupportedTypes(reason: reason)
        case .payloadTooLarge:
            guard let limit = Int(reason), let bytes = awaitingReply[id]?.bytes else {
                error = .deliveryFailed(reason: "payloadTooLarge: \(reason)")
                break
            }
            error = .payloadTooLarge(size: bytes, limit: limit)
        }
        completeMessage(id: id, .failed(error), into: &actions)
    }

    /// Completes a send exactly once; a reply for a message that already timed out is dropped.
    mutating func completeMessage(id: UInt64, _ outcome: MessageOutcome, into actions: inout [Action]) {
        guard awaitingReply.removeValue(forKey: id) != nil else {
            actions.append(.log(.lateAnswerDropped(messageID: id)))
            return
        }
        actions.append(.notify(.messageCompleted(id: id, outcome)))
    }

    mutating func expireMessages(now: LinkInstant, into actions: inout [Action]) {
        for (id, awaiting) in awaitingReply.sorted(by: { $0.key < $1.key }) where awaiting.deadline <= now {
            awaitingReply[id] = nil
            actions.append(.notify(.messageCompleted(id: id, .failed(.messageReplyTimedOut))))
        }
    }

    // MARK: UserInfo (both ways, durable FIFO)

    mutating func transferRequested(_ payload: [UInt8], complication: Bool, into actions: inout [Action]) {
        if complication {
            guard var complications else { return actions.append(.log(.noComplicationOutbox)) }
            let sequence = complications.issue()
            self.complications = complications
            actions.append(.appendTransfer(sequence: sequence, payload: payload, complication: true))
        } else {
            actions.append(.appendTransfer(sequence: outbox.issue(), payload: payload, complication: false))
        }
    }

    mutating func transferPersisted(sequence: UInt64, payload: [UInt8], into actions: inout [Action]) {
        outbox.append(sequence: sequence, payload: payload)
        sendTransfers(into: &actions)
    }

    /// Puts pending transfers on the wire in order, keeping at most `transferWindow` unacknowledged
    /// per queue: complication transfers first (ahead of every ordinary one not yet sent), each
    /// queue in its own order. Nothing goes to a watch that cannot take it (unpaired, app removed).
    mutating func sendTransfers(into actions: inout [Action]) {
        guard let current = link, configuration.role == .watch || watchState.sendRefusal == nil else { return }
        if var complications {
            for transfer in complications.takeSendable(window: configuration.transferWindow) {
                let frame = LinkFrame.userInfo(
                    queue: complications.queue, sequence: transfer.sequence, payload: transfer.payload)
                actions.append(.send(current.connection, frame))
            }
            self.complications = complications
        }
        for transfer in outbox.takeSendable(window: configuration.transferWindow) {
            actions.append(
                .send(
                    current.connection,
                    .userInfo(queue: outbox.queue, sequence: transfer.sequence, payload: transfer.payload)))
        }
    }

    /// The receiver is done with transfer `key`: processed, or `refused` (its app could not process
    /// it). Either way it leaves the outbox; a refusal is reported as the transfer's failure.
    mutating func transferAcknowledged(_ key: TransferKey, refused: LinkError? = nil, into actions: inout [Action]) {
        if var complications, key.queue == complications.queue {
            guard let finished = complications.remove(sequence: key.sequence) else { return }
            self.complications = complications
            actions.append(.removeComplications(sequences: [key.sequence]))
            if let refused {
                actions.append(
                    .notify(
                        .transferFailed(
                            sequence: key.sequence, complication: true, payload: finished.payload, refused)))
            } else {
                actions.append(.notify(.complicationFinished(sequence: key.sequence)))
            }
            sendTransfers(into: &actions)
            return
        }
        guard key.queue == outbox.queue, let finished = outbox.remove(sequence: key.sequence) else { return }
        actions.append(.removeTransfers(sequences: [key.sequence], cancelled: false))
        if let refused {
            actions.append(
                .notify(
                    .transferFailed(sequence: key.sequence, complication: false, payload: finished.payload, refused)))
        } else {
            actions.append(.notify(.transferFinished(sequence: key.sequence, payload: finished.payload)))
        }
        sendTransfers(into: &actions)
    }

    /// A duplicate (one the queue's mark has applied, `QueueMark`) is acknowledged again without
    /// reaching the app; a transfer the app is still processing is not delivered twice.
    mutating func userInfoReceived(_ key: TransferKey, payload: [UInt8], into actions: inout [Action]) {
        guard let current = link else { return }
        let digest = QueueMark.digest(ofPayload: payload)
        if transferMarks[key.queue]?.isDuplicate(sequence: key.sequence, digest: digest) == true {
            actions.append(.send(current.connection, .userInfoAck(queue: key.queue, sequence: key.sequence)))
            return
        }
        guard deliveredToApp.insert(key).inserted else { return }
        if let mark = transferMarks[key.queue], key.sequence <= mark.highest {
            actions.append(.log(.senderWentBack(key, highest: mark.highest)))
        }
        inProcess[key] = digest
        actions.append(.notify(.userInfoReceived(key, payload: payload)))
    }

    /// One mark write per queue (after all its keys), then an acknowledgement of each new key — or,
    /// when the app could not process them (`refused`), a refusal, so the sender reports them failed.
    mutating func transfersProcessed(_ keys: [TransferKey], refused: String? = nil, into actions: inout [Action]) {
        var fresh: [TransferKey] = []
        var changed: Set<InstanceID> = []
        for key in keys {
            deliveredToApp.remove(key)
            // No digest: the app processed this key twice (handed to it again after a lost link) and
            // the first time took the digest, or the engine never handed it (a test feeding the node).
            let known = inProcess.removeValue(forKey: key)
            let digest = known ?? QueueMark.unknown
            var mark = transferMarks[key.queue] ?? QueueMark()
            if known == nil
                ? mark.holds(sequence: key.sequence) : mark.isDuplicate(sequence: key.sequence, digest: digest)
            {
                continue
            }
            mark.apply(sequence: key.sequence, digest: digest, window: configuration.transferWindow)
            transferMarks[key.queue] = mark
            changed.insert(key.queue)
            fresh.append(key)
        }
        for queue in changed.sorted(by: { $0.description < $1.description }) {
            actions.append(.persistTransferMark(queue: queue, transferMarks[queue]!))
        }
        guard let current = link else { return }
        for key in fresh {
            if let refused {
                actions.append(
                    .send(
                        current.connection, .userInfoRefused(queue: key.queue, sequence: key.sequence, reason: refused))
                )
            } else {
                actions.append(.send(current.connection, .userInfoAck(queue: key.queue, sequence: key.sequence)))
            }
        }
    }

    mutating func cancelTransfer(sequence: UInt64, into actions: inout [Action]) {
        guard let transfer = outbox.pending.first(where: { $0.sequence == sequence }) else {
            actions.append(.log(.unknownTransferCancelIgnored(sequence: sequence)))
            actions.append(.notify(.transferCancelRefused(sequence: sequence, .unknownTransfer(sequence: sequence))))
            return
        }
        // Anything not acknowledged can be cancelled; one already sent may have been delivered, and
        // then the receiver keeps it (its queue mark acknowledges a late copy without delivering).
        if transfer.everSent { actions.append(.log(.transferCancelledAfterSending(sequence: sequence))) }
        _ = outbox.remove(sequence: sequence)
        actions.append(.removeTransfers(sequences: [sequence], cancelled: true))
        actions.append(
            .notify(.transferCancelled(sequence: sequence, payload: transfer.payload, wasSent: transfer.everSent)))
    }

    /// A complication transfer not acknowledged yet leaves its outbox, sent or not (the watch keeps
    /// one it already has: its queue mark acknowledges a late copy without delivering it).
    mutating func cancelComplication(sequence: UInt64, into actions: inout [Action]) {
        guard var complications, let transfer = complications.remove(sequence: sequence) else {
            actions.append(.log(.unknownTransferCancelIgnored(sequence: sequence)))
            actions.append(
                .notify(.complicationCancelEnded(sequence: sequence, .failure(.unknownTransfer(sequence: sequence)))))
            return
        }
        self.complications = complications
        if transfer.everSent { actions.append(.log(.transferCancelledAfterSending(sequence: sequence))) }
        actions.append(.removeComplications(sequences: [sequence]))
        actions.append(.notify(.complicationCancelEnded(sequence: sequence, .success(transfer.everSent))))
        sendTransfers(into: &actions)
    }

    /// Why cancelling `sequence` would be refused (it is not outstanding), or nil if it will be cancelled.
    package func cancellationError(sequence: UInt64) -> LinkError? {
        outbox.pending.contains { $0.sequence == sequence } ? nil : .unknownTransfer(sequence: sequence)
    }

    // MARK: Launch and app state

    mutating func launchRequested(_ payload: [UInt8], into actions: inout [Action]) {
        guard configuration.role == .phone, let current = link, watchState.sendRefusal == nil else {
            actions.append(.notify(.launchDropped))
            actions.append(.log(.launchDropped(reason: watchState.sendRefusal)))
            return
        }
        actions.append(.send(current.connection, .launch(payload: payload)))
    }

    mutating func localAppStateChanged(foreground: Bool, into actions: inout [Action]) {
        guard configuration.role == .watch, foreground != localAppForeground else { return }
        localAppForeground = foreground
        if let current = link {
            actions.append(.send(current.connection, .appState(foreground ? .foreground : .background)))
        }
    }

    /// The watch's own state changed: kept durably, then reported to the phone when linked.
    mutating func localWatchStateChanged(_ state: WatchState, into actions: inout [Action]) {
        guard configuration.role == .watch, state != watchState else { return }
        watchState = state
        actions.append(.persistWatchState(state))
        if let current = link { actions.append(.send(current.connection, .watchState(state))) }
    }

    /// The watch reported its state: kept durably and notified; a watch that can take sends again
    /// gets the context slot if it has not acknowledged it.
    mutating func peerWatchStateReceived(_ state: WatchState, into actions: inout [Action]) {
        guard state != watchState else { return }
        watchState = state
        actions.append(.persistWatchState(state))
        actions.append(.notify(.watchStateChanged(state)))
        sendContextIfUnacknowledged(into: &actions)
        sendTransfers(into: &actions)
        offerFile(into: &actions)
    }
}
