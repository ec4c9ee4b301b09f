import LinkProtocol

// MARK: Requests answered by notifications (a node's way in)

extension LinkEndpoint {
    /// `updateApplicationContext` without the throw: the outcome comes as the `contextQueued` or
    /// `contextRefused` notification. Handled at once, as `updateApplicationContext` is.
    package func updateContext(_ payload: [UInt8], force: Bool) {
        loop.preconditionInLoop()
        handleAtOnce(.contextUpdated(payload: payload, force: force, now: now))
    }

    /// `cancelTransfer` without the throw: the outcome comes as the `transferCancelled` or
    /// `transferCancelRefused` notification.
    package func requestTransferCancel(sequence: UInt64) {
        loop.preconditionInLoop()
        handle(.transferCancelRequested(sequence: sequence))
    }

    /// `sendMessage` (or `sendMessageData` when `asData`) under an id the caller issued: a node numbers
    /// its own messages and hears the outcome as the `messageCompleted(id:)` notification, with no
    /// completion kept here. An endpoint is driven either this way or through the numbering calls,
    /// never both (their ids would meet). Loop-only; `run` only labels the journal's lines.
    package func sendMessage(id: UInt64, _ payload: [UInt8], wantsReply: Bool, run: String?, asData: Bool) {
        loop.preconditionInLoop()
        journalAttempt(id, run: run)
        handle(
            asData
                ? .messageDataSent(id: id, payload: payload, wantsReply: wantsReply, now: now)
                : .messageSent(id: id, payload: payload, wantsReply: wantsReply, now: now))
    }

    /// Journals a message's attempt and keeps its run for the outcome's line.
    package func journalAttempt(_ id: UInt64, run: String?) {
        journal?.record(.messageAttempt, cause: messageCause(sender: state.instance, id), run: run)
        if let run { messageRuns[id] = run }
    }
}
