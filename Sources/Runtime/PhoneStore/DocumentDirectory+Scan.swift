import Dispatch
import DurableFiles
import POSIX
import SyncEngine
import Synchronization
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
    /// memory does not grow with the number of files (a bounded chunk is decoded at a time).
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
    /// `progress`, when given, hears how far the scan has got at most every `progress.interval`
    /// seconds (`ScanProgress`), on this thread, between two documents.
    ///
    /// Blocks on disk I/O: run it on the owner's thread, not the cooperative pool.
    package func scan(
        progress: ScanProgress? = nil, _ visit: (SyncEngine.ScannedDocument) -> Void
    ) throws(DocumentStoreError) -> ScanReport {
        var report = ScanReport()
        var ticker = ScanProgressTicker(progress)
        try walk(report: &report, ticker: &ticker, visit) { month, report, ticker throws(DocumentStoreError) in
            try scanDocuments(in: month, report: &report, ticker: &ticker, visit)
        }
        return report
    }

    /// The scan's order: strays of the root and of the layout's year folders, `prepare` with the
    /// month folders found, tombstones, splits, then each month folder by `month`.
    func walk(
        report: inout ScanReport, ticker: inout ScanProgressTicker, _ visit: (SyncEngine.ScannedDocument) -> Void,
        prepare: ([DocumentFolder], inout ScanReport, inout ScanProgressTicker) throws(DocumentStoreError) -> Void = {
            _, _, _ in
        },
        month: (DocumentFolder, inout ScanReport, inout ScanProgressTicker) throws(DocumentStoreError) -> Void
    ) throws(DocumentStoreError) {
        // Only reports strays: the root's three folders are visited in a fixed order below.
        _ = try listFolders(in: .root, report: &report)
        var months: [DocumentFolder] = []
        for year in try listFolders(in: .workouts, report: &report) {
            months += try listFolders(in: year, report: &report)
        }
        try prepare(months, &report, &ticker)
        try scanDocuments(in: .stubs, report: &report, ticker: &ticker, visit)
        try scanDocuments(in: .splits, report: &report, ticker: &ticker, visit)
        for folder in months {
            try month(folder, &report, &ticker)
        }
    }

    /// Lists a folder that holds only folders; returns its layout subfolders sorted by path and
    /// reports everything else.
    private func listFolders(in folder: DocumentFolder, report: inout ScanReport) throws(DocumentStoreError)
        -> [DocumentFolder]
    {
        var children: [DocumentFolder] = []
        try forEachEntry(in: folder) { entry in
            switch entry.kind {
            case .directory:
                if let child = folder.child(named: entry.name) {
                    children.append(child)
                } else {
                    report.skip(folder.relativePath(of: entry.name), .unexpectedFolder)
                }
            case .regularFile where folder == .root && entry.name == Self.epochFileName:
                break
            case .regularFile:
                report.skip(folder.relativePath(of: entry.name), .unexpectedFile)
            case .other:
                report.skip(folder.relativePath(of: entry.name), .notARegularFile)
            }
        }
        return children.sorted { $0.relativePath < $1.relativePath }
    }

    /// Sweeps, then streams the documents of one document folder to `visit`.
    func scanDocuments(
        in folder: DocumentFolder, report: inout ScanReport, ticker: inout ScanProgressTicker,
        _ visit: (SyncEngine.ScannedDocument) -> Void
    ) throws(DocumentStoreError) {
        do {
            report.sweptTemporaryFiles += try AtomicFile.sweepTemporaryFiles(in: path(of: folder))
        } catch {
            // Not fatal: a leftover that cannot be removed is reported below like any stray file.
        }
        var files: [String] = []
        try forEachEntry(in: folder) { entry in
            let relative = folder.relativePath(of: entry.name)
            switch entry.kind {
            case .directory:
                report.skip(relative, .unexpectedFolder)
            case .other:
                report.skip(relative, .notARegularFile)
            case .regularFile:
                files.append(entry.name)
            }
        }
        // Files are read and decoded on every core, a bounded chunk at a time (decoding dominates a
        // cold start), and handed to `visit` one by one in the folder's order.
        for start in stride(from: 0, to: files.count, by: Self.decodeChunk) {
            let chunk = Array(files[start..<min(start + Self.decodeChunk, files.count)])
            for (name, outcome) in zip(chunk, Self.load(chunk, in: folder, root: root)) {
                switch outcome {
                case .missing, .companion:
                    break
                case .skipped(let reason):
                    report.skip(folder.relativePath(of: name), reason)
                case .document(let document):
                    switch document {
                    case .split: report.splitCount += 1
                    case .workout: report.workoutCount += 1
                    case .tombstone: report.tombstoneCount += 1
                    }
                    visit(document)
                }
                ticker.tick(scanned: ticker.earlier + report.documentCount + report.skippedCount)
            }
        }
    }

    /// How many files are decoded at once: enough to keep every core busy, few enough that memory
    /// does not grow with the folder.
    private static let decodeChunk = 256

    /// Loads `names` concurrently; the outcomes come back in `names`' order.
    private static func load(_ names: [String], in folder: DocumentFolder, root: String) -> [DocumentFile.Outcome] {
        let results = OutcomeSlots(count: names.count)
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            results.store(DocumentFile.load(name: names[index], in: folder, root: root), at: index)
        }
        return results.outcomes
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

/// Outcomes written by concurrent loaders, each into its own slot.
private final class OutcomeSlots: @unchecked Sendable {
    // @unchecked: every write goes through the Mutex; the final read happens after
    // concurrentPerform has returned, so after every write.
    private let slots: Mutex<[DocumentFile.Outcome?]>

    init(count: Int) {
        slots = Mutex(Array(repeating: nil, count: count))
    }

    func store(_ outcome: DocumentFile.Outcome, at index: Int) {
        slots.withLock { $0[index] = outcome }
    }

    var outcomes: [DocumentFile.Outcome] {
        slots.withLock { $0.map { $0 ?? .missing } }
    }
}
