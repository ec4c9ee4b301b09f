/// The phone's index of every run it knows, kept so a push never walks the whole history.
///
/// It knows one small `RunSummary` per run (not the documents), the set of active runs, and the
/// completed runs sorted by end time. Most of a long history is the run index file's table, read in
/// place (`install`); only what changed since it was recorded is held in memory. `pushSelection`
/// touches only the active runs and the newest few completed ones, so its cost does not grow with
/// history.
package struct RunIndex: Sendable, Equatable {
    /// A run's place in the index: enough to select it for a push.
    package struct RunSummary: Equatable, Sendable {
        package var id: DocumentID
        package var status: WorkoutStatus
        package var startedAt: Timestamp
        package var endedAt: Timestamp?
        /// The run's `updatedAt` and `version` (its newest stamp), so a late echo of an older copy is
        /// recognised without loading the document.
        package var updatedAt: Timestamp
        package var version: Stamp

        package init(_ run: WorkoutDocument) {
            id = run.id
            status = run.status
            startedAt = run.startedAt
            endedAt = run.endedAt
            updatedAt = run.updatedAt
            version = run.version
        }

        package init(
            id: DocumentID, status: WorkoutStatus, startedAt: Timestamp, endedAt: Timestamp?, updatedAt: Timestamp,
            version: Stamp
        ) {
            self.id = id
            self.status = status
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.updatedAt = updatedAt
            self.version = version
        }
    }

    /// Whether the run sits in the completed list (else it is active and rides in every push).
    package static func isCompleted(_ summary: RunSummary) -> Bool {
        summary.endedAt != nil && !summary.status.isActive
    }

    private struct CompletedKey: Comparable {
        var endedAt: Timestamp
        var id: DocumentID
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.endedAt, lhs.id) < (rhs.endedAt, rhs.id) }
    }

    /// The runs recorded in the run index file, read in place: on a restart, most of the history.
    private var table = RunTable.empty
    /// What changed since `table` was recorded: a run's summary now, or nil for a recorded run
    /// that is gone. Decoded folders, edits and new runs land here; it grows with what happens while
    /// phoned runs, not with the history.
    private var changes: [DocumentID: RunSummary?] = [:]
    /// The completed runs among `changes`, ascending by (endedAt, id).
    private var changedCompleted: [CompletedKey] = []
    package private(set) var activeIDs: Set<DocumentID> = []
    package private(set) var count = 0
    package private(set) var completedCount = 0

    package init() {}

    /// An index of `runs` alone.
    package init(_ runs: some Sequence<RunSummary>) {
        for summary in runs { upsert(summary) }
    }

    /// The summary of run `id`, if the index knows it.
    package subscript(id: DocumentID) -> RunSummary? {
        if let change = changes[id] { return change }
        return table.summary(of: id)
    }

    /// Takes `table` as the recorded runs: its live folders' runs are known from now on, read where
    /// they lie. What the index was told before stays on top of it.
    package mutating func install(_ table: RunTable) {
        let earlier = changes
        self.table = table
        changes = [:]
        changedCompleted = []
        activeIDs = []
        count = 0
        completedCount = 0
        for (folder, statistics) in table.folders.enumerated() where table.isLive[folder] {
            count += statistics.runCount
            completedCount += statistics.completedCount
        }
        for entry in table.activeEntries where table.isLive(entry: entry) { activeIDs.insert(table.id(at: entry)) }
        for (id, change) in earlier {
            if let summary = change { upsert(summary) } else { remove(id) }
        }
    }

    /// Takes `newTable` (a run index file just written) as the recorded runs from now on, knowing
    /// exactly what it knew: only the runs where the table differs from that stay in memory. One pass
    /// over both tables and the changes, in ID order.
    package mutating func rebase(onto newTable: RunTable) {
        let changedIDs = changes.keys.sorted()
        var oldEntry = 0
        var changed = 0
        // The runs known now, in ID order: the old table's that count, merged with the changed ones.
        func nextKnown() -> RunSummary? {
            while oldEntry < table.entryCount, !table.isLive(entry: oldEntry) || changes[table.id(at: oldEntry)] != nil
            {
                oldEntry += 1
            }
            while changed < changedIDs.count, changes[changedIDs[changed]]! == nil { changed += 1 }
            let fromTable = oldEntry < table.entryCount ? table.id(at: oldEntry) : nil
            let fromChanges = changed < changedIDs.count ? changedIDs[changed] : nil
            switch (fromTable, fromChanges) {
            case (nil, nil): return nil
            case (let id?, let other) where other.map({ id < $0 }) ?? true:
                defer { oldEntry += 1 }
                return table.summary(at: oldEntry)
            default:
                defer { changed += 1 }
                return changes[fromChanges!]!
            }
        }
        var differences: [DocumentID: RunSummary?] = [:]
        var known = nextKnown()
        for entry in 0..<newTable.entryCount {
            let recorded = newTable.summary(at: entry)
            while let current = known, current.id < recorded.id {
                differences[current.id] = .some(current)
                known = nextKnown()
            }
            if let current = known, current.id == recorded.id {
                if current != recorded { differences[current.id] = .some(current) }
                known = nextKnown()
            } else {
                differences[recorded.id] = .some(nil)
            }
        }
        while let current = known {
            differences[current.id] = .some(current)
            known = nextKnown()
        }
        table.releaseResidentPages()
        newTable.releaseResidentPages()
        table = newTable
        changes = differences
        changedCompleted = differences.values.compactMap { summary in
            guard let summary, Self.isCompleted(summary), let endedAt = summary.endedAt else { return nil }
            return CompletedKey(endedAt: endedAt, id: summary.id)
        }
        changedCompleted.sort()
    }

    /// Adds or replaces a run's summary.
    package mutating func upsert(_ summary: RunSummary) {
        if let old = self[summary.id] { unplace(old) }
        changes[summary.id] = .some(summary)
        count += 1
        if Self.isCompleted(summary), let endedAt = summary.endedAt {
            completedCount += 1
            let key = CompletedKey(endedAt: endedAt, id: summary.id)
            changedCompleted.insert(key, at: insertionPoint(of: key))
        } else {
            activeIDs.insert(summary.id)
        }
    }

    /// Forgets a run (deleted, or its file vanished).
    package mutating func remove(_ id: DocumentID) {
        guard let old = self[id] else { return }
        unplace(old)
        if table.summary(of: id) != nil {
            changes[id] = .some(nil)
        } else {
            changes[id] = nil
        }
    }

    /// Takes a run that is leaving out of the counts, the active set and the changed completed list.
    private mutating func unplace(_ old: RunSummary) {
        count -= 1
        guard Self.isCompleted(old), let endedAt = old.endedAt else {
            activeIDs.remove(old.id)
            return
        }
        completedCount -= 1
        let key = CompletedKey(endedAt: endedAt, id: old.id)
        let index = insertionPoint(of: key)
        if index < changedCompleted.count, changedCompleted[index] == key { changedCompleted.remove(at: index) }
    }

    /// The runs a push carries: every active run (uncapped, oldest start first), then up to
    /// `policy.recentLimit` completed runs whose end is within `policy.recentWindow` of `now`
    /// (inclusive: a run that ended exactly `recentWindow` ago still rides), newest end first.
    package func pushSelection(now: Timestamp, policy: PushPolicy) -> [DocumentID] {
        let active = activeIDs.compactMap { self[$0] }
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
            .map(\.id)
        let cutoff = now.advanced(by: .zero - policy.recentWindow)
        var recent: [DocumentID] = []
        forEachCompleted(newestFirst: true) { key in
            guard recent.count < policy.recentLimit, key.endedAt >= cutoff else { return false }
            recent.append(key.id)
            return true
        }
        return active + recent
    }

    /// Every completed run, oldest end first: the history a person sees, and exactly what "clear
    /// history" tombstones (never a date cutoff, so a run that arrives after the clear survives).
    package var completedIDs: [DocumentID] {
        var ids: [DocumentID] = []
        ids.reserveCapacity(completedCount)
        forEachCompleted(newestFirst: false) { key in
            ids.append(key.id)
            return true
        }
        table.releaseResidentPages()
        return ids
    }

    /// Lets go of the table's pages read so far: after lookups spread over the whole table (a history
    /// listing looks up every run it lists), which would otherwise leave all of a mapped file resident.
    package func releaseTablePages() { table.releaseResidentPages() }

    /// Every run's summary, in no particular order.
    package func forEachSummary(_ body: (RunSummary) throws -> Void) rethrows {
        defer { table.releaseResidentPages() }
        for entry in 0..<table.entryCount where table.isLive(entry: entry) {
            let summary = table.summary(at: entry)
            if changes[summary.id] == nil { try body(summary) }
        }
        for case let summary? in changes.values { try body(summary) }
    }

    /// The completed runs in (endedAt, id) order, the table's and the changed ones merged, while
    /// `body` says to go on.
    private func forEachCompleted(newestFirst: Bool, _ body: (CompletedKey) -> Bool) {
        let step = newestFirst ? -1 : 1
        var recorded = newestFirst ? table.orderCount - 1 : 0
        var changed = newestFirst ? changedCompleted.count - 1 : 0
        // The table's next completed run that still counts (its folder live, no change on top).
        func nextRecorded() -> CompletedKey? {
            while recorded >= 0, recorded < table.orderCount {
                let element = table.orderElement(at: recorded)
                if table.isLive[element.folder] {
                    let id = table.id(at: element.entry)
                    if changes[id] == nil {
                        return CompletedKey(endedAt: Timestamp(microsecondsSinceEpoch: element.endedAt), id: id)
                    }
                }
                recorded += step
            }
            return nil
        }
        while true {
            let fromTable = nextRecorded()
            let fromChanges = changed >= 0 && changed < changedCompleted.count ? changedCompleted[changed] : nil
            let next: CompletedKey
            switch (fromTable, fromChanges) {
            case (nil, nil): return
            case (let key?, nil):
                next = key
                recorded += step
            case (nil, let key?):
                next = key
                changed += step
            case (let table?, let change?):
                if (table < change) != newestFirst {
                    next = table
                    recorded += step
                } else {
                    next = change
                    changed += step
                }
            }
            guard body(next) else { return }
        }
    }

    private func insertionPoint(of key: CompletedKey) -> Int {
        var low = 0
        var high = changedCompleted.count
        while low < high {
            let middle = (low + high) / 2
            if changedCompleted[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Two indexes are equal when they know the same runs, whatever part of each is recorded.
    package static func == (lhs: RunIndex, rhs: RunIndex) -> Bool {
        guard lhs.count == rhs.count, lhs.completedCount == rhs.completedCount, lhs.activeIDs == rhs.activeIDs,
            lhs.completedIDs == rhs.completedIDs
        else { return false }
        var same = true
        lhs.forEachSummary { summary in
            if same, rhs[summary.id] != summary { same = false }
        }
        return same
    }
}

/// How many completed runs a push carries, how far back they reach, and how large it may be.
package struct PushPolicy: Equatable, Sendable {
    package var recentLimit: Int
    package var recentWindow: Duration
    /// The context limit (the link refuses a larger context with `payloadTooLarge`).
    package var maximumBytes: Int

    /// Seed 000: up to 25 completed runs from the last 24 hours; WatchConnectivity's 262,144 bytes.
    package static let standard = PushPolicy(recentLimit: 25, recentWindow: .seconds(24 * 3_600))

    package init(recentLimit: Int, recentWindow: Duration, maximumBytes: Int = 262_144) {
        self.recentLimit = recentLimit
        self.recentWindow = recentWindow
        self.maximumBytes = maximumBytes
    }
}
