import LinkRuntime
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
    /// fingerprint equals the one `previous` recorded is not read: its recorded summaries go to
    /// `summarized` (one call per folder) and its recorded skips into the report. Every other month
    /// folder is read and decoded as the plain scan does, and its documents go to `visit`. Tombstones
    /// and splits are always read.
    ///
    /// Each month folder is fingerprinted after its temporary files are swept and before it is
    /// read, so a file changed while it was being read leaves a fingerprint that no longer matches:
    /// the next start decodes that folder again rather than trust what was read. A folder changed
    /// less than `settlingTime` before it was fingerprinted is decoded but not recorded: file times
    /// come from a clock that ticks every few milliseconds, so a same-size rewrite in place within
    /// one tick of the read would leave the fingerprint unchanged (git's "racily clean" entries).
    package func scan(
        reusing previous: RunIndexSnapshot?, progress: ScanProgress? = nil, settlingTime: Duration = .seconds(2),
        _ visit: (SyncEngine.ScannedDocument) -> Void, summarized: ([RunIndex.RunSummary]) -> Void
    ) throws(DocumentStoreError) -> IndexedScan {
        let settlingNanoseconds =
            settlingTime.components.seconds * 1_000_000_000
            + settlingTime.components.attoseconds / 1_000_000_000
        var result = IndexedScan(snapshot: RunIndexSnapshot(root: root))
        var ticker = ScanProgressTicker(progress)
        try walk(report: &result.report, ticker: &ticker, visit) { month, report, ticker throws(DocumentStoreError) in
            let path = month.relativePath
            do {
                report.sweptTemporaryFiles += try AtomicFile.sweepTemporaryFiles(in: self.path(of: month))
            } catch {
                // Not fatal: a leftover that cannot be removed is reported below like any stray file.
            }
            let (fingerprint, newestChange) = try fingerprint(of: month)
            let isSettled = newestChange < Self.realTimeNanoseconds() - settlingNanoseconds
            if let recorded = previous?.reusable(path, current: fingerprint), let runs = try? recorded.runs() {
                summarized(runs)
                report.workoutCount += runs.count
                for note in recorded.skipped { report.skip(note.path, .recorded(note.reason)) }
                result.snapshot.folders[path] = recorded
                result.reusedFolders.append(path)
                ticker.tick(scanned: report.documentCount + report.skippedCount)
                return
            }
            var folderReport = ScanReport()
            var runs: [RunIndex.RunSummary] = []
            ticker.earlier = report.documentCount + report.skippedCount
            try scanDocuments(in: month, report: &folderReport, ticker: &ticker) { document in
                if case .workout(let run) = document { runs.append(RunIndex.RunSummary(run)) }
                visit(document)
            }
            ticker.earlier = 0
            report.absorb(folderReport)
            result.decodedFolders.append(path)
            // A folder with more skips than a report lists could not be reported whole from the
            // index, and one that has not settled may change unseen: left out, decoded next start.
            guard isSettled, folderReport.skippedCount == folderReport.skipped.count else { return }
            result.snapshot.folders[path] = RunIndexSnapshot.Folder(
                fingerprint: fingerprint, runs: runs,
                skipped: folderReport.skipped.map { .init(path: $0.path, reason: $0.reason.description) })
        }
        return result
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
