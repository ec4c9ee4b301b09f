import LinkProtocol
import WorkoutModel

/// What a node asks of its link (docs/PROTOCOL.md's channels): `LinkedNode` hands each to the link
/// engine, except `keepReceivedFile`, the shell's.
package enum LinkCommand: Equatable, Sendable {
    /// The context slot; the link answers with its `contextQueued` or `contextRefused` notification.
    case updateContext([UInt8], force: Bool)
    /// A message, sent under `id`; its one outcome comes back as the link's `messageCompleted(id:)`.
    /// The node numbers it (`MessageLedger`) before the shell sees it; 0 until then.
    case sendMessage([UInt8], wantsReply: Bool, run: String?, MessagePurpose, id: UInt64 = 0)
    /// Raw bytes (`sendMessageData`), numbered and answered as `sendMessage` is.
    case sendMessageData([UInt8], wantsReply: Bool, MessagePurpose, id: UInt64 = 0)
    case answerMessage(id: UInt64, MessageAnswer)
    /// A durable transfer; a refusal to queue it comes back as `.transferNotQueued`.
    case transferUserInfo([UInt8], run: String?)
    /// A complication for admin request N: `asCurrent` through `transferCurrentComplicationUserInfo`
    /// (the complication outbox, ahead of ordinary userInfo), else as ordinary userInfo; the result
    /// comes back as `.complicationQueued`.
    case transferComplication([UInt8], asCurrent: Bool, AdminRequestID)
    /// `transferFile` for admin request N (`file send`, `export`): the result of queueing it comes
    /// back as `.fileQueued`.
    case transferFile(FileSource, metadata: String, AdminRequestID)
    /// Admin `file cancel`: the result comes back as `.fileCancelEnded`.
    case cancelFile(sequence: UInt64, AdminRequestID)
    /// The app is done with a received file (after taking it, or not): the link deletes what is left
    /// of it in the inbox and tells the sender it was delivered.
    case fileProcessed(TransferKey)
    /// The transfers are processed durably: mark and acknowledge them.
    case transfersProcessed([TransferKey])
    /// The app cannot process these transfers (it cannot decode them): mark them, and tell the
    /// sender they failed (`payloadUnsupportedTypes`).
    case transfersRefused([TransferKey], reason: String)
    /// Admin `queue cancel`: the link answers with `transferCancelled` or `transferCancelRefused`.
    case cancelTransfer(sequence: UInt64)
    /// Admin `complication cancel`: the link answers with `complicationCancelEnded`.
    case cancelComplication(sequence: UInt64)
    case launch([UInt8])
    /// Move a received file out of the inbox to `<state>/received-files/<name>` (the app took it).
    case keepReceivedFile(TransferKey, name: String)
    case setAppForeground(Bool)
    /// The app stops running (false) or launches (true): while it is not running, what the link
    /// delivers to it (contexts, transfers, files) waits in `LinkedNode`, and is delivered in order
    /// once it launches.
    case setAppRunning(Bool)
    /// The watch is paired or not, its app installed or not, its complication enabled or not.
    case setWatchState(WatchState)
}

/// Why a message was sent, so its outcome finds its way back to what sent it.
package enum MessagePurpose: Hashable, Sendable {
    case live(runID: DocumentID, version: Int, attempt: Int)
    /// A watch edit (its token in the WatchEngine).
    case edit(token: UInt64)
    case requestSync
    /// Admin request N's `data send`: its outcome is that request's reply.
    case dataCommand(AdminRequestID)
}
