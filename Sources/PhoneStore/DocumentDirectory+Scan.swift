import LinkRuntime
import SyncEngine
import WorkoutModel

/// What the start-up scan found: how many documents of each kind it visited, what it swept and what
/// it skipped.
package struct ScanReport: Equatable, Sendable, CustomStringConvertible {
    /// At most this many skipped entries are listed (all are counted), so a folder full of foreign
    /// files cannot grow the report without bound.
    package static let maximumListedSkips = 1_000

    package var splitCount = 0
    package var workoutCount = 0
    package var tombstoneCount = 0
    /// Leftover temporary files of interrupted writes (`.<name>.tmp-…`) removed before listing.
    package var sweptTemporaryFiles = 0
    /// Every entry skipped, listed or not.
    package var skippedCount = 0
    /// The first `maximumListedSkips` skipped entries, in the order they were met.
    package var skipped: [SkippedEntry] = []

    package init() {}

    /// Documents handed to the visitor.
    package var documentCount: Int { splitCount + workoutCount + tombstoneCount }

    package var description: String {
        "\(splitCount) splits, \(workoutCount) runs, \(tombstoneCount) tombstones; "
            + "\(skippedCount) skipped, \(sweptTemporaryFiles) temporary files swept"
    }

    mutating func skip(_ path: String, _ reason: SkipReason) {
        skippedCount += 1
        if skipped.count < Self.maximumListedSkips { skipped.append(SkippedEntry(path: path, reason: reason)) }
    }
}

extension DocumentDirectory {
    /// Walks the whole directory once and hands every usable document to `visit`, one at a time, so
    /// memory does not grow with the number of files (only one document is decoded at a time).
    ///
    /// Order: tombstones, then splits, then runs by year and month; within a folder, the file
    /// system's order. Before listing each document folder it sweeps the temporary files that an
    /// interrupted `AtomicFile.write` left there — so call it at start-up, before this process writes.
    ///
    /// A file that breaks a rule of `DocumentFile` (not `<UUID>.json`, not JSON, unknown
    /// `schemaVersion`, wrong kind for its folder, ID mismatch, a run outside its start month's folder,
    /// a link or special file, too large, unreadable) and any entry the layout has no place for
    /// (`.DS_Store`, `notes.txt`, a `Workouts/misc/` folder, a month `13`) is skipped and reported
    /// with its path relative to the root — never deleted, never fatal.
    ///
    /// It throws only when a folder of the layout cannot be listed: a scan that silently missed a
    /// month would look, to the watch, as if those runs had been deleted.
    ///
    /// Blocks on disk I/O: run it on the owner's thread, not the cooperative pool.
    package func scan(_ visit: (SyncEngine.ScannedDocument) -> Void) throws(DocumentStoreError) -> ScanReport {
        var report = ScanReport()
        // Only reports strays: the root's three folders are visited in a fixed order below.
        _ = try listFolders(in: .root, report: &report)
        try scanDocuments(in: .stubs, report: &report, visit)
        try scanDocuments(in: .splits, report: &report, visit)
        for year in try listFolders(in: .workouts, report: &report) {
            for month in try listFolders(in: year, report: &report) {
                try scanDocuments(in: month, report: &report, visit)
            }
        }
        return report
    }

    /// Lists a folder that holds only folders; returns its layout subfolders sorted by path and
    /// reports everything else.
    private func listFolders(in folder: DocumentFolder, report: inout ScanReport) throws(DocumentStoreError)
        -> [DocumentFolder]
    {
        var children: [DocumentFolder] = []
        try forEachEntry(in: folder) { entry in
            switch entry.type {
            case .folder:
                if let child = folder.child(named: entry.name) {
                    children.append(child)
                } else {
                    report.skip(folder.relativePath(of: entry.name), .unexpectedFolder)
                }
            case .regularFile:
                report.skip(folder.relativePath(of: entry.name), .unexpectedFile)
            case .other:
                report.skip(folder.relativePath(of: entry.name), .notARegularFile)
            }
        }
        return children.sorted { $0.relativePath < $1.relativePath }
    }

    /// Sweeps, then streams the documents of one document folder to `visit`.
    private func scanDocuments(
        in folder: DocumentFolder, report: inout ScanReport, _ visit: (SyncEngine.ScannedDocument) -> Void
    ) throws(DocumentStoreError) {
        do {
            report.sweptTemporaryFiles += try AtomicFile.sweepTemporaryFiles(in: path(of: folder))
        } catch {
            // Not fatal: a leftover that cannot be removed is reported below like any stray file.
        }
        try forEachEntry(in: folder) { entry in
            let relative = folder.relativePath(of: entry.name)
            switch entry.type {
            case .folder:
                report.skip(relative, .unexpectedFolder)
            case .other:
                report.skip(relative, .notARegularFile)
            case .regularFile:
                switch DocumentFile.load(name: entry.name, in: folder, root: root) {
                case .missing:
                    break
                case .skipped(let reason):
                    report.skip(relative, reason)
                case .document(let document):
                    switch document {
                    case .split: report.splitCount += 1
                    case .workout: report.workoutCount += 1
                    case .tombstone: report.tombstoneCount += 1
                    }
                    visit(document)
                }
            }
        }
    }

    /// Streams the entries of a layout folder to `body`.
    private func forEachEntry(
        in folder: DocumentFolder, _ body: (DirectoryStream.Entry) -> Void
    ) throws(DocumentStoreError) {
        let path = path(of: folder)
        do {
            let stream = try DirectoryStream(path)
            while let entry = try stream.next() { body(entry) }
        } catch {
            throw .listFailed(path: path, error)
        }
    }
}
