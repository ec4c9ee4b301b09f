/// The phone's index of every run it knows, kept so a push never walks the whole history.
///
/// It holds one small `RunSummary` per run (not the documents), the set of active runs, and the
/// completed runs sorted by end time. `pushSelection` touches only the active runs and the newest
/// few completed ones, so its cost does not grow with history.
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

    private struct CompletedKey: Comparable {
        var endedAt: Timestamp
        var id: DocumentID
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.endedAt, lhs.id) < (rhs.endedAt, rhs.id) }
    }

    package private(set) var summaries: [DocumentID: RunSummary] = [:]
    package private(set) var activeIDs: Set<DocumentID> = []
    /// Completed runs, ascending by (endedAt, id).
    private var completed: [CompletedKey] = []

    package init() {}

    /// Builds the index from a whole scan at once: one sort instead of one insertion per run.
    package init(_ runs: some Sequence<RunSummary>) {
        for summary in runs {
            summaries[summary.id] = summary
        }
        for summary in summaries.values {
            if let endedAt = summary.endedAt, !summary.status.isActive {
                completed.append(CompletedKey(endedAt: endedAt, id: summary.id))
            } else {
                activeIDs.insert(summary.id)
            }
        }
        completed.sort()
    }

    package var count: Int { summaries.count }
    package var completedCount: Int { completed.count }

    /// Adds or replaces a run's summary.
    package mutating func upsert(_ summary: RunSummary) {
        remove(summary.id)
        summaries[summary.id] = summary
        if let endedAt = summary.endedAt, !summary.status.isActive {
            let key = CompletedKey(endedAt: endedAt, id: summary.id)
            completed.insert(key, at: insertionPoint(of: key))
        } else {
            activeIDs.insert(summary.id)
        }
    }

    /// Adds or replaces many runs' summaries at once — a month folder of the start-up scan — with the
    /// same result as `upsert` of each in turn: one hash lookup a run, and the batch's completed runs
    /// sorted and merged into the completed list once (appended when they all end after it, as the
    /// folders of a scan, read oldest month first, mostly do) instead of inserted one by one, each
    /// moving the list's tail (at a million runs that was most of a restart).
    package mutating func upsert(contentsOf batch: [RunSummary]) {
        summaries.reserveCapacity(summaries.count + batch.count)
        var added: [CompletedKey] = []
        added.reserveCapacity(batch.count)
        for summary in batch {
            if let old = summaries.updateValue(summary, forKey: summary.id) {
                unplace(old)
                // A run listed twice in one batch: its earlier place is in `added`, not yet merged.
                added.removeAll { $0.id == summary.id }
            }
            if let endedAt = summary.endedAt, !summary.status.isActive {
                added.append(CompletedKey(endedAt: endedAt, id: summary.id))
            } else {
                activeIDs.insert(summary.id)
            }
        }
        added.sort()
        guard let first = added.first else { return }
        if let last = completed.last, first < last {
            var merged: [CompletedKey] = []
            merged.reserveCapacity(completed.count + added.count)
            var (old, new) = (0, 0)
            while old < completed.count, new < added.count {
                if completed[old] < added[new] {
                    merged.append(completed[old])
                    old += 1
                } else {
                    merged.append(added[new])
                    new += 1
                }
            }
            merged += completed[old...]
            merged += added[new...]
            completed = merged
        } else {
            completed += added
        }
    }

    /// Gives back the completed list's spare capacity: after a scan's batches it can be nearly as
    /// large again as the list (a batch appended to a list a merge had sized exactly doubles it),
    /// 24 bytes a run that would stay resident.
    package mutating func releaseSpareCapacity() {
        guard completed.capacity > completed.count + completed.count / 16 else { return }
        completed = completed.withUnsafeBufferPointer { Array($0) }
    }

    /// Forgets a run (deleted, or its file vanished).
    package mutating func remove(_ id: DocumentID) {
        guard let old = summaries.removeValue(forKey: id) else { return }
        unplace(old)
    }

    /// Takes a run that left `summaries` out of the active set or the completed list.
    private mutating func unplace(_ old: RunSummary) {
        activeIDs.remove(old.id)
        if let endedAt = old.endedAt {
            let key = CompletedKey(endedAt: endedAt, id: old.id)
            let index = insertionPoint(of: key)
            if index < completed.count, completed[index] == key { completed.remove(at: index) }
        }
    }

    /// The runs a push carries: every active run (uncapped, oldest start first), then up to
    /// `policy.recentLimit` completed runs whose end is within `policy.recentWindow` of `now`
    /// (inclusive: a run that ended exactly `recentWindow` ago still rides), newest end first.
    package func pushSelection(now: Timestamp, policy: PushPolicy) -> [DocumentID] {
        let active = activeIDs.compactMap { summaries[$0] }
            .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
            .map(\.id)
        let cutoff = now.advanced(by: .zero - policy.recentWindow)
        var recent: [DocumentID] = []
        var index = completed.count - 1
        while index >= 0, recent.count < policy.recentLimit, completed[index].endedAt >= cutoff {
            recent.append(completed[index].id)
            index -= 1
        }
        return active + recent
    }

    /// Every completed run, oldest end first: the history a person sees, and exactly what "clear
    /// history" tombstones (never a date cutoff, so a run that arrives after the clear survives).
    package var completedIDs: [DocumentID] { completed.map(\.id) }

    private func insertionPoint(of key: CompletedKey) -> Int {
        var low = 0
        var high = completed.count
        while low < high {
            let middle = (low + high) / 2
            if completed[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
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
