import DurableFiles
import Foundation
import LinkProtocol
import Trace

// MARK: The journal

extension LinkEndpoint {
    /// Journals a message's attempt and keeps its run for the outcome's line.
    package func journalAttempt(_ id: UInt64, run: String?) {
        journal?.record(.messageAttempt, cause: messageCause(sender: state.instance, id), run: run)
        if let run { messageRuns[id] = run }
    }

    func messageCause(sender: InstanceID?, _ id: UInt64) -> String {
        TraceEvent.messageCause(sender: sender?.description ?? "unknown", id: id)
    }

    /// This endpoint's own outbox queue's transfer `sequence`.
    func transferCause(_ sequence: UInt64) -> String {
        TraceEvent.transferCause(queue: state.outbox.queueID.hexString, sequence: sequence)
    }

    /// The complication outbox's transfer `sequence`.
    func complicationCause(_ sequence: UInt64) -> String {
        TraceEvent.transferCause(queue: state.complicationOutbox.queueID.hexString, sequence: sequence)
    }

    /// Frames that carry an id, stamped `at` (now by default); handshake and heartbeat frames are left
    /// out (they would drown the rest).
    func journalSent(_ frame: LinkFrame, at stamp: EventJournal.Stamp? = nil) {
        guard let journal else { return }
        switch frame {
        case .context(let generation, let sender, let payload):
            journal.record(
                .contextSend, cause: TraceEvent.contextCause(sender: sender.description, generation: generation),
                detail: "\(payload.count) bytes", at: stamp)
        case .contextAck(let generation, let sender):
            journal.record(
                .contextAckSend, cause: TraceEvent.contextCause(sender: sender.description, generation: generation),
                at: stamp)
        case .message(let id, _, _), .messageData(let id, _, _):
            journal.record(
                .messageSend, cause: messageCause(sender: state.instance, id), run: messageRuns[id], at: stamp)
        case .messageReply(let id, _), .messageDelivered(let id):
            journal.record(.messageReplySend, cause: messageCause(sender: journalPeer, id), at: stamp)
        case .messageFailed(let id, let code, _):
            journal.record(
                .messageReplySend, cause: messageCause(sender: journalPeer, id), detail: "\(code)", at: stamp)
        case .userInfo(let queue, let sequence, _):
            journal.record(
                .transferSend, cause: TraceEvent.transferCause(queue: queue.description, sequence: sequence), at: stamp
            )
        case .userInfoAck(let queue, let sequence):
            journal.record(
                .transferAckSend, cause: TraceEvent.transferCause(queue: queue.description, sequence: sequence),
                at: stamp)
        case .userInfoRefused(let queue, let sequence, _):
            journal.record(
                .transferAckSend, cause: TraceEvent.transferCause(queue: queue.description, sequence: sequence),
                detail: "refused", at: stamp)
        case .launch:
            journal.record(.launchSend, cause: "launch", at: stamp)
        case .error, .hello, .challenge, .proof, .welcome, .ping, .pong, .appState, .watchState, .fileOffer,
            .fileResume,
            .fileChunk, .fileDone, .fileCancel:
            break
        }
    }

    func journalNotified(_ notification: LinkNotification) {
        guard let journal else { return }
        switch notification {
        case .contextReceived(let context):
            journal.record(
                .contextReceive,
                cause: TraceEvent.contextCause(sender: context.sender.description, generation: context.generation))
        case .contextAcknowledged(let generation):
            journal.record(
                .contextAckReceive,
                cause: TraceEvent.contextCause(sender: state.instance.description, generation: generation))
        case .messageReceived(let id, _, _), .messageDataReceived(let id, _, _):
            journal.record(.messageReceive, cause: messageCause(sender: journalPeer, id))
        case .messageCompleted(let id, let outcome):
            let run = messageRuns.removeValue(forKey: id)
            let cause = messageCause(sender: state.instance, id)
            switch outcome {
            case .replied: journal.record(.messageReplyReceive, cause: cause, run: run, detail: "replied")
            case .delivered: journal.record(.messageReplyReceive, cause: cause, run: run, detail: "delivered")
            case .failed(let error): journal.record(.messageFailed, cause: cause, run: run, detail: "\(error)")
            }
        case .userInfoReceived(let key, _):
            journal.record(
                .transferReceive, cause: TraceEvent.transferCause(queue: key.queue.description, sequence: key.sequence))
        case .transferFinished(let sequence, _):
            journal.record(.transferAckReceive, cause: transferCause(sequence))
        case .complicationFinished(let sequence):
            journal.record(.transferAckReceive, cause: complicationCause(sequence))
        case .transferFailed(let sequence, let complication, _, let error):
            let cause = complication ? complicationCause(sequence) : transferCause(sequence)
            journal.record(.transferAckReceive, cause: cause, detail: "refused")
            journal.record(.transferFailed, cause: cause, detail: "\(error)")
        case .transferCancelled(let sequence, _, _):
            journal.record(.transferCancelled, cause: transferCause(sequence))
            journal.record(.transferFailed, cause: transferCause(sequence), detail: "\(LinkError.transferCancelled)")
        case .complicationCancelEnded(let sequence, .success):
            journal.record(.transferCancelled, cause: complicationCause(sequence))
            journal.record(
                .transferFailed, cause: complicationCause(sequence), detail: "\(LinkError.transferCancelled)")
        case .launchReceived:
            journal.record(.launchReceive, cause: "launch")
        case .launchDropped:
            journal.record(.launchDropped)
        case .linkEstablished(let peer):
            journal.record(.linkUp, detail: "peer \(peer)")
        case .linkLost(let reason):
            journal.record(.linkDown, detail: reason)
        case .reachabilityChanged(let reachable):
            journal.record(.reachability, detail: "\(reachable)")
        case .activated, .peerAppStateChanged, .watchStateChanged, .fileReceived, .fileFinished, .contextQueued,
            .contextRefused, .transferCancelRefused, .complicationCancelEnded(_, .failure):
            break
        }
    }
}

extension [UInt8] {
    /// Lowercase hex, as `InstanceID` prints (a queue ID is 16 bytes like an instance ID).
    fileprivate var hexString: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
