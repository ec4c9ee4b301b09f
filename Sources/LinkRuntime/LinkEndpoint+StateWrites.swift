import Foundation
import LinkProtocol
import Trace

// MARK: The state thread

extension LinkEndpoint {
    /// Carries out `actions` after the ones waiting, in order: on the loop, except the state writes,
    /// which go to the state thread together while the rest wait for them.
    func carryOut(_ actions: [LinkEngine.Action]) {
        actionsWaiting.append(contentsOf: actions)
        guard !carryingOut else { return }
        carryingOut = true
        defer { carryingOut = false }
        while !stateWriteInFlight, nextWaiting < actionsWaiting.count {
            guard stateWrite(actionsWaiting[nextWaiting]) != nil else {
                nextWaiting += 1
                perform(actionsWaiting[nextWaiting - 1])
                continue
            }
            var writes: [(what: String, write: @Sendable () throws -> Void)] = []
            while nextWaiting < actionsWaiting.count, let write = stateWrite(actionsWaiting[nextWaiting]) {
                writes.append(write)
                nextWaiting += 1
            }
            stateWriteInFlight = true
            stateQueue.async { [loop, writes] in
                var failure: String?
                for (what, write) in writes where failure == nil {
                    do { try write() } catch { failure = "\(what) failed: \(error)" }
                }
                loop.execute { [self, failure] in stateWritten(failure) }
            }
        }
        if nextWaiting == actionsWaiting.count {
            actionsWaiting.removeAll(keepingCapacity: true)
            nextWaiting = 0
        }
    }

    private func stateWritten(_ failure: String?) {
        stateWriteInFlight = false
        if let failure {
            // Nothing after a failed durable write may run (an acknowledgement least of all).
            actionsWaiting.removeAll()
            nextWaiting = 0
            onFatal(failure)
            return
        }
        carryOut([])
    }

    /// Waits for the state write in progress (a graceful exit lets it finish). Loop-only.
    package func finishStateWrites() {
        stateQueue.sync {}
    }

    /// The durable write `action` stands for, when it is one the state thread carries out.
    private func stateWrite(_ action: LinkEngine.Action) -> (what: String, write: @Sendable () throws -> Void)? {
        let state = self.state
        switch action {
        case .persistPeer(let peer):
            return ("persist peer", { try state.persistPeer(peer) })
        case .persistContextSlot(let slot):
            return ("persist context slot", { try state.persist(slot) })
        case .persistReceivedContext(let received):
            return ("persist received context", { try state.persist(received) })
        case .persistTransferMark(let key):
            return (
                "persist transfer mark",
                { try state.receivedTransfers.markApplied(queueID: key.queue.bytes, sequence: key.sequence) }
            )
        case .removeTransfers(let sequences, let cancelled):
            return (
                "remove transfers \(sequences)",
                {
                    if cancelled {
                        for sequence in sequences { _ = try state.outbox.cancel(sequence: sequence) }
                    } else {
                        try state.outbox.acknowledge(sequences: sequences)
                    }
                }
            )
        case .removeComplications(let sequences):
            return (
                "remove complication transfers \(sequences)",
                { try state.complicationOutbox.acknowledge(sequences: sequences) }
            )
        case .persistWatchState(let watchState):
            return ("persist watch state", { try state.persist(watchState) })
        default:
            return nil
        }
    }
}
