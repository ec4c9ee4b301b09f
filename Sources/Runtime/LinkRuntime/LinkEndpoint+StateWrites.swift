import Foundation
import LinkProtocol
import Trace

// MARK: State writes

extension LinkEndpoint {
    /// Carries out `actions` in order on the loop; a state write is durable before the next action
    /// runs, and a failed one stops the process (`onFatal`). (Driven, `NodeShell` runs state writes
    /// on its write queue and never hands one to this.)
    func carryOut(_ actions: [LinkEngine.Action]) {
        for action in actions {
            if let (what, write) = stateWrite(action) {
                durably(what, write)
            } else {
                perform(action)
            }
        }
    }

    /// The durable write `action` stands for, when it is one.
    package func stateWrite(_ action: LinkEngine.Action) -> (what: String, write: @Sendable () throws -> Void)? {
        let state = self.state
        switch action {
        case .persistPeer(let peer):
            return ("persist peer", { try state.persistPeer(peer) })
        case .persistContextSlot(let slot, let flushed):
            return ("persist context slot", { try state.persist(slot, flushed: flushed) })
        case .persistReceivedContext(let received):
            return ("persist received context", { try state.persist(received) })
        case .persistTransferMark(let queue, let mark):
            return ("persist transfer mark", { try state.receivedTransfers.persist(queueID: queue.bytes, mark) })
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
        case .removeOutboundFile(let sequence):
            return ("remove queued file \(sequence)", { try state.files.remove(sequence: sequence) })
        case .prepareInboundFile(let key, let keeping):
            return ("prepare arriving file \(key)", { try state.files.prepare(key, keeping: keeping) })
        case .deliverInboundFile(let key):
            return ("deliver file \(key) to the inbox", { try state.files.deliver(key) })
        case .discardInboundFile(let key):
            return ("discard file \(key)", { try state.files.discard(key) })
        default:
            return nil
        }
    }
}
