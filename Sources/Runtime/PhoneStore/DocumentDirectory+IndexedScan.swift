import DurableFiles
import POSIX
import SyncEngine
import WorkoutModel

/// What a scan that keeps the run index found: the scan's report, the snapshot to persist for the
/// next start, and which month folders were reused from the previous snapshot or decoded.
package struct IndexedScan: Sendable, CustomStringConvertible {
    package var report = ScanReport()
    package var snapshot: RunIndexSnapshot
    /// Month folders (paths relative to the root) whose recorded summaries stood in for a decode.
    package var reusedFolders: [String] = []
    /// Month folders read and decoded: new, changed, or not in the previous snapshot.
    package var decodedFolders: [String] = []

    package var description: String {
        "\(reusedFolders.count) month folders reused from the run index, \(decodedFolders.count) decoded"
    }
}

extension DocumentDirectory {
    /// The start-up scan with a run index: like `scan(progress:_:)`, except that a month folder whose
    /// fingerprint equals the one `previous` recorded is not read. Every month folder is
    /// fingerprinted first; then `recorded` gets the previous snapshot's table with the folders that
    /// changed (or vanished) retired, once, before any document goes to `visit`; the recorded skips
    /// of the unchanged folders go into the report. Every other month folder is then read and
    /// decoded as the plain scan does. Tombstones and splits are always read.
    ///
    /// Each month folder is fingerprinted after its temporary files are swept and before it is
    /// read, so a file changed while it was being read leaves a fingerprint that no longer matches:
    /// the next start decodes that folder again rather than trust what was read. A folder changed
    /// less than `settlingTime` before it was fingerprinted is decoded but not recorded: file times
    /// come from a clock that ticks every few milliseconds, so a same-size rewrite in place within
    /// one tick of the read would leave the fingerprint unchanged (git's "racily clean" entries).
    package func scan(
        reusing previous: RunIndexSnapshot?, progress: ScanProgress? = nil, settlingTime: Duration = .seconds(2),
        _ visit: (SyncEngine.ScannedDocument) -> Void, recorded: (RunTable) -> Void
    ) throws(DocumentStoreError) -> IndexedScan {
        let settlingNanoseconds =
            settlingTime.components.seconds * 1_000_000_000
            + settlingTime.components.attoseconds / 1_000_000_000
        let previous = previous?.readable
        var report = ScanReport()
        var snapshot = RunIndexSnapshot(root: root)
        var reusedFolders: [String] = []
        var decodedFolders: [String] = []
        // The month folders to decode, with the fingerprint each had before it was read.
        var changed: [String: (fingerprint: FolderFingerprint, isSettled: Bool)] = [:]
        var ticker = ScanProgressTicker(progress)
        let prepare = {
            (months: [DocumentFolder], report: inout ScanReport, ticker: inout ScanProgressTicker)
                throws(DocumentStoreError) in
            var reused: Set<Int> = []
            // Taken before any folder is fingerprinted, so "settled" errs towards decoding again.
            let settledBefore = Self.realTimeNanoseconds() - settlingNanoseconds
            var listings = try self.fingerprints(of: months)
            for (month, listing) in zip(months, listings.indices) where listings[listing].mayHoldTemporaryFiles {
                // Swept, then fingerprinted again: the fingerprint is of what the scan reads.
                do {
                    report.sweptTemporaryFiles += try AtomicFile.sweepTemporaryFiles(in: self.path(of: month))
                } catch {
                    // Not fatal: a leftover that cannot be removed is reported below like any stray file.
                }
                listings[listing] = try self.fingerprints(of: [month])[0]
            }
            for (month, listing) in zip(months, listings) {
                let path = month.relativePath
                if let folder = previous?.reusable(path, current: listing.fingerprint),
                    case .recorded(_, let number) = folder.source
                {
                    reused.insert(number)
                    report.workoutCount += folder.runCount
                    for note in folder.skipped { report.skip(note.path, .recorded(note.reason)) }
                    snapshot.folders[path] = folder
                    reusedFolders.append(path)
                    ticker.tick(scanned: report.documentCount + report.skippedCount)
                } else {
                    changed[path] = (listing.fingerprint, listing.newestChangeNanoseconds < settledBefore)
                }
            }
            guard let previous else { return }
            var table = previous.table
            for number in table.folders.indices where !reused.contains(number) { table.retire(folder: number) }
            recorded(table)
        }
        try walk(report: &report, ticker: &ticker, visit, prepare: prepare) {
            month, report, ticker throws(DocumentStoreError) in
            let path = month.relativePath
            guard let (fingerprint, isSettled) = changed[path] else { return }
            var folderReport = ScanReport()
            var runs: [RunIndex.RunSummary] = []
            ticker.earlier = report.documentCount + report.skippedCount
            try scanDocuments(in: month, report: &folderReport, ticker: &ticker) { document in
                if case .workout(let run) = document { runs.append(RunIndex.RunSummary(run)) }
                visit(document)
            }
            ticker.earlier = 0
            report.absorb(folderReport)
            decodedFolders.append(path)
            // A folder with more skips than a report lists could not be reported whole from the
            // index, and one that has not settled may change unseen: left out, decoded next start.
            guard isSettled, folderReport.skippedCount == folderReport.skipped.count else { return }
            snapshot.folders[path] = RunIndexSnapshot.Folder(
                fingerprint: fingerprint, runs: runs,
                skipped: folderReport.skipped.map { .init(path: $0.path, reason: $0.reason.description) })
        }
        return IndexedScan(
            report: report, snapshot: snapshot, reusedFolders: reusedFolders, decodedFolders: decodedFolders)
    }
}

extension DocumentDirectory {
    /// `CLOCK_REALTIME`, the clock file times are taken from, in nanoseconds since the epoch.
    static func realTimeNanoseconds() -> Int64 {
        let (seconds, attoseconds) = SystemClock.realTime().components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension ScanReport {
    /// Adds what a scan of one more folder found.
    mutating func absorb(_ other: ScanReport) {
        splitCount += other.splitCount
        workoutCount += other.workoutCount
        tombstoneCount += other.tombstoneCount
        sweptTemporaryFiles += other.sweptTemporaryFiles
        for entry in other.skipped { skip(entry.path, entry.reason) }
        // Skips past the other report's listing limit were counted there, not listed.
        skippedCount += other.skippedCount - other.skipped.count
    }
}
