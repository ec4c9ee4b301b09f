import PhoneStore
import SyncEngine
import WorkoutModel

/// The phone's handling of a change in its document directory: a file of any name and contents
/// lands in any folder of the layout, is read as the watcher reads it (`DocumentFile.load`), and what
/// it yields goes to the `SyncEngine`, twice, as the watcher may report it.
///
/// Properties: a file is used only as the document its folder holds, named by its canonical ID, a
/// run only in its month's folder, and the document survives a round trip through the coder; the
/// cold-start scan of the same directory agrees with the watcher; the engine ignores the repeat.
enum PhoneDirectoryTarget {
    static func check(_ input: inout FuzzInput) throws {
        let folder = self.folder(input.byte(), year: Int(input.integer(UInt16.self) % 10_000), month: input.byte())
        let name = String(decoding: input.chunk(), as: UTF8.self)
        let contents = input.rest()
        let nameFits = !name.isEmpty && name.utf8.count <= 255 && !name.contains("/") && !name.contains("\0")
        // The watcher ignores names starting with "." (our temporary files); names the kernel refuses never arrive.
        guard nameFits, !name.hasPrefix(".") else { return }
        try ScratchDirectory.with { root in
            let documents = "\(root)/Documents"
            let directory: DocumentDirectory
            do throws(DocumentStoreError) {
                directory = try DocumentDirectory(root: documents)
            } catch {
                throw PropertyViolation(description: "cannot create the document directory: \(error)")
            }
            try ScratchDirectory.write(contents, to: "\(documents)/\(folder.relativePath(of: name))")
            var scanned: [SyncEngine.ScannedDocument] = []
            let report: ScanReport
            do throws(DocumentStoreError) {
                report = try directory.scan { scanned.append($0) }
            } catch {
                throw PropertyViolation(description: "the scan failed on one file: \(error)")
            }
            switch DocumentFile.load(name: name, in: folder, root: documents) {
            case .missing:
                throw PropertyViolation(description: "a file just written was missing")
            case .skipped(let reason):
                try require(
                    scanned.isEmpty && report.skippedCount == 1, "the scan used a file the watcher skipped (\(reason))")
            case .companion:
                try require(
                    scanned.isEmpty && report.skippedCount == 0, "the scan used or reported a run's companion file")
            case .document(let document):
                try require(
                    scanned == [document], "the scan and the watcher disagree on \(folder.relativePath(of: name))")
                try checkPlacement(document, name: name, folder: folder, contents: contents)
                try ingestTwice(document)
            }
        }
    }

    private static func folder(_ selector: UInt8, year: Int, month: UInt8) -> DocumentFolder {
        switch selector % 6 {
        case 0: .root
        case 1: .splits
        case 2: .stubs
        case 3: .workouts
        case 4: .year(year)
        default: .month(year: year, month: Int(month % 12) + 1)
        }
    }

    private static func checkPlacement(
        _ document: SyncEngine.ScannedDocument, name: String, folder: DocumentFolder, contents: [UInt8]
    ) throws {
        let id: DocumentID
        let reread: SyncEngine.ScannedDocument?
        switch document {
        case .split(let split):
            (id, reread) = (
                split.id, try DocumentCoderTarget.roundTrip(SplitDocument.self, contents).map { .split($0) }
            )
            try require(folder == .splits, "a split used from \(folder)")
        case .tombstone(let stub):
            (id, reread) = (stub.id, try DocumentCoderTarget.roundTrip(Tombstone.self, contents).map { .tombstone($0) })
            try require(folder == .stubs, "a tombstone used from \(folder)")
        case .workout(let run):
            (id, reread) = (
                run.id, try DocumentCoderTarget.roundTrip(WorkoutDocument.self, contents).map { .workout($0) }
            )
            try require(folder == DocumentFolder.month(of: run.startedAt), "a run used from \(folder)")
        }
        try require(name == "\(id.rawValue).json", "document \(id) used from a file named \(name.debugDescription)")
        try require(reread == document, "the file decodes differently on its own")
    }

    /// The watcher may report one file twice; the second report must change nothing.
    private static func ingestTwice(_ document: SyncEngine.ScannedDocument) throws {
        let now = Timestamp(microsecondsSinceEpoch: 1_796_000_000_000_000)
        var engine = SyncEngine(settings: nil)
        _ = engine.handle(.gatherFinished(now: now))
        _ = engine.handle(.externalChange(.documentChanged(document), now: now))
        let settled = (engine.documents, engine.splits, engine.tombstones)
        let repeated = engine.handle(.externalChange(.documentChanged(document), now: now))
        try require(
            engine.documents == settled.0 && engine.splits == settled.1 && engine.tombstones == settled.2,
            "a repeated report changed the engine's documents")
        try require(!repeated.contains(where: \.writesFiles), "a repeated report wrote files: \(repeated)")
    }
}

extension SyncEngine.Action {
    var writesFiles: Bool {
        switch self {
        case .writeSplit, .removeSplitFile, .writeWorkout, .removeWorkoutFile, .writeTombstone: true
        default: false
        }
    }
}
