import AdminCommands
import LinkProtocol
import Trace
import WorkoutModel

/// What both nodes hand their shell, beside their own store writes: the link's verbs, logs, journal
/// entries, admin replies, timers, the durable bits of state both keep, and the exit. The shell
/// carries each out as it comes, in order; nothing here is a decision left to it.
package enum NodeAction: Equatable, Sendable {
    case link(LinkCommand)
    case log(LogLine)
    case journal(JournalEntry)
    /// The answer to admin request N (the shell writes it to that request's connection). A response
    /// with `more` is one chunk of it: the shell feeds `.replyTaken` once the client has taken it.
    case reply(AdminRequestID, AdminResponse)
    /// `trace`: the shell reads its journal with the query and replies with what it selects.
    case replyTrace(AdminRequestID, TraceQuery)
    /// One timer per name: arming again replaces it. When it fires the shell feeds `.timerFired`.
    case armTimer(NodeTimer, at: Timestamp)
    case cancelTimer(NodeTimer)
    /// Feed `.turnEnded` once the events the loop has in hand now are handled and no durable write
    /// is in flight (a batch's end): while the disk is busy, what arrives joins the batch, so one
    /// round of fsyncs covers more (group commit).
    case callAtEndOfTurn
    /// Keep `value` in `<state>/live-version` (best effort: a failure is logged, the floor holds).
    case persistLiveVersion(Int)
    /// Keep the edit clock's high-water mark durably (a restart never stamps below it).
    case persistClock(Stamp)
    /// Mark the link's context slot as the last one made, for the next start (`ContextGenerations`):
    /// the stop is clean, every write before this one has landed. Best effort: a failure is logged.
    case markStoppedCleanly
    /// systemd: STOPPING=1.
    case notifyStopping
    /// Stop taking admin requests and (phone) directory changes; close the link gracefully.
    case closeServices
    /// Leave the process with this status, after the actions before it.
    case exit(code: Int32)
}

extension NodeAction {
    /// Whether the shell runs this on its write queue (docs/PROTOCOL.md, "The order of writes"),
    /// as it does every store action of a node.
    package var isDurableWrite: Bool {
        switch self {
        case .persistClock, .persistLiveVersion, .markStoppedCleanly, .link(.keepReceivedFile): true
        default: false
        }
    }

    /// Whether this may go out ahead of the writes before it when it answers a query
    /// (`ShelledNode.isQuery`): it reports, it changes nothing.
    package var answersWithoutWaiting: Bool {
        switch self {
        case .reply, .replyTrace, .log, .journal: true
        default: false
        }
    }
}

/// What the shell reports back about the actions it carried out (and `LinkedNode` about the link
/// verbs it handed to the engine: a transfer not queued, a complication or file queued or not, a
/// file cancel's outcome).
package enum ShellReport: Sendable {
    case timerFired(NodeTimer)
    case turnEnded
    case transferNotQueued([UInt8], reason: String)
    case durableWriteFailed(reason: String)
    /// A `.transferComplication` is on disk under this sequence, or why the link refused it.
    case complicationQueued(AdminRequestID, asCurrent: Bool, Result<UInt64, ReadFailure>)
    /// A `.transferFile` is in the file outbox, or why it is not.
    case fileQueued(AdminRequestID, Result<OutboundFile, ReadFailure>)
    /// A `.cancelFile` ended: nil when cancelled, else why not.
    case fileCancelEnded(AdminRequestID, sequence: UInt64, ReadFailure?)
    /// The client of admin request N has taken the reply's last chunk (little is left queued for it),
    /// or has gone (`clientGone`: the rest of the reply is not wanted).
    case replyTaken(AdminRequestID, clientGone: Bool)
}

/// What a node asks of its link (docs/PROTOCOL.md's channels): `LinkedNode` hands each to the link
/// engine, except `keepReceivedFile`, the shell's.
package enum LinkCommand: Equatable, Sendable {
    /// The context slot; the link answers with its `contextQueued` or `contextRefused` notification.
    case updateContext([UInt8], force: Bool)
    /// A message, sent under `id`; its one outcome comes back as the link's `messageCompleted(id:)`.
    /// The node numbers it (`MessageLedger`) before the shell sees it; 0 until then.
    case sendMessage([UInt8], wantsReply: Bool, run: String?, MessagePurpose, id: UInt64 = 0)
    /// Raw bytes (`sendMessageData`), numbered and answered as `sendMessage` is.
    case sendMessageData([UInt8], wantsReply: Bool, MessagePurpose, id: UInt64 = 0)
    case answerMessage(id: UInt64, MessageAnswer)
    /// A durable transfer; a refusal to queue it comes back as `.transferNotQueued`.
    case transferUserInfo([UInt8], run: String?)
    /// A complication for admin request N: `asCurrent` through `transferCurrentComplicationUserInfo`
    /// (the complication outbox, ahead of ordinary userInfo), else as ordinary userInfo; the result
    /// comes back as `.complicationQueued`.
    case transferComplication([UInt8], asCurrent: Bool, AdminRequestID)
    /// `transferFile` for admin request N (`file send`, `export`): the result of queueing it comes
    /// back as `.fileQueued`.
    case transferFile(FileSource, metadata: String, AdminRequestID)
    /// Admin `file cancel`: the result comes back as `.fileCancelEnded`.
    case cancelFile(sequence: UInt64, AdminRequestID)
    /// The app is done with a received file (after taking it, or not): the link deletes what is left
    /// of it in the inbox and tells the sender it was delivered.
    case fileProcessed(TransferKey)
    /// The transfers are processed durably: mark and acknowledge them.
    case transfersProcessed([TransferKey])
    /// Admin `queue cancel`: the link answers with `transferCancelled` or `transferCancelRefused`.
    case cancelTransfer(sequence: UInt64)
    case launch([UInt8])
    /// Move a received file out of the inbox to `<state>/received-files/<name>` (the app took it).
    case keepReceivedFile(TransferKey, name: String)
    case setAppForeground(Bool)
    /// The watch is paired or not, its app installed or not, its complication enabled or not.
    case setWatchState(WatchState)
}

/// Why a message was sent, so its outcome finds its way back to what sent it.
package enum MessagePurpose: Hashable, Sendable {
    case live(runID: DocumentID, version: Int, attempt: Int)
    /// A watch edit (its token in the WatchEngine).
    case edit(token: UInt64)
    case requestSync
    /// Admin request N's `data send`: its outcome is that request's reply.
    case dataCommand(AdminRequestID)
}

/// The timers a node keeps.
///
/// A timer's deadline is on the wall clock, which can step. The shell fires it once the wall clock
/// has reached it, the wait it was armed with has passed on the monotonic clock, or the wall clock
/// has stepped (`isDue`), looking at least every `wallClockCheck`: a step either way reaches the
/// node within that as a tick, which sees the stepped clock (runs in or out of the recent window)
/// and arms again.
package enum NodeTimer: Hashable, Sendable {
    /// How long a shell waits at most before it looks at the wall clock again for an armed timer.
    package static let wallClockCheck: Duration = .seconds(10)
    /// The deadline of a timer kept armed only to notice a wall clock step (year 9999): it is never
    /// reached, and fires on a step like any other.
    package static let noDeadline = Timestamp(microsecondsSinceEpoch: 253_402_300_799_000_000)

    /// How long to wait before looking again for a deadline `at`, the wall clock reading `now`, of a
    /// timer armed `waited` ago for `armedFor`.
    package static func wait(
        until at: Timestamp, now: Timestamp, waited: Duration = .zero, armedFor: Duration = .seconds(86_400 * 365)
    ) -> Duration {
        min(max(now.duration(to: at), .zero), max(armedFor - waited, .zero), wallClockCheck)
    }

    /// Whether a timer armed `waited` ago (on the monotonic clock), for the wait to `at` then
    /// (`armedFor`), is due now; `armedFor` is also how far the wall clock was from `at` at the arming,
    /// so a wall clock that is not `armedFor - waited` from `at` now has stepped.
    package static func isDue(at: Timestamp, now: Timestamp, waited: Duration, armedFor: Duration) -> Bool {
        let drift = now.duration(to: at) - (armedFor - waited)
        return now >= at || waited >= armedFor || drift > .seconds(1) || drift < .seconds(-1)
    }

    /// The SyncEngine's next deadline (a push retry, a run leaving the recent window).
    case push
    /// The live mirror's next boundary or retry.
    case live
    /// The graceful-shutdown deadline.
    case shutdown
    /// The earliest deadline of a `watchctl wait` (`SyncWaits`).
    case syncWait
}

/// One admin request on its connection, numbered by the shell.
package struct AdminRequestID: Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package var description: String { "admin#\(rawValue)" }
}

/// A log line; the shell adds the time and filters by level.
package struct LogLine: Equatable, Sendable {
    package enum Level: Sendable { case debug, info, notice, warning, error }
    package var level: Level
    package var component: String
    package var message: String
    package var fields: [Field]

    package struct Field: Equatable, Sendable {
        package var key: String
        package var value: String
    }

    package init(_ level: Level, _ component: String, _ message: String, _ fields: [(String, String)] = []) {
        self.level = level
        self.component = component
        self.message = message
        self.fields = fields.map { Field(key: $0.0, value: $0.1) }
    }

    /// The value logged for `key`, for tests.
    package subscript(key: String) -> String? { fields.first { $0.key == key }?.value }
}

/// One journal event a node decided (the link records its frames itself).
package struct JournalEntry: Equatable, Sendable {
    package var kind: TraceEventKind
    package var cause: String?
    package var run: String?
    package var detail: String?

    package init(_ kind: TraceEventKind, cause: String? = nil, run: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.cause = cause
        self.run = run
        self.detail = detail
    }
}

/// What the shell knows that a status reply shows: the link's snapshot and the process's facts.
package struct ShellFacts: Equatable, Sendable {
    package var link: LinkStatus
    package var uptimeSeconds: Int
    package var journalCounts: [TraceEventKind: Int]
    /// phoned's listening port (0 for watchd).
    package var listenPort: Int

    /// Times a daemon has started with this state directory (`<state>/starts`).
    package var starts: Int
    /// The process's fsync and fdatasync latencies so far.
    package var fsyncLatency: LatencyHistogram

    package init(
        link: LinkStatus, uptimeSeconds: Int, journalCounts: [TraceEventKind: Int], listenPort: Int = 0,
        starts: Int = 0, fsyncLatency: LatencyHistogram = LatencyHistogram()
    ) {
        self.link = link
        self.uptimeSeconds = uptimeSeconds
        self.journalCounts = journalCounts
        self.listenPort = listenPort
        self.starts = starts
        self.fsyncLatency = fsyncLatency
    }
}

/// What a node must read before it can handle an event (a run only summarised in memory, the
/// outbox's listing): thrown before the node changes anything, so the shell reads and feeds the same
/// event again with the reads.
package struct NeedsReads: Error, Equatable, Sendable {
    package var documents: [DocumentID: Timestamp] = [:]
    package var outstandingTransfers = false
    package var outstandingFiles = false
    /// Runs whose exported samples file (`<id>.samples` next to the document) to look up.
    package var samples: [DocumentID: Timestamp] = [:]

    package init(
        documents: [DocumentID: Timestamp] = [:], outstandingTransfers: Bool = false, outstandingFiles: Bool = false,
        samples: [DocumentID: Timestamp] = [:]
    ) {
        self.documents = documents
        self.outstandingTransfers = outstandingTransfers
        self.outstandingFiles = outstandingFiles
        self.samples = samples
    }
}

/// What the shell read for a `NeedsReads`.
package struct Reads: Sendable {
    package var documents: [DocumentID: Result<WorkoutDocument, ReadFailure>] = [:]
    package var outstandingTransfers: [OutstandingTransfer]?
    package var outstandingFiles: [OutboundFile]?
    /// Each looked-up run's samples file: its path relative to the document directory and size, or
    /// nil when the run has none.
    package var samples: [DocumentID: SamplesFile?] = [:]

    package init(
        documents: [DocumentID: Result<WorkoutDocument, ReadFailure>] = [:],
        outstandingTransfers: [OutstandingTransfer]? = nil, outstandingFiles: [OutboundFile]? = nil,
        samples: [DocumentID: SamplesFile?] = [:]
    ) {
        self.documents = documents
        self.outstandingTransfers = outstandingTransfers
        self.outstandingFiles = outstandingFiles
        self.samples = samples
    }

    /// The run as read, its read failure, or `NeedsReads` when it was not read yet.
    package func workout(_ id: DocumentID, startedAt: Timestamp) throws -> WorkoutDocument {
        guard let result = documents[id] else { throw NeedsReads(documents: [id: startedAt]) }
        return try result.get()
    }

    /// Every run of `wanted`, asking for all the missing ones at once.
    package func workouts(_ wanted: [(id: DocumentID, startedAt: Timestamp)]) throws -> [DocumentID: WorkoutDocument] {
        let missing = wanted.filter { documents[$0.id] == nil }
        if !missing.isEmpty {
            throw NeedsReads(
                documents: Dictionary(missing.map { ($0.id, $0.startedAt) }, uniquingKeysWith: { a, _ in a }))
        }
        var runs: [DocumentID: WorkoutDocument] = [:]
        for (id, startedAt) in wanted { runs[id] = try workout(id, startedAt: startedAt) }
        return runs
    }
}

/// Why a document could not be read (its description is what a person sees).
package struct ReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// The ordered actions one event produces, the shared ones wrapped in the node's own enum.
protocol NodeOutput {
    associatedtype Action
    var actions: [Action] { get set }
    static func shared(_ action: NodeAction) -> Action
    static func sharedPart(of action: Action) -> NodeAction?
}

extension NodeOutput {
    mutating func node(_ action: NodeAction) { actions.append(Self.shared(action)) }
    mutating func node(_ list: [NodeAction]) { actions += list.map(Self.shared) }

    mutating func log(
        _ level: LogLine.Level, _ component: String, _ message: String, _ fields: [(String, String)] = []
    ) {
        node(.log(LogLine(level, component, message, fields)))
    }

    /// A durable write failed, so nothing after it in the list ran: each admin request that list
    /// answered hears why (one whose reply went out before the write keeps that reply: the shell
    /// answers a request once), then the node exits 75, to recover from disk on restart. `unsure`
    /// says what may have happened all the same (the watch's edit message goes before its write).
    mutating func durableWriteFailed(
        _ daemon: String, reason: String, answering requests: [AdminRequestID], unsure: String? = nil
    ) {
        log(.error, daemon, "durable write failed; exiting to recover from disk", [("reason", reason)])
        let outcome = unsure.map { "; \($0)" } ?? ""
        for request in requests {
            node(
                .reply(
                    request, .error("durable write failed: \(reason)\(outcome); \(daemon) exits to recover from disk")))
        }
        node(.exit(code: 75))
    }

    /// Numbers the messages among the actions, in order (`MessageLedger`): the last step of an
    /// event, once nothing can throw.
    mutating func numberMessages(in ledger: inout MessageLedger) {
        for index in actions.indices {
            guard case .link(let command) = Self.sharedPart(of: actions[index]) else { continue }
            actions[index] = Self.shared(.link(ledger.number(command)))
        }
    }
}

extension Array {
    /// The admin requests these actions answer, in order.
    func answeredRequests(_ nodeAction: (Element) -> NodeAction?) -> [AdminRequestID] {
        compactMap { if case .reply(let request, _) = nodeAction($0) { request } else { nil } }
    }
}

/// A run's exported samples file on the phone: where it is (relative to the document directory)
/// and how big.
package struct SamplesFile: Codable, Equatable, Sendable {
    package var path: String
    package var bytes: Int
    package init(path: String, bytes: Int) {
        self.path = path
        self.bytes = bytes
    }
}
