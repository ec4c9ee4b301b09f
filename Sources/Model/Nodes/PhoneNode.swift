import AdminCommands
import LinkProtocol
import LiveMirror
import SyncEngine
import Trace
import WorkoutModel

/// Everything `phoned` decides, as one value: the SyncEngine, the live mirror's driver, the batch of
/// transfers one loop turn delivers, the admin verbs, and the timers. Events in (link notifications,
/// admin requests, directory changes, timers, what its actions produced), one ordered list of
/// actions out. It reads no clock, file or socket: the shell stamps each event with `now` and reads
/// what `NeedsReads` asks for.
package struct PhoneNode: Sendable {
    package internal(set) var engine: SyncEngine
    package internal(set) var live: LiveDriver
    package internal(set) var launchesSent = 0
    package internal(set) var launchesDropped = 0
    /// Files the gather or the watcher could not read, `path: reason`, newest last.
    package internal(set) var skippedFiles: [SkippedFile] = []
    /// The open batch: the transfers one loop turn delivered, acknowledged together at its end.
    var batch: Batch?
    private var pushTimer: Timestamp?
    private var clockLease = ClockLease()
    private var stopping = false
    /// The admin requests the last action list answered (`durableWriteFailed`).
    private var lastAnswered: [AdminRequestID] = []
    /// The watch's instance, for the causal ids of its messages.
    var peer: InstanceID?
    /// The watch's state as last seen in an admin request's facts or a link notification.
    var lastWatchState = WatchState.installed
    /// The messages in flight and why each was sent.
    package internal(set) var messages = MessageLedger()
    package internal(set) var dataMessages = DataMessages()
    package internal(set) var fileTransfers = FileTransfers()
    /// `workouts --all` replies being sent a chunk at a time.
    var history = HistoryListing()
    /// Today's spending of the complication budget (`<state>/complication-budget.json`).
    package internal(set) var complicationBudget: ComplicationBudget
    /// `complication cancel` requests waiting for the link, by sequence and whether it is a userInfo one's.
    var cancelling = CancelWaits<ComplicationCancel>()
    /// Whether the phone app runs, apart from phoned (the device): `phonectl app …`.
    package internal(set) var app = AppRun("phone", cli: "phonectl")
    /// The runs the last push carried: a live flow of one the next push brings back is sent again.
    private var lastPushedRuns: Set<DocumentID> = []
    /// `remainingComplicationUserInfoTransfers` at the start of a day (phoned's `complicationTransfersPerDay`).
    package let complicationsPerDay: Int

    package struct SkippedFile: Equatable, Sendable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
        package var description: String { "\(path): \(reason)" }
    }

    struct Batch: Sendable {
        var keys: [TransferKey] = []
        /// Transfers that could not be decoded, and why: refused to the watch at the batch's end.
        var refused: [(key: TransferKey, reason: String)] = []
        var lines: [IngestLine] = []
    }

    struct IngestLine: Sendable {
        var run: DocumentID
        var channel: SyncEngine.IngestChannel
        var outcome: SyncEngine.IngestOutcome
        var version: Stamp
        var cause: String
    }

    package enum Event: Sendable {
        /// Start-up, before the gather: the context the link's slot still holds (the watch may hold
        /// its runs as active).
        case started(lastContext: [UInt8]?)
        case documentScanned(SyncEngine.ScannedDocument)
        /// The run index file's table before the gather reads any document: the runs of the month
        /// folders recorded and unchanged since, known by summary only.
        case runTableScanned(RunTable)
        /// The run index file just written after the gather, read back (`SyncEngine.runTableWritten`).
        case runTableWritten(RunTable)
        /// What became of the run index (`<state>/run-index`); `rebuilt` when it could not be used or
        /// written, so the documents were (or will be) read whole.
        case runIndexNoted(String, rebuilt: Bool)
        /// How far the initial gather has got (every few seconds of a long one).
        case gatherProgress(scanned: Int, elapsedSeconds: Double)
        /// The gather is done (`report` says what it found).
        case gatherFinished(String, skipped: [SkippedFile])
        /// The link is listening; `activated` when it was activated in an earlier life.
        case linkStarted(activated: Bool)
        case link(LinkNotification)
        /// What one of the node's actions produced (a timer fired, the turn ended, a push queued, …).
        case reported(ShellReport)
        /// The runs `.loadRuns` asked for, as read.
        case runsLoaded(Reads)
        case externalChange(SyncEngine.ExternalChange)
        case fileSkipped(SkippedFile)
        case fileSettled(path: String)
        /// The watcher saw something to report; `rescan` when it may have missed changes.
        case watcherNoticed(String, rescan: Bool)
        /// The rescan's unreadable files, or why it failed.
        case rescanFinished(Result<[SkippedFile], ReadFailure>)
        /// Admin request N; `freshID` is a new random ID for a verb that creates a document.
        case admin(AdminRequestID, PhoneCommand, freshID: DocumentID, facts: ShellFacts)
        case shutdownRequested(signal: String)
    }

    package enum Action: Equatable, Sendable {
        case store(StoreWrite)
        /// Read these runs and feed `.runsLoaded`.
        case loadRuns([DocumentID: Timestamp])
        /// Scan the whole directory again, feeding each document as `.externalChange`, then
        /// `.rescanFinished`.
        case rescan
        case node(NodeAction)
    }

    /// The document directory's and state directory's durable writes (atomic replace, fsynced).
    package enum StoreWrite: Equatable, Sendable {
        case writeSplit(SplitDocument)
        case removeSplitFile(DocumentID)
        /// The run made durable (phoned: in its pending record); its file is replaced at `publishWorkout`.
        case writeWorkout(WorkoutDocument)
        /// The file of a run written since its last publish, replaced without a sync: after the
        /// actions that follow the write (the push), before the replies (`publishingWrites`).
        case publishWorkout(DocumentID, startedAt: Timestamp)
        case removeWorkoutFile(DocumentID, startedAt: Timestamp)
        case writeTombstone(Tombstone)
        case persistSettings(Settings)
        case persistEpoch(Timestamp)
        case persistComplicationBudget(ComplicationBudget)
        /// Keep the received file (in the link's inbox) as the run's samples, replacing earlier ones.
        case writeSamples(TransferKey, runID: DocumentID, startedAt: Timestamp)
        /// The run is gone: its samples file too (none is fine).
        case removeSamples(DocumentID, startedAt: Timestamp)
        /// The run's file moved to another month folder: its samples follow (none is fine).
        case moveSamples(DocumentID, from: Timestamp, to: Timestamp)
    }

    package init(
        engine: SyncEngine, live: LiveDriver, complicationsPerDay: Int = 50,
        complicationBudget: ComplicationBudget = ComplicationBudget(), life: Int = 0
    ) {
        messages = MessageLedger(life: life)
        self.engine = engine
        self.live = live
        self.complicationsPerDay = complicationsPerDay
        self.complicationBudget = complicationBudget
    }

    /// Handles one event. Throws `NeedsReads`, before changing anything, when it needs runs or
    /// listings the shell has not read; the shell reads them and feeds the same event with `reads`.
    package mutating func handle(
        _ event: Event, now: Timestamp, reads: Reads = Reads()
    ) throws(NeedsReads) -> [Action] {
        var out = Output()
        switch event {
        case .started(let lastContext):
            if let lastContext, let last = try? DocumentCoder.decode(ApplicationContext.self, from: lastContext) {
                engine.watchMayHoldActive = Set(
                    last.workouts.filter(\.isActive).map(\.id) + (last.heldBackRunIDs ?? []))
            }
        case .documentScanned(let document):
            translate(engine.handle(.documentScanned(document, now: now)), now: now, into: &out)
        case .runTableScanned(let table):
            translate(engine.handle(.runTableScanned(table, now: now)), now: now, into: &out)
        case .runTableWritten(let table):
            translate(engine.handle(.runTableWritten(table)), now: now, into: &out)
            out.log(
                .info, "documents", "run index",
                [("note", "written and taken back (runs recorded: \(table.entryCount))")])
        case .runIndexNoted(let note, let rebuilt):
            out.log(rebuilt ? .warning : .info, "documents", "run index", [("note", note)])
        case .gatherProgress(let scanned, let elapsed):
            let rate = elapsed > 0 ? Int((Double(scanned) / elapsed).rounded()) : 0
            out.log(.info, "documents", "gather progress", [("scanned", "\(scanned)"), ("rate", "\(rate)")])
        case .gatherFinished(let report, let skipped):
            // With the split files the engine refused meanwhile (`refuseSplitFile`).
            skippedFiles = skipped + skippedFiles.filter { refused in !skipped.contains { $0.path == refused.path } }
            out.log(.info, "documents", "initial gather", [("report", report)])
            for file in skipped {
                out.log(
                    .warning, "documents", "skipped unreadable file", [("path", file.path), ("reason", file.reason)])
            }
            translate(engine.handle(.gatherFinished(now: now)), now: now, into: &out)
        case .linkStarted(let activated):
            if activated { translate(engine.handle(.linkActivated(now: now)), now: now, into: &out) }
        case .link(let notification):
            messages.observe(notification)
            if case .messageCompleted(let id, let outcome) = notification, let purpose = messages.purpose(of: id) {
                messageEnded(purpose, outcome, now: now, into: &out)
                messages.ended(id)
            } else {
                try linkNotified(notification, now: now, reads: reads, into: &out)
            }
        case .reported(.turnEnded):
            endBatch(now: now, into: &out)
        case .runsLoaded(let reads):
            var loaded: [WorkoutDocument] = []
            var unreadable: [DocumentID] = []
            for (id, result) in reads.documents.sorted(by: { $0.key < $1.key }) {
                switch result {
                case .success(let run):
                    loaded.append(run)
                case .failure(let failure):
                    out.log(
                        .warning, "documents", "could not load a run", [("run", "\(id)"), ("reason", "\(failure)")])
                    unreadable.append(id)
                }
            }
            translate(engine.handle(.runsLoaded(loaded, unreadable: unreadable, now: now)), now: now, into: &out)
        case .externalChange(let change):
            translate(engine.handle(.externalChange(change, now: now)), now: now, into: &out)
            reconcileLive(now: now, into: &out)
        case .fileSkipped(let file):
            skippedFiles.removeAll { $0.path == file.path }
            skippedFiles.append(file)
            out.log(.warning, "documents", "skipped unreadable file", [("path", file.path), ("reason", file.reason)])
            if file.path.hasPrefix("Splits/"), file.path.hasSuffix(".json"),
                let id = DocumentID(String(file.path.dropFirst("Splits/".count).dropLast(".json".count)))
            {
                translate(
                    engine.handle(.externalChange(.splitUnreadable(id, reason: file.reason), now: now)), now: now,
                    into: &out)
            }
        case .fileSettled(let path):
            // A folder settles what was reported in it too.
            skippedFiles.removeAll { $0.path == path || $0.path.hasPrefix("\(path)/") }
        case .watcherNoticed(let notice, let rescan):
            out.log(.notice, "documents", "watcher", [("notice", notice)])
            if rescan {
                // The rescan reports every file again, the refused split files included.
                skippedFiles = []
                out.actions.append(.rescan)
            }
        case .rescanFinished(.success(let skipped)):
            skippedFiles = skipped + skippedFiles.filter { refused in !skipped.contains { $0.path == refused.path } }
        case .rescanFinished(.failure(let failure)):
            out.log(.error, "documents", "rescan failed", [("reason", failure.description)])
        case .reported(.timerFired(.push)):
            pushTimer = nil
            translate(engine.handle(.tick(now: now)), now: now, into: &out)
        case .reported(.timerFired(.live)):
            out.node(live.feed(.tick(now: now)))
        case .reported(.timerFired(.shutdown)):
            out.node(.markStoppedCleanly)
            out.node(.exit(code: 0))
        case .reported(.timerFired(.syncWait)):
            break  // watchctl's `wait` only
        case .reported(.complicationQueued(let request, let asCurrent, let result)):
            // The watch state the budget reads is the link's: the reply's count may lag a report by a turn.
            complicationQueued(request, asCurrent: asCurrent, result, watchState: lastWatchState, now: now, into: &out)
        case .reported(.fileQueued(let request, let result)):
            out.node(fileTransfers.queued(request, result))
        case .reported(.fileCancelEnded(let request, let sequence, let failure)):
            out.node(fileTransfers.cancelEnded(request, sequence: sequence, failure))
        case .reported(.replyTaken(let request, let clientGone)):
            try continueHistory(request, clientGone: clientGone, reads: reads, into: &out)
        case .reported(.transferNotQueued):
            // The phone's only transfers are complications (answered above); it cancels none.
            break
        case .admin(let request, let command, let freshID, let facts):
            try admin(request, command, freshID: freshID, facts: facts, now: now, reads: reads, into: &out)
        case .reported(.durableWriteFailed(let reason)):
            out.durableWriteFailed("phoned", reason: reason, answering: lastAnswered)
        case .shutdownRequested(let signal):
            guard !stopping else { break }
            stopping = true
            out.log(.notice, "phoned", "stopping", [("signal", signal)])
            // A batch in hand is finished first: its writes, then its acknowledgements.
            endBatch(now: now, into: &out)
            out.node(.notifyStopping)
            out.node(.closeServices)
            // The link's goodbye and the last replies flush within the deadline.
            out.node(.armTimer(.shutdown, at: now.advanced(by: .milliseconds(200))))
        }
        finish(now: now, into: &out)
        out.actions = Self.publishingWrites(out.actions)
        lastAnswered = out.actions.answeredRequests(Self.nodeAction)
        out.numberMessages(in: &messages)
        return out.actions
    }

    /// A message the phone sent ended: a data command's reply, or the live mirror's next step.
    private mutating func messageEnded(
        _ purpose: MessagePurpose, _ outcome: MessageOutcome, now: Timestamp, into out: inout Output
    ) {
        switch purpose {
        case .dataCommand(let request):
            out.node(dataMessages.sendEnded(request, outcome, now: now))
        case .live(let runID, let version, let attempt):
            out.node(
                live.sendEnded(
                    runID: runID, version: version, attempt: attempt, outcome, stillReachable: messages.reachable,
                    now: now))
        case .edit, .requestSync:
            break  // the watch's alone
        }
    }

    // MARK: The engine's actions

    /// Turns the engine's actions into the node's, in order. A write is assumed done when the next
    /// action runs: a failed one stops the shell there (`.durableWriteFailed`).
    mutating func translate(_ actions: [SyncEngine.Action], now: Timestamp, into out: inout Output) {
        for action in actions {
            switch action {
            case .writeSplit(let split):
                out.actions.append(.store(.writeSplit(split)))
            case .removeSplitFile(let id):
                out.actions.append(.store(.removeSplitFile(id)))
            case .writeWorkout(let run):
                out.actions.append(.store(.writeWorkout(run)))
                out.node(.journal(JournalEntry(.fileWritten, run: "\(run.id)")))
            case .removeWorkoutFile(let id, let startedAt):
                out.actions.append(.store(.removeWorkoutFile(id, startedAt: startedAt)))
                // A run still known has moved month folders (its samples follow); otherwise it is gone.
                if let moved = engine.index[id] {
                    if moved.startedAt != startedAt {
                        out.actions.append(.store(.moveSamples(id, from: startedAt, to: moved.startedAt)))
                    }
                } else {
                    out.actions.append(.store(.removeSamples(id, startedAt: startedAt)))
                }
            case .writeTombstone(let stub):
                out.actions.append(.store(.writeTombstone(stub)))
                translate(engine.handle(.tombstoneWritten(stub.id, now: now)), now: now, into: &out)
            case .pushContext(let context, let force):
                // Journalled before the frame goes out: the push is what causes it.
                out.node(.journal(JournalEntry(.push, detail: force ? "forced" : nil)))
                out.node(.link(.updateContext(engine.encoded(context), force: force)))
                // The watch shows a live cover only for a run it holds, and forgets it when a push
                // leaves the run out: a run this push brings back gets its open flow's frame again,
                // after the push (simulator seeds 22438, 83490).
                let carried = Set(context.workouts.map(\.id))
                for runID in live.mirror.flows.keys.sorted()
                where carried.contains(runID) && !lastPushedRuns.contains(runID) {
                    out.node(live.feed(.peerShowsRunAgain(runID: runID)))
                }
                lastPushedRuns = carried
            case .loadRuns(let wanted):
                out.actions.append(.loadRuns(wanted))
            case .launchWatchApp(let runID):
                launchesSent += 1
                out.node(
                    .link(.launch(DocumentCoder.encodeCompact(WorkoutLaunchRequest(runID: runID, phoneTime: now)))))
            case .persistSettings(let settings):
                out.actions.append(.store(.persistSettings(settings)))
            case .persistEpoch(let epoch):
                out.actions.append(.store(.persistEpoch(epoch)))
            case .refuseSplitFile(let id, let reason):
                let file = SkippedFile(path: "Splits/\(id).json", reason: reason)
                skippedFiles.removeAll { $0.path == file.path }
                skippedFiles.append(file)
                out.log(.warning, "documents", "skipped split file", [("path", file.path), ("reason", reason)])
            case .log(let line):
                out.log(.info, "sync", line.description)
            }
        }
        // The clock's mark, when an edit or an ingest reached it (`ClockLease`): a restart never
        // stamps below it. A batch persists it once, at its end, with its writes.
        if !engine.isBatching { persistClock(into: &out) }
    }

    mutating func persistClock(into out: inout Output) {
        if let mark = clockLease.renew(covering: engine.clock.last) { out.node(.persistClock(mark)) }
    }

    /// Keeps one timer at the engine's next deadline, so a refused push is retried and a run leaves
    /// the push when it leaves the recent window, with nothing else happening. With no deadline it
    /// stays armed at `NodeTimer.noDeadline`: a wall clock stepped back can bring ended runs back
    /// into the window, and only a timer's tick would tell the engine (simulator seed 23498).
    private mutating func finish(now: Timestamp, into out: inout Output) {
        let deadline = engine.nextDeadline ?? NodeTimer.noDeadline
        guard pushTimer != deadline else { return }
        pushTimer = deadline
        out.node(.armTimer(.push, at: deadline))
    }

    /// The actions one event produces, in order.
    struct Output: NodeOutput {
        var actions: [Action] = []
        static func shared(_ action: NodeAction) -> Action { .node(action) }
        static func sharedPart(of action: Action) -> NodeAction? { PhoneNode.nodeAction(action) }

        mutating func ingestLine(_ line: IngestLine) {
            log(
                .info, "ingest", "ingest",
                [
                    ("run", "\(line.run)"), ("via", "\(line.channel)"), ("outcome", line.outcome.rawValue),
                    ("version", "\(line.version)"),
                ])
            node(
                .journal(
                    JournalEntry(
                        .ingest, cause: line.cause, run: "\(line.run)",
                        detail: "\(line.outcome.rawValue) via \(line.channel)")))
        }
    }
}
