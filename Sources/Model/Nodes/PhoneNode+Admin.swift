import AdminCommands
import LiveMirror
import SyncEngine
import Trace
import WorkoutModel

extension PhoneNode {
    /// Serves one phonectl command (typed by phonectl; what needs phoned's state is checked here):
    /// its actions, then the reply; a refusal is logged.
    mutating func admin(
        _ request: AdminRequestID, _ command: PhoneCommand, freshID: DocumentID, facts: ShellFacts, now: Timestamp,
        reads: Reads, into out: inout Output
    ) throws(NeedsReads) {
        lastWatchState = facts.link.watchState
        let notRunning = command.needsRunningApp && !app.isRunning ? app.notRunning : nil
        if let refusal = (command.writes ? facts.readOnlyRefusal : nil) ?? notRunning {
            out.log(.notice, "admin", "refused admin request", [("command", "\(command)"), ("reason", refusal)])
            out.node(.reply(request, AdminOutcome.refused(refusal).response))
            return
        }
        switch command {
        case .pushComplication(let text):
            pushComplication(text, request: request, facts: facts, now: now, into: &out)
            return
        case .cancelComplication(let sequence, let userInfo):
            cancelComplication(sequence, userInfo: userInfo, request: request, into: &out)
            return
        case .trace(let query):
            out.node(.replyTrace(request, query))
            return
        case .data(let data):
            out.node(dataMessages.serve(data, request: request, now: now))
            return
        case .file(let file):
            out.node(try fileTransfers.serve(file, request: request, reads: reads))
            return
        case .workouts(all: true, let limit, let after, let since, let json, streamed: true):
            out.node(
                .reply(
                    request,
                    try startHistory(
                        request, limit: limit, after: after, since: since, json: json, now: now, reads: reads)))
            return
        default:
            break
        }
        let outcome = try AdminOutcome.serve(command) { command in
            try execute(command, freshID: freshID, facts: facts, now: now, reads: reads, into: &out)
        }
        reconcileLive(now: now, into: &out)
        if case .refused(let message) = outcome {
            out.log(.notice, "admin", "refused admin request", [("command", "\(command)"), ("reason", message)])
        }
        out.node(.reply(request, outcome.response))
    }

    private mutating func execute(
        _ command: PhoneCommand, freshID: DocumentID, facts: ShellFacts, now: Timestamp, reads: Reads,
        into out: inout Output
    ) throws -> AdminOutcome {
        switch command {
        case .status:
            let status = status(facts, now: now)
            return .output(text: status.text, json: AdminOutcome.json(status))
        case .splits:
            let splits = engine.splits.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            let text = splits.map { split in
                "\(split.id)  \(split.name)  "
                    + split.exercises.map { "\($0.name) \($0.targetSets)x\($0.targetReps)@\(format($0.targetWeight))" }
                    .joined(separator: ", ")
            }
            return .output(text: AdminOutcome.lines(text, empty: "no splits"), json: AdminOutcome.json(splits))
        case .workouts(let all, let limit, let after, let since, let json, _):
            return try workouts(all: all, limit: limit, after: after, since: since, json: json, now: now, reads: reads)
        case .show(let id):
            if let split = engine.splits[id] {
                return .output(
                    text: String(decoding: DocumentCoder.encodeForDisk(split), as: UTF8.self),
                    json: AdminOutcome.json(split))
            }
            return try shown(try readRun(id, reads: reads), reads: reads)
        case .createSplit(let name, let exercises):
            try operate(.createSplit(id: freshID, name: name, exercises: exercises), now: now, reads: reads, into: &out)
            return .output(text: "\(freshID)", json: AdminOutcome.json(AdminReply.Created(id: freshID)))
        case .editSplit(let id, let name, let exercises):
            try operate(.editSplit(id: id, name: name, exercises: exercises), now: now, reads: reads, into: &out)
            return .done
        case .deleteSplit(let id):
            try operate(.deleteSplit(id: id), now: now, reads: reads, into: &out)
            return .done
        case .start(let splitID, let endingOthers):
            try operate(
                .startRun(splitID: splitID, runID: freshID, endingOthers: endingOthers), now: now, reads: reads,
                into: &out)
            return .output(text: "\(freshID)", json: AdminOutcome.json(AdminReply.Created(id: freshID)))
        case .set(.complete(let runID, let exercise, let set, let reps, let weight)):
            let run = try loadRun(runID, now: now, reads: reads, into: &out)
            let (logIndex, setIndex) = try run.refusingSetPosition(exercise: exercise, set: set)
            let log = run.logs[logIndex]
            try operate(
                .completeSet(
                    runID: runID, logIndex: logIndex, setIndex: setIndex, reps: reps ?? log.targetReps,
                    weight: weight ?? log.targetWeight), now: now, reads: reads, into: &out)
            return .done
        case .set(.undo(let runID, let exercise, let set)):
            let run = try loadRun(runID, now: now, reads: reads, into: &out)
            let (logIndex, setIndex) = try run.refusingSetPosition(exercise: exercise, set: set)
            try operate(
                .undoSet(runID: runID, logIndex: logIndex, setIndex: setIndex), now: now, reads: reads, into: &out)
            return .done
        case .set(.skip(let runID, let exercise)):
            let logIndex = try loadRun(runID, now: now, reads: reads, into: &out).refusingLogIndex(exercise: exercise)
            try operate(.skipLog(runID: runID, logIndex: logIndex), now: now, reads: reads, into: &out)
            return .done
        case .set(.reopen(let runID, let exercise)):
            let logIndex = try loadRun(runID, now: now, reads: reads, into: &out).refusingLogIndex(exercise: exercise)
            try operate(.reopenLog(runID: runID, logIndex: logIndex), now: now, reads: reads, into: &out)
            return .done
        case .pause(let runID):
            try operate(.pause(runID: runID), now: now, reads: reads, into: &out)
            return .done
        case .resume(let runID):
            try operate(.resume(runID: runID), now: now, reads: reads, into: &out)
            return .done
        case .end(let runID):
            try operate(.endKeepingProgress(runID: runID), now: now, reads: reads, into: &out)
            return .done
        case .discard(let runID):
            try operate(.discard(runID: runID), now: now, reads: reads, into: &out)
            return .done
        case .clearHistory:
            let count = engine.index.completedCount
            try operate(.clearHistory, now: now, reads: reads, into: &out)
            let json = AdminOutcome.json(AdminReply.Tombstoned(tombstoned: count))
            return .output(text: "tombstoned \(count) completed runs", json: json)
        case .showSettings:
            return .output(text: describe(engine.settings), json: AdminOutcome.json(engine.settings))
        case .setSettings(let rest, let countdown, let unit):
            var settings = engine.settings
            if let rest { settings.restSeconds = rest }
            if let countdown { settings.doneCountdownSeconds = countdown }
            if let unit { settings.weightUnit = unit }
            try operate(.setSettings(settings), now: now, reads: reads, into: &out)
            return .output(text: describe(settings), json: AdminOutcome.json(settings))
        case .lockWorkout(let id):
            try operate(.setWorkoutLock(id), now: now, reads: reads, into: &out)
            return .done
        case .lockSplit(let id):
            try operate(.setSplitLock(id), now: now, reads: reads, into: &out)
            return .done
        case .unlockWorkout:
            try operate(.setWorkoutLock(nil), now: now, reads: reads, into: &out)
            return .done
        case .unlockSplit:
            try operate(.setSplitLock(nil), now: now, reads: reads, into: &out)
            return .done
        case .push:
            try operate(.forcePush, now: now, reads: reads, into: &out)
            return .done
        case .metrics:
            return status(facts, now: now).metrics(facts)
        case .showComplication:
            return try complicationStatus(facts, now: now, reads: reads)
        case .trace, .data, .pushComplication, .cancelComplication, .file:
            // Served from the journal by the shell, or with the link's answer (see `admin`).
            return .refused("\(command) is answered by the shell")
        case .live(let command):
            // The run a flow opens or advances, loaded before the mirror moves.
            var driven: Result<WorkoutDocument, any Error>?
            if let id = command.drivenRunID {
                do {
                    driven = .success(try loadRun(id, now: now, reads: reads, into: &out))
                } catch let needs as NeedsReads {
                    throw needs
                } catch {
                    driven = .failure(error)
                }
            }
            let step = try live.execute(command, run: { _ in try driven?.get() }, settings: engine.settings, now: now)
            switch step {
            case .finished(let outcome, let actions):
                out.node(actions)
                return outcome
            case .completeSet(let run, let logIndex, let setIndex, let reps, let weight, let refusals, let actions):
                out.node(actions)
                try operate(
                    .completeSet(runID: run.id, logIndex: logIndex, setIndex: setIndex, reps: reps, weight: weight),
                    now: now, reads: reads, into: &out)
                return live.outcome(refusals: refusals, now: now)
            }
        case .launch(let runID):
            try operate(.launch(runID: runID), now: now, reads: reads, into: &out)
            return .done
        case .app(let change):
            let (actions, outcome) = app.serve(change)
            out.node(actions)
            return outcome
        }
    }

    /// Performs an operation and its actions, loading the run it changes first if only its summary
    /// is in memory (a run outside the recent window), so the model itself answers.
    private mutating func operate(
        _ operation: PhoneOperation, now: Timestamp, reads: Reads, into out: inout Output
    ) throws {
        if let runID = operation.runID, engine.needsDocument(runID) {
            _ = try loadRun(runID, now: now, reads: reads, into: &out)
        }
        // A batch of transfers still open (a drain's turn cut short for this request) ends first,
        // once nothing can ask for reads: its writes, `merged` lines and acknowledgements go before
        // what the operation does, in the order things came (a discard's after the merges it ends).
        endBatch(now: now, into: &out)
        translate(try engine.perform(operation, now: now), now: now, into: &out)
    }

    /// The run from the working set, loaded into it first when only its summary is in memory.
    private mutating func loadRun(
        _ id: DocumentID, now: Timestamp, reads: Reads, into out: inout Output
    ) throws -> WorkoutDocument {
        if engine.needsDocument(id), let summary = engine.index[id] {
            let run = try reads.workout(id, startedAt: summary.startedAt)
            translate(engine.handle(.runsLoaded([run], unreadable: [], now: now)), now: now, into: &out)
            return engine.run(id) ?? run
        }
        guard let run = engine.run(id) else {
            throw engine.tombstones[id] != nil ? OperationError.deleted(id) : OperationError.unknownRun(id)
        }
        return run
    }

    /// The run for reading: the working set's copy, else its file (not kept in memory).
    private func readRun(_ id: DocumentID, reads: Reads) throws -> WorkoutDocument {
        if engine.needsDocument(id), let summary = engine.index[id] {
            return try reads.workout(id, startedAt: summary.startedAt)
        }
        guard let run = engine.run(id) else {
            throw engine.tombstones[id] != nil ? OperationError.deleted(id) : OperationError.unknownRun(id)
        }
        return run
    }

    /// `workouts --all` for a client that takes chunks: the page's first response (its only one when
    /// it fits in a chunk); `HistoryListing` keeps the rest of the reply.
    private mutating func startHistory(
        _ request: AdminRequestID, limit: Int?, after: DocumentID?, since: String?, json: Bool, now: Timestamp,
        reads: Reads
    ) throws(NeedsReads) -> AdminResponse {
        do {
            let page = try HistoryListing.page(
                engine.index, limit: limit, after: after, since: try Self.since(since, now: now))
            return try history.start(request, page: page, json: json) { [engine] in
                try Self.historyRuns($0, engine: engine, reads: reads)
            }
        } catch let needs as NeedsReads {
            throw needs
        } catch {
            return AdminOutcome.refused("\(error)").response
        }
    }

    /// The next chunk of a history reply whose client took the last one (none once it has gone).
    mutating func continueHistory(
        _ request: AdminRequestID, clientGone: Bool, reads: Reads, into out: inout Output
    ) throws(NeedsReads) {
        let response: AdminResponse?
        do {
            response = try history.next(request, clientGone: clientGone) { [engine] in
                try Self.historyRuns($0, engine: engine, reads: reads)
            }
        } catch let needs as NeedsReads {
            throw needs
        } catch {
            response = AdminOutcome.refused("\(error)").response
        }
        if let response { out.node(.reply(request, response)) }
    }

    /// The documents of a history chunk, in its order: the working set's copy, else the file's; runs
    /// no longer in the index (deleted since the listing began) are left out.
    private static func historyRuns(
        _ keys: [HistoryListing.Key], engine: SyncEngine, reads: Reads
    ) throws -> [WorkoutDocument] {
        // A chunk's lookups land all over the table: a whole listing would leave all of it resident
        // (80 MB at a million runs, kept after a listing cut short).
        defer { engine.index.releaseTablePages() }
        var missing: [DocumentID: Timestamp] = [:]
        for key in keys where engine.needsDocument(key.id) && reads.documents[key.id] == nil {
            missing[key.id] = engine.index[key.id]?.startedAt
        }
        if !missing.isEmpty { throw NeedsReads(documents: missing) }
        return try keys.compactMap { key in
            guard engine.index[key.id] != nil else { return nil }
            if let run = engine.run(key.id) { return run }
            do {
                return try reads.documents[key.id]?.get()
            } catch {
                throw OperationError.invalid("run \(key.id) could not be read: \(error)")
            }
        }
    }

    /// `--since` at `now`: runs started at or after it (the CLI checked the form).
    private static func since(_ text: String?, now: Timestamp) throws(OperationError) -> Timestamp? {
        guard let text else { return nil }
        guard let micros = TraceTime.parseBound(text, now: now.microsecondsSinceEpoch) else {
            throw .invalid("--since must be an age (90s, 5m, 2h, 1d) or a UTC time, got \(text)")
        }
        return Timestamp(microsecondsSinceEpoch: micros)
    }

    /// The runs `workouts` lists whole, ordered by (start, ID): what the push carries now (active and
    /// recent, fitted to the context limit — whether or not a push ever went), or with `all` the whole
    /// history (for a client that takes no chunks, at most `HistoryListing.wholeReplyMaximumRuns`);
    /// `since`, `after` and `limit` cut one page of it.
    private func workouts(
        all: Bool, limit: Int?, after: DocumentID?, since: String?, json: Bool, now: Timestamp, reads: Reads
    ) throws -> AdminOutcome {
        let index = engine.index
        var carried: [WorkoutDocument] = []
        if !all {
            var missing: [DocumentID: Timestamp] = [:]
            carried =
                engine.context(now: now) { id in
                    do {
                        return try readRun(id, reads: reads)
                    } catch let needs as NeedsReads {
                        missing.merge(needs.documents) { a, _ in a }
                    } catch {}
                    return nil
                }.workouts
            if !missing.isEmpty { throw NeedsReads(documents: missing) }
        }
        let known = Dictionary(uniqueKeysWithValues: carried.map { ($0.id, $0) })
        var summaries: [RunIndex.RunSummary] = []
        if all {
            index.forEachSummary { summaries.append($0) }
        } else {
            summaries = carried.compactMap { index[$0.id] }
        }
        summaries.sort { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        if let floor = try Self.since(since, now: now) { summaries.removeAll { $0.startedAt < floor } }
        if let after {
            guard let anchor = index[after] else { throw OperationError.unknownRun(after) }
            summaries.removeAll { ($0.startedAt, $0.id) <= (anchor.startedAt, anchor.id) }
        }
        if let limit { summaries = Array(summaries.prefix(limit)) }
        if summaries.count > HistoryListing.wholeReplyMaximumRuns {
            return .refused(
                "\(summaries.count) runs are more than one whole reply carries "
                    + "(\(HistoryListing.wholeReplyMaximumRuns)): page with --limit and --after, "
                    + "or use a phonectl that streams the history")
        }
        let unread = summaries.filter { known[$0.id] == nil && engine.needsDocument($0.id) }
        let fromDisk = try reads.workouts(unread.map { ($0.id, $0.startedAt) })
        let runs = try summaries.map { summary in
            try known[summary.id] ?? fromDisk[summary.id] ?? readRun(summary.id, reads: reads)
        }
        // Only the form the CLI prints: a long history is costly to encode twice.
        guard !json else { return .output(text: "", json: AdminOutcome.json(runs)) }
        return .output(
            text: AdminOutcome.lines(runs.map(Self.line), empty: all ? "no runs" : "no active or recent runs"),
            json: "")
    }
}
