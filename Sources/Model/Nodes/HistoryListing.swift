import AdminCommands
import SyncEngine
import WorkoutModel

/// `phonectl workouts --all` for a client that takes its reply in chunks: the runs of the page, in
/// start order, a chunk at a time, each sent once the client has taken the one before
/// (`ShellReport.replyTaken`), so phoned never holds more than one chunk's documents however long
/// the history.
///
/// The page is fixed when the request arrives — its runs' keys, 24 bytes a run, kept for the reply's
/// life — and each chunk's documents are read when it is built: a run deleted meanwhile is left out,
/// one changed meanwhile is listed as it is then.
struct HistoryListing: Sendable {
    /// A run's place in the listing: ordered by start, then ID (`--after` names the last one seen).
    struct Key: Comparable, Sendable {
        var startedAt: Timestamp
        var id: DocumentID
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.startedAt, lhs.id) < (rhs.startedAt, rhs.id) }
    }

    /// One reply in progress.
    struct Reply: Sendable {
        var keys: [Key]
        /// Whether `keys` is in order yet: a page without a limit is sorted after its first chunk
        /// went (that chunk holds its smallest keys, found without sorting), so the first line does
        /// not wait for a sort of the whole history.
        var isSorted: Bool
        /// How many keys the chunks sent so far covered.
        var position = 0
        /// How many runs they listed (keys of runs deleted meanwhile are skipped).
        var listed = 0
        var json: Bool

        var isFinished: Bool { position >= keys.count }
    }

    /// The first chunk is small, so the first line arrives at once; the rest amortise the turn.
    static let firstChunkRuns = 32
    static let chunkRuns = 256
    /// The most runs a whole reply (to a client that takes no chunks) may carry: more would be read
    /// and encoded at once, hundreds of MB at 100k runs.
    static let wholeReplyMaximumRuns = 10_000

    private(set) var replies: [AdminRequestID: Reply] = [:]

    /// The page's keys: runs started at or after `since`, after the run `after`, at most `limit`;
    /// sorted only when a limit cuts them (else `next` sorts them once the first chunk went).
    static func page(
        _ index: RunIndex, limit: Int?, after: DocumentID?, since: Timestamp?
    ) throws(OperationError) -> (keys: [Key], isSorted: Bool) {
        var floor: Key?
        if let after {
            guard let anchor = index[after] else { throw .unknownRun(after) }
            floor = Key(startedAt: anchor.startedAt, id: anchor.id)
        }
        var keys: [Key] = []
        index.forEachSummary { summary in
            guard since.map({ summary.startedAt >= $0 }) ?? true else { return }
            let key = Key(startedAt: summary.startedAt, id: summary.id)
            if let floor, key <= floor { return }
            keys.append(key)
        }
        guard let limit else { return (keys, false) }
        keys.sort()
        if limit < keys.count { keys.removeSubrange(limit...) }
        return (keys, true)
    }

    /// The `count` smallest of `keys`, in order, in one pass (no sort of the whole).
    static func smallest(_ count: Int, of keys: [Key]) -> [Key] {
        var kept: [Key] = []
        kept.reserveCapacity(count + 1)
        for key in keys where kept.count < count || key < kept[kept.count - 1] {
            var low = 0
            var high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if kept[middle] < key { low = middle + 1 } else { high = middle }
            }
            kept.insert(key, at: low)
            if kept.count > count { kept.removeLast() }
        }
        return kept
    }

    /// Starts `request`'s reply; returns its first response (the only one when the page fits).
    mutating func start(
        _ request: AdminRequestID, page: (keys: [Key], isSorted: Bool), json: Bool,
        runs: ([Key]) throws -> [WorkoutDocument]
    ) throws -> AdminResponse {
        var reply = Reply(keys: page.keys, isSorted: page.isSorted, json: json)
        let response = try Self.next(&reply, runs: runs)
        if !reply.isFinished { replies[request] = reply }
        return response
    }

    /// The next response of `request`'s reply once the client took the last; nil when there is no
    /// such reply or the client has gone (the reply is dropped).
    mutating func next(
        _ request: AdminRequestID, clientGone: Bool, runs: ([Key]) throws -> [WorkoutDocument]
    ) throws -> AdminResponse? {
        // Taken out while it is worked on, so sorting its keys copies nothing.
        guard var reply = replies.removeValue(forKey: request), !clientGone else { return nil }
        do {
            let response = try Self.next(&reply, runs: runs)
            if !reply.isFinished { replies[request] = reply }
            return response
        } catch let needs as NeedsReads {
            // The same reply (its keys perhaps sorted now) goes on once the shell has read the runs.
            replies[request] = reply
            throw needs
        }
    }

    /// Builds the next chunk of `reply` from its runs (`runs` reads them: it may throw `NeedsReads`
    /// before anything changed) and advances it; the last chunk is a final response.
    private static func next(_ reply: inout Reply, runs: ([Key]) throws -> [WorkoutDocument]) throws -> AdminResponse {
        let size = reply.position == 0 ? firstChunkRuns : chunkRuns
        let end = min(reply.position + size, reply.keys.count)
        let chunk: [Key]
        if reply.isSorted {
            chunk = Array(reply.keys[reply.position..<end])
        } else if reply.position == 0 {
            chunk = smallest(size, of: reply.keys)
        } else {
            // After the first chunk: its keys are the smallest, so the sorted keys go on after them.
            reply.keys.sort()
            reply.isSorted = true
            chunk = Array(reply.keys[reply.position..<end])
        }
        let documents = try runs(chunk)
        let isFirst = reply.position == 0
        let wasListed = reply.listed
        reply.position = end
        reply.listed += documents.count
        var text = ""
        var json = ""
        if reply.json {
            // One JSON array across the chunks: opened by the first, closed by the last.
            json =
                (isFirst ? "[" : "") + (wasListed > 0 && !documents.isEmpty ? "," : "")
                + documents.map { AdminOutcome.json($0) }.joined(separator: ",")
            if reply.isFinished { json += "]" }
        } else {
            for run in documents { text += PhoneNode.line(run) + "\n" }
            if reply.isFinished, reply.listed == 0 { text = "no runs" }
        }
        return reply.isFinished ? .ok(text: text, json: json) : .chunk(text: text, json: json)
    }
}
