import Foundation
import LinkProtocol
import Trace

// MARK: The durable outboxes

extension LinkEndpoint {
    /// `transferUserInfo`: `completion` gets the sequence once the transfer is on disk (fdatasync), or
    /// the reason it was refused; called on the loop.
    /// `run` only labels the journal's lines.
    package func transferUserInfo(
        _ payload: [UInt8], run: String? = nil, completion: @escaping (Result<UInt64, any Error>) -> Void
    ) {
        requestTransfer(payload, run: run, completion: completion)
    }

    /// Checks the transfer's admission, then has the engine number it and queues its append for the
    /// next group commit; the completion waits under the append's key.
    private func requestTransfer(
        _ payload: [UInt8], run: String?, completion: @escaping (Result<UInt64, any Error>) -> Void
    ) {
        loop.preconditionInLoop()
        if let error = engine.admission(of: .userInfo, bytes: payload.count) {
            completion(.failure(error))
            return
        }
        let request = WaitingAppend(
            sequence: 0, payload: payload, complication: false, enqueuedAtMicros: Self.wallClockMicros(),
            run: run)
        guard let key = number(request) else {
            completion(.failure(LinkError.deliveryFailed(reason: "no outbox for this transfer")))
            return
        }
        transferWaiters[key] = completion
        commitWaitingAppends()
    }

    /// Has the engine number `request` and queues its append; nil when the engine gave it none. The
    /// append is queued now, not behind the actions in hand: a producer never waits for a state
    /// write it has nothing to do with. (The engine's other answer is a log line.)
    private func number(_ request: WaitingAppend) -> AppendKey? {
        var key: AppendKey?
        for action in engine.handle(.transferRequested(payload: request.payload, complication: request.complication)) {
            guard case .appendTransfer(let sequence, _, _) = action else {
                perform(action)
                continue
            }
            var append = request
            append.sequence = sequence
            appendsWaiting.append(append)
            key = append.key
        }
        return key
    }

    /// Where a received file waits for the app (valid from `fileReceived` until `fileProcessed`).
    package func inboxPath(for key: TransferKey) -> String { state.files.inboxPath(key) }

    /// Group commit across the loop: the transfers asked for while a commit is on the outbox thread
    /// wait here and go together in the next one — one write each, one `fdatasync` per outbox for
    /// all — in the order they were asked for, which is their sequence order. (One blocking append
    /// per transfer on a concurrent queue batched only as many transfers as Dispatch gave it threads:
    /// two on a two-core machine.)
    ///
    /// An append the log refuses (too large for it, a write the disk refused) fails alone. The log
    /// wrote none of the appends numbered after it (it never leaves a gap): the engine issues the
    /// number again, and those appends, and the ones waiting, are numbered anew and go in the next
    /// commit, their producers none the wiser.
    private func commitWaitingAppends() {
        startCommit { [self] batch, results in
            // Every waiter of the batch is taken out first: numbers are about to be issued again.
            let waiters = batch.map { transferWaiters.removeValue(forKey: $0.key) }
            var answers: [(Waiter?, Result<UInt64, any Error>)] = []
            var refused: [Bool: UInt64] = [:]
            var again: [(WaitingAppend, Waiter?)] = []
            for (index, (append, result)) in zip(batch, results).enumerated() {
                switch result {
                case .success:
                    journalQueued(append)
                    handle(
                        append.complication
                            ? .complicationPersisted(sequence: append.sequence, payload: append.payload)
                            : .transferPersisted(sequence: append.sequence, payload: append.payload))
                    answers.append((waiters[index], .success(append.sequence)))
                case .failure where refused[append.complication] != nil:
                    again.append((append, waiters[index]))
                case .failure(let error):
                    refused[append.complication] = append.sequence
                    answers.append((waiters[index], .failure(error)))
                }
            }
            for (complication, sequence) in refused {
                handleAtOnce(.transfersNotPersisted(from: sequence, complication: complication))
                for append in appendsWaiting where append.complication == complication {
                    again.append((append, transferWaiters.removeValue(forKey: append.key)))
                }
                appendsWaiting.removeAll { $0.complication == complication }
            }
            // Numbered anew in their order, before any producer hears back (and asks again).
            for (append, waiter) in again {
                if let key = number(append) {
                    transferWaiters[key] = waiter
                } else {
                    answers.append(
                        (waiter, .failure(LinkError.deliveryFailed(reason: "no outbox for this transfer"))))
                }
            }
            // The commit counts as in flight until every producer has heard back: what they ask
            // for next goes in one commit, not the first alone and the rest in the one after.
            for (waiter, answer) in answers { waiter?(answer) }
            appendInFlight = false
            commitWaitingAppends()
        }
    }

    /// Starts a group commit of the waiting appends, unless one is in flight: `landed` gets the batch
    /// and its outcomes, in order, on the loop, and ends the commit (`appendInFlight = false`).
    func startCommit(
        _ landed: @escaping @Sendable (_ batch: [WaitingAppend], _ results: [Result<Void, any Error>]) -> Void
    ) {
        guard !appendInFlight, !appendsWaiting.isEmpty else { return }
        appendInFlight = true
        groupCommits += 1
        let batch = appendsWaiting
        appendsWaiting = []
        let (outbox, complicationOutbox) = (state.outbox, state.complicationOutbox)
        outboxQueue.async { [loop] in
            let results = Self.append(batch, outbox: outbox, complicationOutbox: complicationOutbox)
            loop.execute { landed(batch, results) }
        }
    }

    func journalQueued(_ append: WaitingAppend) {
        guard let journal else { return }
        let cause = append.complication ? complicationCause(append.sequence) : transferCause(append.sequence)
        journal.record(
            .transferQueued, cause: cause, run: append.run, detail: append.complication ? "complication" : nil)
    }
}

extension LinkEndpoint {
    /// Appends each outbox's share of `batch` in order (on the outbox thread); the results come back
    /// in the batch's order.
    static func append(
        _ batch: [WaitingAppend], outbox: TransferLog, complicationOutbox: TransferLog
    ) -> [Result<Void, any Error>] {
        func records(_ complication: Bool) -> [(sequence: UInt64, payload: [UInt8], enqueuedAtMicros: Int64)] {
            batch.filter { $0.complication == complication }.map { ($0.sequence, $0.payload, $0.enqueuedAtMicros) }
        }
        var complications =
            batch.contains(where: \.complication) ? complicationOutbox.append(numbered: records(true))[...] : []
        var ordinary = outbox.append(numbered: records(false))[...]
        // A log answers every record it is given; a missing answer is never taken for a write.
        return batch.map { append in
            (append.complication ? complications.popFirst() : ordinary.popFirst())
                ?? .failure(
                    LinkError.deliveryFailed(reason: "the outbox gave no outcome for transfer \(append.sequence)"))
        }
    }
}

/// A `transferUserInfo` caller waiting for its transfer's outcome.
typealias Waiter = (Result<UInt64, any Error>) -> Void

/// Which transfer an append is: its outbox and the sequence the engine gave it.
struct AppendKey: Hashable, Sendable {
    var complication: Bool
    var sequence: UInt64
}

/// A transfer waiting for the next group commit.
struct WaitingAppend: Sendable {
    var sequence: UInt64
    var payload: [UInt8]
    var complication: Bool
    var enqueuedAtMicros: Int64
    var run: String?

    var key: AppendKey { AppendKey(complication: complication, sequence: sequence) }
}

extension LinkEndpoint {
    /// Outstanding transfers with their age and size, oldest first: the complication outbox's (the
    /// newest tagged current), then the ordinary ones.
    /// `engine`: the one a node holds, when the endpoint is driven.
    package func outstandingTransfers(engine: LinkEngine? = nil) -> [OutstandingTransfer] {
        loop.preconditionInLoop()
        let engine = engine ?? self.engine
        let complications = Self.listing(state.complicationOutbox.pending(), engine.outstandingComplications)
        return complications.enumerated().map { index, transfer in
            var tagged = transfer
            tagged.isCurrentComplicationInfo = index == complications.count - 1
            return tagged
        } + Self.listing(state.outbox.pending(), engine.outstandingTransfers)
    }

    private static func listing(
        _ records: [TransferRecord], _ engine: ArraySlice<OutboundTransfer>
    ) -> [OutstandingTransfer] {
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
