import WorkoutModel

/// What the SyncEngine reports for the log. Typed, so tests assert what happened rather than its
/// wording; `description` is the line the shell logs.
package enum SyncDiagnostic: Equatable, Sendable, CustomStringConvertible {
    case gatherFinished(splits: Int, runs: Int, tombstones: Int)
    case epochStarted(Timestamp)
    /// The state directory's epoch (an older version's place for it) now lives with the documents.
    case epochMovedToDocuments(Timestamp)
    case orphanedLiveFileRemoved(run: DocumentID)
    case orphanedSplitFileRemoved(split: DocumentID)
    /// `runs` were sent, `heldBack` (when the push hit the size bound, `maximumBytes`) were not.
    /// `splitsHeldBack` splits did not fit either (the watch does not show them).
    case pushed(
        reason: String, forced: Bool, splits: Int, runs: Int, heldBack: Int?, maximumBytes: Int, splitsHeldBack: Int = 0
    )
    case pushSkippedPristine(reason: String)
    case pushNotSent(reason: String, retryIn: Duration)
    case ingestVetoedEpoch(run: DocumentID, madeAgainst: Timestamp, current: Timestamp?)
    case ingestVetoedTombstone(run: DocumentID)
    case ingestVetoedPendingDelete(run: DocumentID)
    case ingestRefused(run: DocumentID, MergeError)
    case ingestDuplicate(run: DocumentID, version: Stamp)
    case ingestWatchBehind(run: DocumentID)
    case ingestMerged(run: DocumentID, status: WorkoutStatus, version: Stamp)
    case historyCleared(tombstoned: Int)
    case externalRun(DocumentID)
    /// Another writer's copy lacked some of the phone's newer edits: merged and written back.
    case externalRunMerged(DocumentID)
    /// Another writer's copy held nothing the phone's lacks (an older copy, or a late echo of the
    /// phone's own write): the phone's copy is written back over it.
    case externalCopyCovered(DocumentID, version: Stamp)
    /// An older copy of a run the phone only summarises: its file is loaded to see what it holds.
    case externalOlderCopyOfSummary(DocumentID, version: Stamp, had: Stamp)
    /// An on-demand load found a copy older than the index's twice in a row: the file is all the
    /// phone has of the run, so it is taken (never asked for again and again).
    case staleRunAdopted(DocumentID, version: Stamp, had: Stamp)
    /// An on-demand load found a copy older than the index's, and the phone still had its own copy
    /// from before it dropped the run from memory: merged, and written back over the file.
    case evictedCopyRestored(DocumentID, version: Stamp, had: Stamp)
    /// The run's file was edited in place (other values under the same stamps): taken as a new edit.
    case externalRunEditedInPlace(DocumentID)
    /// The run's file was edited in its fixed parts (split, start, exercises): the phone's copy written back.
    case externalRunEditRefused(DocumentID)
    case externalSplit(DocumentID)
    /// A split's file edited in place (another content, the same `updatedAt`): taken as a new edit.
    case externalSplitEditedInPlace(DocumentID)
    /// A split's file edited in place into one a split may not be: the phone's copy written back.
    case externalSplitEditRefused(DocumentID, reason: String)
    case externalDelete(DocumentID)
    /// A file of a run whose removal was held turned up again: the removal was a move.
    case runFileBack(DocumentID)
    case externalCopyOfDeletedRunIgnored(DocumentID)
    case oldFolderFileRemoved(run: DocumentID, year: Int, month: Int)
    case liveFileVanished(run: DocumentID, grace: Duration)
    case vanishedRunDropped(DocumentID)
    case splitFileVanished(DocumentID)
    case unloadableRunDropped(DocumentID)

    package var description: String {
        switch self {
        case .gatherFinished(let splits, let runs, let tombstones):
            "initial gather finished: \(splits) splits, \(runs) runs, \(tombstones) tombstones"
        case .epochStarted(let epoch): "phone epoch \(epoch) started"
        case .epochMovedToDocuments(let epoch):
            "phone epoch \(epoch) kept: moved from the state directory to the document directory's epoch file"
        case .orphanedLiveFileRemoved(let run): "removed live file of tombstoned run \(run)"
        case .orphanedSplitFileRemoved(let split): "removed split file of tombstoned split \(split)"
        case .pushed(let reason, let forced, let splits, let runs, let heldBack, let maximumBytes, let splitsHeldBack):
            "push (\(reason))\(forced ? ", forced" : ""): \(splits) splits, \(runs) runs"
                + (heldBack.map { "; \($0) runs held back to fit \(maximumBytes) bytes" } ?? "")
                + (splitsHeldBack > 0 ? "; \(splitsHeldBack) splits held back to fit \(maximumBytes) bytes" : "")
        case .pushSkippedPristine(let reason): "push skipped (\(reason)): pristine state is never pushed"
        case .pushNotSent(let reason, let retryIn): "push not sent (\(reason)); retrying in \(retryIn)"
        case .ingestVetoedEpoch(let run, let madeAgainst, let current):
            "ingest \(run): vetoed, made against phone epoch \(madeAgainst), this phone's is "
                + "\(current.map(\.description) ?? "(none)"); re-pushing"
        case .ingestVetoedTombstone(let run): "ingest \(run): vetoed, the run is deleted (tombstone); re-pushing"
        case .ingestVetoedPendingDelete(let run): "ingest \(run): vetoed, the run's delete is in flight; re-pushing"
        case .ingestRefused(let run, let error): "ingest \(run): refused, \(error); re-pushing"
        case .ingestDuplicate(let run, let version): "ingest \(run): unchanged (duplicate or echo, version \(version))"
        case .ingestWatchBehind(let run): "ingest \(run): unchanged (the watch's copy is behind); re-pushing"
        case .ingestMerged(let run, let status, let version):
            "ingest \(run): merged (\(status.rawValue), version \(version))"
        case .historyCleared(let count): "clear history: tombstoned \(count) completed runs"
        case .externalRun(let run): "external change: run \(run)"
        case .externalRunMerged(let run):
            "external change: run \(run) merged with the phone's newer edits and written back"
        case .externalCopyCovered(let run, let version):
            "external change: run \(run) at version \(version) is older than the phone's copy; the phone's copy is written back"
        case .externalOlderCopyOfSummary(let run, let version, let had):
            "external change: run \(run) at version \(version), older than the phone's \(had), which only its "
                + "summary holds: loading the file to see what it holds"
        case .evictedCopyRestored(let run, let version, let had):
            "load: run \(run)'s file is older than the index (version \(version), the index had \(had)): "
                + "merged with the phone's copy from before it left memory, and written back"
        case .staleRunAdopted(let run, let version, let had):
            "load: run \(run)'s file is older than the index (version \(version), the index had \(had)) on two "
                + "reads: the file's copy is taken"
        case .externalRunEditedInPlace(let run):
            "external change: run \(run) edited in place (the same stamps): taken as a new edit and written back"
        case .externalRunEditRefused(let run):
            "external change: run \(run) edited in place in its split, start or exercises: a run cannot change"
                + " there; the phone's copy is written back"
        case .externalSplit(let split): "external change: split \(split)"
        case .externalSplitEditedInPlace(let split):
            "external change: split \(split) edited in place (the same updatedAt): taken as a new edit and written back"
        case .externalSplitEditRefused(let split, let reason):
            "external change: split \(split) edited in place into an invalid split (\(reason)); the phone's copy is written back"
        case .externalDelete(let id): "external delete: stub for \(id)"
        case .runFileBack(let run): "run \(run) has a file again: its earlier removal was a move"
        case .externalCopyOfDeletedRunIgnored(let run): "external copy of deleted run \(run) ignored; live file removed"
        case .oldFolderFileRemoved(let run, let year, let month):
            "old file of run \(run) in \(year)/\(month) removed; the run lives in its new folder"
        case .liveFileVanished(let run, let grace):
            "live file of run \(run) vanished without a stub: dropped in \(grace) unless a file of it appears"
        case .vanishedRunDropped(let run):
            "live file of run \(run) vanished without a stub: dropped from the cache, not deleted"
        case .splitFileVanished(let split): "split file \(split) vanished: dropped from the cache"
        case .unloadableRunDropped(let run): "run \(run) could not be loaded: dropped from the cache, not deleted"
        }
    }
}
