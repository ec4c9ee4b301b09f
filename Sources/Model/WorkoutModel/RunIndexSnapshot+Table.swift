/// How `encode` lays out the table: the folders it keeps, the entries it copies from a recorded
/// table (renumbered) and the decoded runs it merges in, by ID, and their completed order.
struct TablePlan {
    /// The folders written, sorted; a folder's number is its place here.
    var paths: [String] = []
    var entryCount = 0
    var orderCount = 0
    /// The recorded table the carried folders are in, and each of its folders' new number (nil: not
    /// carried).
    var table = RunTable.empty
    var carried: [Int?] = []
    /// Decoded runs with their new folder number, by ID.
    var decoded: [(summary: RunIndex.RunSummary, folder: Int)] = []

    init(_ snapshot: RunIndexSnapshot) {
        var paths = snapshot.folders.keys.sorted()
        // The recorded table: the one the first recorded folder names (a scan's reused folders all
        // come from one file); a folder of any other table is written from its runs.
        for path in paths {
            if case .recorded(let recorded, _) = snapshot.folders[path]!.source {
                table = recorded
                break
            }
        }
        // Folders that share a run ID are left out, and so are their runs.
        var excluded: Set<String> = []
        while true {
            let plan = Self.layout(snapshot, paths: paths.filter { !excluded.contains($0) }, table: table)
            let duplicated = plan.duplicatedFolders
            if duplicated.isEmpty {
                self = plan.plan
                return
            }
            excluded.formUnion(duplicated)
            paths = paths.filter { !excluded.contains($0) }
        }
    }

    private init() {}

    /// The plan for `paths`, and the folders that hold an ID another folder holds too.
    private static func layout(
        _ snapshot: RunIndexSnapshot, paths: [String], table: RunTable
    ) -> (plan: TablePlan, duplicatedFolders: Set<String>) {
        var plan = TablePlan()
        plan.paths = paths
        plan.table = table
        plan.carried = Array(repeating: nil, count: table.folders.count)
        for (number, path) in paths.enumerated() {
            let folder = snapshot.folders[path]!
            if case .recorded(let recorded, let old) = folder.source, recorded.isSame(as: table) {
                plan.carried[old] = number
            } else {
                for summary in folder.runs() { plan.decoded.append((summary, number)) }
            }
        }
        plan.decoded.sort { $0.summary.id < $1.summary.id }
        var duplicated: Set<String> = []
        var previous: (id: DocumentID, folder: Int)?
        plan.forEachEntry { summary, folder, _ in
            if let previous, previous.id == summary.id {
                duplicated.insert(paths[previous.folder])
                duplicated.insert(paths[folder])
            }
            previous = (summary.id, folder)
            plan.entryCount += 1
            if RunIndex.isCompleted(summary) { plan.orderCount += 1 }
        }
        table.releaseResidentPages()
        return (plan, duplicated)
    }

    /// Every entry of the new table in ID order: its summary, new folder, and where it comes from
    /// (the recorded table's entry, or nil for a decoded run).
    func forEachEntry(_ body: (RunIndex.RunSummary, Int, Int?) throws -> Void) rethrows {
        var decodedPosition = 0
        for entry in 0..<table.entryCount {
            guard let folder = carried[table.folder(at: entry)] else { continue }
            let id = table.id(at: entry)
            while decodedPosition < decoded.count, decoded[decodedPosition].summary.id < id {
                try body(decoded[decodedPosition].summary, decoded[decodedPosition].folder, nil)
                decodedPosition += 1
            }
            try body(table.summary(at: entry), folder, entry)
        }
        for (summary, folder) in decoded[decodedPosition...] { try body(summary, folder, nil) }
    }

    /// Writes the entries, then the completed order: the recorded table's order (renumbered)
    /// merged with the decoded completed runs'.
    mutating func writeTable(into append: (ArraySlice<UInt8>) throws -> Void) rethrows {
        // The new entry number of each recorded entry carried, for the order.
        var renumbered = Array(repeating: -1, count: table.entryCount)
        var decodedCompleted: [(endedAt: Timestamp, id: DocumentID, entry: Int, folder: Int)] = []
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4096 * RunTable.entryBytes)
        var written = 0
        try forEachEntry { summary, folder, recorded in
            if let recorded {
                renumbered[recorded] = written
            } else if RunIndex.isCompleted(summary), let endedAt = summary.endedAt {
                decodedCompleted.append((endedAt, summary.id, written, folder))
            }
            RunTable.appendEntry(summary, folder: folder, to: &bytes)
            written += 1
            if bytes.count >= 4096 * RunTable.entryBytes {
                try append(bytes[...])
                bytes.removeAll(keepingCapacity: true)
            }
        }
        decodedCompleted.sort { ($0.endedAt, $0.id) < ($1.endedAt, $1.id) }
        var decodedPosition = 0
        func flushIfFull() throws {
            if bytes.count >= 4096 * RunTable.entryBytes {
                try append(bytes[...])
                bytes.removeAll(keepingCapacity: true)
            }
        }
        for position in 0..<table.orderCount {
            let element = table.orderElement(at: position)
            guard let folder = carried[element.folder] else { continue }
            let endedAt = Timestamp(microsecondsSinceEpoch: element.endedAt)
            let id = table.id(at: element.entry)
            while decodedPosition < decodedCompleted.count,
                (decodedCompleted[decodedPosition].endedAt, decodedCompleted[decodedPosition].id) < (endedAt, id)
            {
                let next = decodedCompleted[decodedPosition]
                RunTable.appendOrderElement(endedAt: next.endedAt, entry: next.entry, folder: next.folder, to: &bytes)
                decodedPosition += 1
                try flushIfFull()
            }
            RunTable.appendOrderElement(endedAt: endedAt, entry: renumbered[element.entry], folder: folder, to: &bytes)
            try flushIfFull()
        }
        for next in decodedCompleted[decodedPosition...] {
            RunTable.appendOrderElement(endedAt: next.endedAt, entry: next.entry, folder: next.folder, to: &bytes)
            try flushIfFull()
        }
        try append(bytes[...])
        table.releaseResidentPages()
    }
}
