import WorkoutModel

/// What the WatchEngine and its session coordinator report for the log. Typed, so tests assert what
/// happened rather than its wording; `description` is the line the shell logs.
package enum WatchDiagnostic: Equatable, Sendable, CustomStringConvertible {
    /// A context was applied: the one persisted from the last run (`restored`) or one just received.
    case contextApplied(ContextApplyReport, restored: Bool)
    case persistedContextSkipped(DocumentError)
    case contextSkipped(DocumentError)
    /// A reset phone's epoch replaced the known one; the old epoch's undelivered edits were dropped.
    case epochReplaced(new: Timestamp, old: Timestamp, newer: Bool, droppedEdits: Int)
    case requestingSync
    case unknownMessageFailureIgnored(MessageToken)
    case requestSyncFailed(MessageToken, reason: String)
    case updateFellBackToTransfer(MessageToken, run: DocumentID, reason: String)
    case cancelledTransferNotNewest(run: DocumentID)
    case cancelledEditDropped(run: DocumentID)
    /// The phone has the edit of a run the last push left out: pruned now.
    case absentRunPruned(run: DocumentID)
    case cancelledEditReverted(run: DocumentID, to: Timestamp)
    case sessionMetricsNotRecorded(run: DocumentID)
    case launchRequestIgnored(DocumentError)
    case forwardingUndelivered
    case transferRefused(run: DocumentID, reason: String)
    case systemEndIgnored(failure: String)
    case sessionCleared
    case sessionStartIgnored(run: DocumentID, refusal: String)
    case sessionRunning(run: DocumentID, runInCache: Bool)
    case sessionEnded(run: DocumentID, SessionOutcome)
    /// The session's run is done, and the session goes on for another active run.
    case sessionMovedOn(from: DocumentID, SessionOutcome, to: DocumentID)

    package var description: String {
        switch self {
        case .contextApplied(let report, let restored): restored ? "persisted \(report.summary)" : report.summary
        case .persistedContextSkipped(let error): "persisted context skipped: \(error)"
        case .contextSkipped(let error): "context skipped (no upsert, no prune): \(error)"
        case .epochReplaced(let new, let old, let newer, let dropped):
            "phone epoch \(new) replaces \(old) (a reset phone\(newer ? "" : " whose clock is behind")): "
                + "\(dropped) undelivered edits of the old epoch dropped"
        case .requestingSync: "requesting a sync: no context received since start"
        case .unknownMessageFailureIgnored(let token): "message \(token) failure ignored: no such message in flight"
        case .requestSyncFailed(let token, let reason): "requestSync \(token) failed (\(reason)); not retried"
        case .updateFellBackToTransfer(let token, let run, let reason):
            "workout update \(token) for run \(run) failed (\(reason)); falling back to transferUserInfo"
        case .cancelledTransferNotNewest(let run):
            "cancelled transfer of run \(run) was not its newest edit; nothing reverted"
        case .absentRunPruned(let run):
            "run \(run), absent from the last push, pruned: the phone has its edit now"
        case .cancelledEditDropped(let run):
            "cancelled edit of run \(run) dropped; the next push brings the phone's copy"
        case .cancelledEditReverted(let run, let updatedAt):
            "cancelled edit of run \(run) reverted to the phone's copy (\(updatedAt))"
        case .sessionMetricsNotRecorded(let run): "session metrics for run \(run) not recorded: the run is gone"
        case .launchRequestIgnored(let error): "launch request ignored: \(error)"
        case .forwardingUndelivered: "link activated: forwarding undelivered edits"
        case .transferRefused(let run, let reason):
            "transfer of run \(run) refused (\(reason)); forwarded again once the link activates"
        case .systemEndIgnored(let failure): "session: system end (\(failure)) ignored: no session is running"
        case .sessionCleared: "session: cleared"
        case .sessionStartIgnored(let run, let refusal): "session: start for run \(run) ignored: \(refusal)"
        case .sessionRunning(let run, let inCache):
            "session: running for run \(run)\(inCache ? "" : " (run not in the cache yet)")"
        case .sessionEnded(let run, let outcome): "session: run \(run) \(Self.why(outcome))"
        case .sessionMovedOn(let from, let outcome, let to):
            "session: run \(from) \(Self.why(outcome)); the session goes on for active run \(to)"
        }
    }

    private static func why(_ outcome: SessionOutcome) -> String {
        switch outcome {
        case .finishedAndSaved(let metrics):
            "finished and saved (\(metrics.setsCompleted) sets, volume \(metrics.totalVolume), "
                + "active \(metrics.activeSeconds) s)"
        case .discarded: "discarded: the run is no longer on the phone"
        case .systemFailure(let reason): "ended by the system: \(reason)"
        }
    }
}
