import Foundation
import LinkProtocol
import Trace

// MARK: The durable outboxes (userInfo, complications, files)

extension LinkEndpoint {
    /// `transferUserInfo`: `completion` gets the sequence once the transfer is on disk (fdatasync), or
    /// the reason it was refused; called on the loop.
    /// `run` only labels the journal's lines.
    package func transferUserInfo(
        _ payload: [UInt8], run: String? = nil, completion: @escaping (Result<UInt64, any Error>) -> Void
    ) {
        guard let token = admitTransfer(bytes: payload.count, completion: completion) else { return }
        appendsWaiting.append(
            WaitingAppend(token: token, payload: payload, enqueuedAtMicros: Self.wallClockMicros(), run: run))
        commitWaitingAppends()
    }

    /// `transferCurrentComplicationUserInfo`: a transfer in the complication outbox, sent ahead of
    /// ordinary userInfo; `completion` gets its sequence once it is on disk, or why it was refused.
    /// Complications are rare (a daily budget), so each is its own append and sync.
    package func transferCurrentComplicationUserInfo(
        _ payload: [UInt8], completion: @escaping (Result<UInt64, any Error>) -> Void
    ) {
        guard let token = admitTransfer(bytes: payload.count, completion: completion) else { return }
        let log = state.complicationOutbox
        let enqueuedAt = Self.wallClockMicros()
        outboxQueue.async { [loop] in
            let result = Result { try log.append(payload, enqueuedAtMicros: enqueuedAt) }
            loop.execute { [self] in
                if case .success(let sequence) = result {
                    journal?.record(.transferQueued, cause: complicationCause(sequence), detail: "complication")
                    handle(.complicationPersisted(sequence: sequence, payload: payload))
                }
                transferWaiters.removeValue(forKey: token)?(result)
            }
        }
    }

    /// `transferFile`: copies the file (or the bytes) into the file outbox, hashing it, off the
    /// loop; `completion` gets the queued file once it is on disk, or why not (`fileAccessDenied`
    /// for a source that cannot be read, the session's refusals).
    package func transferFile(
        _ source: FileSource, metadata: String, completion: @escaping (Result<OutboundFile, any Error>) -> Void
    ) {
        loop.preconditionInLoop()
        if let error = engine.admission(of: .userInfo, bytes: 0) {
            completion(.failure(error))
            return
        }
        let token = nextTransferToken
        nextTransferToken += 1
        fileWaiters[token] = completion
        let store = state.files
        outboxQueue.async { [loop] in
            let result = Result { try store.enqueue(source, metadata: metadata) }
            loop.execute { [self] in
                if case .success(let file) = result { handle(.filePersisted(file)) }
                fileWaiters.removeValue(forKey: token)?(result)
            }
        }
    }

    /// Cancels an outstanding file transfer (`WCSessionFileTransfer.cancel()`).
    package func cancelFileTransfer(sequence: UInt64) throws(LinkError) {
        loop.preconditionInLoop()
        if let error = engine.fileCancellationError(sequence: sequence) { throw error }
        handle(.fileCancelRequested(sequence: sequence))
    }

    /// The app is done with a received file: what is left of it in the inbox is deleted and the
    /// sender told it was delivered.
    package func fileProcessed(_ key: TransferKey) {
        loop.preconditionInLoop()
        handle(.fileProcessed(key))
    }

    /// `outstandingFileTransfers`: files not yet done, oldest first, with the bytes acknowledged.
    package func outstandingFileTransfers() -> [OutboundFile] {
        loop.preconditionInLoop()
        return engine.outstandingFiles
    }

    /// Where a received file waits for the app (valid from `fileReceived` until `fileProcessed`).
    package func inboxPath(for key: TransferKey) -> String { state.files.inboxPath(key) }

    /// Checks a transfer's admission (answering `completion` with the refusal) and keeps the
    /// completion under a token: the completion stays on the loop, only the token crosses to the
    /// outbox thread and back.
    private func admitTransfer(
        bytes: Int, completion: @escaping (Result<UInt64, any Error>) -> Void
    ) -> UInt64? {
        loop.preconditionInLoop()
        if let error = engine.admission(of: .userInfo, bytes: bytes) {
            completion(.failure(error))
            return nil
        }
        let token = nextTransferToken
        nextTransferToken += 1
        transferWaiters[token] = completion
        return token
    }

    /// Group commit across the loop: the transfers asked for while a commit is on the outbox thread
    /// wait here and go together in the next one — one write each, one `fdatasync` for all — in the
    /// order they were asked for. (One blocking append per transfer on a concurrent queue batched
    /// only as many transfers as Dispatch gave it threads: two on a two-core machine.)
    private func commitWaitingAppends() {
        guard !appendInFlight, !appendsWaiting.isEmpty else { return }
        appendInFlight = true
        let batch = appendsWaiting
        appendsWaiting = []
        let outbox = state.outbox
        outboxQueue.async { [loop] in
            let results = outbox.append(batch: batch.map { ($0.payload, $0.enqueuedAtMicros) })
            loop.execute { [self] in
                appendInFlight = false
                for (append, result) in zip(batch, results) {
                    if case .success(let sequence) = result {
                        journal?.record(.transferQueued, cause: transferCause(sequence), run: append.run)
                        handle(.transferPersisted(sequence: sequence, payload: append.payload))
                    }
                    transferWaiters.removeValue(forKey: append.token)?(result)
                }
                commitWaitingAppends()
            }
        }
    }
}

/// A `transferUserInfo` waiting for the next group commit.
struct WaitingAppend: Sendable {
    var token: UInt64
    var payload: [UInt8]
    var enqueuedAtMicros: Int64
    var run: String?
}

extension LinkEndpoint {
    /// Outstanding transfers with their age and size, oldest first: the complication outbox's (the
    /// newest tagged current), then the ordinary ones.
    package func outstandingTransfers() -> [OutstandingTransfer] {
        loop.preconditionInLoop()
        let complications = Self.listing(state.complicationOutbox.pending(), engine.outstandingComplications)
        return complications.enumerated().map { index, transfer in
            var tagged = transfer
            tagged.isCurrentComplicationInfo = index == complications.count - 1
            return tagged
        } + Self.listing(state.outbox.pending(), engine.outstandingTransfers)
    }

    private static func listing(_ records: [TransferRecord], _ engine: [OutboundTransfer]) -> [OutstandingTransfer] {
        let nowMicros = wallClockMicros()
        let sent = Dictionary(uniqueKeysWithValues: engine.map { ($0.sequence, $0.everSent) })
        return records.map { record in
            OutstandingTransfer(
                sequence: record.sequence, bytes: record.payload.count,
                ageSeconds: Double(max(0, nowMicros - record.enqueuedAtMicros)) / 1_000_000,
                sent: sent[record.sequence] ?? false)
        }
    }
}
