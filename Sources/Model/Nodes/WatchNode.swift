import AdminCommands
import LinkProtocol
import LiveMirror
import Trace
import WatchEngine
import WorkoutModel

/// Everything `watchd` decides, as one value: the WatchEngine (cache applier, optimistic edits,
/// session coordinator), the live mirror's driver, the admin verbs and the timers. Events in, one
/// ordered list of actions out; it reads no clock, file or socket.
package struct WatchNode: Sendable {
    package internal(set) var engine: WatchEngine
    package internal(set) var live: LiveDriver
    package internal(set) var appliedContexts = 0
    package internal(set) var skippedContexts = 0
    package internal(set) var launchesReceived = 0
    /// Cache files the start-up load could not read, `path: reason`.
    package internal(set) var skippedCacheFiles: [String] = []
    /// How far this watch's wall clock is set off (skew tests): edits are stamped with `now + offset`.
    private let clockOffset: Duration
    /// The phone's wall clock as the last answer to this watch's messages (or a launch) said it
    /// (`phoneTime`, against the midpoint of the round trip), and this watch's monotonic clock then:
    /// the engine works on the phone's clock, carried forward by the monotonic time since, so the
    /// times a person reads are on one clock whichever device recorded them, and a step of this
    /// watch's wall clock changes none of them (docs/PROTOCOL.md, "Recorded times"). Nil until the
    /// first answer: the watch's own clock until then.
    private var phoneClock: (phoneTime: Timestamp, at: LinkInstant)?
    /// The monotonic clock at the event being handled.
    private var linkNow = LinkInstant(.zero)
    private var clockLease = ClockLease()
    private var stopping = false
    /// The admin requests the last action list answered (`durableWriteFailed`), and whether it sent
    /// an edit's message (which goes before the edit's write: the phone may have the edit).
    private var lastAnswered: [AdminRequestID] = []
    private var lastSentEdit = false
    /// What a failed write's answer adds when the edit's message went out before it: the outcome is
    /// unknown (the simulator's checker takes an error that says so as an unsure edit).
    package static let editMayHaveReachedPhone = "the edit may have reached the phone all the same"
    /// When each edit message still unanswered was sent, and the round trips of those answered.
    private var editsSentAt: [UInt64: LinkInstant] = [:]
    /// The run the last workout update `translate` sent carried, with its encoding: an edit's reply
    /// shows the same run (`edit`), which is then not encoded twice.
    var forwardedRun: (run: WorkoutDocument, bytes: [UInt8])?
    package private(set) var roundTrip = LatencyHistogram()
    package internal(set) var dataMessages = DataMessages()
    /// The newest complication that arrived (`<cache>/complication.json`), and how many arrived since start.
    package internal(set) var complication: ComplicationPayload?
    package internal(set) var complicationsReceived = 0
    package internal(set) var fileTransfers = FileTransfers()
    /// The messages in flight and why each was sent.
    package internal(set) var messages = MessageLedger()
    /// The `queue cancel` requests waiting for the link's answer, by transfer sequence.
    var cancelling = CancelWaits<UInt64>()
    package internal(set) var syncWaits = SyncWaits()
    /// Whether the watch app runs, and in the foreground (`app …`, `wrist`).
    package internal(set) var app = AppRun("watch", cli: "watchctl")
    package var isAppRunning: Bool { app.isRunning }

    package enum Event: Sendable {
        /// Start-up: the cache's unreadable files and the last received context with the phone
        /// instance it came from, re-applied now (the session coordinator reconciles right there).
        case started(lastContext: [UInt8]?, sender: String? = nil, skippedCacheFiles: [String])
        case link(LinkNotification)
        /// What one of the node's actions produced (a message's outcome, a timer, …).
        case reported(ShellReport)
        case admin(AdminRequestID, WatchCommand, facts: ShellFacts)
        case shutdownRequested(signal: String)
    }

    package enum Action: Equatable, Sendable {
        case store(StoreWrite)
        case node(NodeAction)
    }

    /// The cache directory's durable writes (atomic replace, fsynced), and a run's file.
    package enum StoreWrite: Equatable, Sendable {
        /// The run made durable (watchd: in its pending record, one in-place write); its file is
        /// replaced at `publishWorkout`.
        case persistWorkout(WorkoutDocument)
        /// The file of a run persisted since its last publish, replaced without a sync: after the
        /// messages that follow a persist, before the replies (`publishingWrites`).
        case publishWorkout(DocumentID)
        case deleteWorkout(DocumentID)
        case persistSplit(SplitDocument)
        case deleteSplit(DocumentID)
        case persistPhoneEpoch(PhoneEpochRecord)
        case persistSession(SessionRecord)
        case persistComplication(ComplicationPayload)
    }

    package init(
        engine: WatchEngine, live: LiveDriver, clockOffset: Duration = .zero, complication: ComplicationPayload? = nil,
        life: Int = 0
    ) {
        messages = MessageLedger(life: life)
        self.engine = engine
        self.live = live
        self.clockOffset = clockOffset
        self.complication = complication
    }

    /// Handles one event at a monotonic clock that reads as the wall clock (tests that step no clock).
    package mutating func handle(
        _ event: Event, now: Timestamp, reads: Reads = Reads()
    ) throws(NeedsReads) -> [Action] {
        try handle(event, now: now, linkNow: LinkInstant(.microseconds(now.microsecondsSinceEpoch)), reads: reads)
    }

    /// Handles one event; `now` is the real wall clock (the node shifts it by the configured offset
    /// for the edits it stamps), `linkNow` the monotonic one. Throws `NeedsReads` before changing anything.
    package mutating func handle(
        _ event: Event, now: Timestamp, linkNow: LinkInstant, reads: Reads = Reads()
    ) throws(NeedsReads) -> [Action] {
        self.linkNow = linkNow
        var out = Output()
        let edited = editClock(now)
        switch event {
        case .started(let lastContext, let sender, let skipped):
            skippedCacheFiles = skipped
            for file in skipped { out.log(.warning, "watchd", "skipped unreadable cache file", [("file", file)]) }
            translate(
                engine.handle(.started(lastContext: lastContext, sender: sender, now: edited)), now: now, into: &out)
        case .link(let notification):
            messages.observe(notification)
            if case .messageCompleted(let id, let outcome) = notification, let purpose = messages.purpose(of: id) {
                messageEnded(purpose, outcome, now: now, into: &out)
                messages.ended(id)
            } else {
                linkNotified(notification, now: now, into: &out)
            }
        case .reported(.transferNotQueued(let payload, let reason)):
            out.log(.warning, "link", "could not queue a transfer", [("reason", reason)])
            if let message = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) {
                translate(engine.handle(.transferRefused(message, reason: reason)), now: now, into: &out)
            }
        case .reported(.fileQueued(let request, let result)):
            out.node(fileTransfers.queued(request, result))
        case .reported(.fileCancelEnded(let request, let sequence, let failure)):
            out.node(fileTransfers.cancelEnded(request, sequence: sequence, failure))
        case .reported(.timerFired(.live)):
            out.node(live.feed(.tick(now: now)))
        case .reported(.timerFired(.shutdown)):
            out.node(.markStoppedCleanly)
            out.node(.exit(code: 0))
        case .reported(.timerFired(.syncWait)):
            out.node(syncWaits.timerFired(undelivered: engine.cache.undeliveredEdits.count, now: now))
        case .reported(.timerFired(.push)), .reported(.turnEnded), .reported(.complicationQueued),
            .reported(.replyTaken):
            // The watch pushes no context, sends no complications, keeps no batches and answers
            // every admin request whole.
            break
        case .admin(let request, let command, let facts):
            try admin(request, command, facts: facts, now: now, reads: reads, into: &out)
        case .reported(.durableWriteFailed(let reason)):
            out.durableWriteFailed(
                "watchd", reason: reason, answering: lastAnswered,
                unsure: lastSentEdit ? Self.editMayHaveReachedPhone : nil)
        case .shutdownRequested(let signal):
            guard !stopping else { break }
            stopping = true
            out.log(.notice, "watchd", "stopping", [("signal", signal)])
            out.node(.notifyStopping)
            out.node(.closeServices)
            out.node(.armTimer(.shutdown, at: now.advanced(by: .milliseconds(200))))
        }
        out.node(syncWaits.settled(undelivered: engine.cache.undeliveredEdits.count, now: now))
        lastAnswered = out.actions.answeredRequests(Self.nodeAction)
        lastSentEdit = out.actions.contains { action in
            if case .node(.link(.sendMessage(_, _, _, .edit, _))) = action { true } else { false }
        }
        out.actions = Self.publishingWrites(out.actions)
        out.numberMessages(in: &messages)
        return out.actions
    }

    /// A message the watch sent ended: an edit's delivery, the live mirror's next step, a data
    /// command's reply.
    private mutating func messageEnded(
        _ purpose: MessagePurpose, _ outcome: MessageOutcome, now: Timestamp, into out: inout Output
    ) {
        switch purpose {
        case .live(let runID, let version, let attempt):
            out.node(
                live.sendEnded(
                    runID: runID, version: version, attempt: attempt, outcome, stillReachable: messages.reachable,
                    now: now))
        case .edit(let token):
            if let sent = editsSentAt.removeValue(forKey: token) {
                let trip = linkNow.sinceOrigin - sent.sinceOrigin
                roundTrip.record(seconds: Double(trip.wholeMicroseconds) / 1_000_000)
                if case .replied(let reply) = outcome, let phoneTime = PhoneReply.phoneTime(reply) {
                    phoneClock = (phoneTime, sent.advanced(by: trip / 2))
                }
            }
            let token = MessageToken(rawValue: token)
            switch outcome {
            case .replied, .delivered:
                translate(engine.handle(.messageDelivered(token, now: editClock(now))), now: now, into: &out)
            case .failed(let error):
                translate(
                    engine.handle(.messageSendFailed(token, reason: error.description)), now: now, into: &out)
            }
        case .requestSync:
            out.log(.info, "link", "requestSync answered", [("outcome", "\(outcome)")])
        case .dataCommand(let request):
            out.node(dataMessages.sendEnded(request, outcome, now: now))
        }
    }

    /// The clock the engine works on: the phone's as last learnt, carried forward by the monotonic
    /// clock; this watch's own (with its configured offset) before the first answer.
    package func editClock(_ now: Timestamp) -> Timestamp { editClock(now, linkNow: linkNow) }

    /// `editClock` at the wall clock `now` and the monotonic `linkNow` (the simulator's checks).
    package func editClock(_ now: Timestamp, linkNow: LinkInstant) -> Timestamp {
        guard let phoneClock else { return now.advanced(by: clockOffset) }
        return phoneClock.phoneTime.advanced(by: linkNow.sinceOrigin - phoneClock.at.sinceOrigin)
    }

    private mutating func linkNotified(_ notification: LinkNotification, now: Timestamp, into out: inout Output) {
        switch notification {
        case .reachabilityChanged(let reachable):
            out.log(.info, "link", "phone reachability changed", [("reachable", "\(reachable)")])
            translate(engine.handle(.reachabilityChanged(reachable)), now: now, into: &out)
            out.node(live.feed(.reachabilityChanged(reachable, now: now)))
        case .contextReceived(let context):
            let before = engine.lastSkipped
            translate(
                engine.handle(.contextReceivedFrom(sender: "\(context.sender)", context.payload, now: editClock(now))),
                now: now, into: &out)
            if engine.lastSkipped != nil, engine.lastSkipped != before || engine.lastApplied == nil {
                skippedContexts += 1
            } else {
                appliedContexts += 1
            }
            reconcileLive(now: now, into: &out)
        case .launchReceived(let payload):
            launchesReceived += 1
            // startWatchApp: the only thing but the person that launches a watch app not running.
            if !isAppRunning { out.node(app.launch(foreground: true, by: "the phone's launch request")) }
            // One way, so off by the link's latency: milliseconds here, and the next answer corrects it.
            if let phoneTime = (try? DocumentCoder.decode(WorkoutLaunchRequest.self, from: payload))?.phoneTime {
                phoneClock = (phoneTime, linkNow)
            }
            translate(engine.handle(.launchReceived(payload: payload, now: editClock(now))), now: now, into: &out)
        case .messageReceived(let id, _, _) where !isAppRunning, .messageDataReceived(let id, _, _) where !isAppRunning:
            // Sent while the phone still counted the app reachable (it is not, once it stops).
            out.node(.link(.answerMessage(id: id, .failed(.deliveryFailed, reason: "the watch app is not running"))))
        case .messageReceived(let id, let payload, _):
            if LiveDriver.isLiveMessage(payload) {
                out.node(live.received(payload, now: now))
                out.node(.link(.answerMessage(id: id, .handled)))
            } else {
                out.node(
                    .link(
                        .answerMessage(
                            id: id, .failed(.deliveryFailed, reason: "watchd has no handler for this message"))))
            }
        case .messageDataReceived(let id, let payload, let wantsReply):
            out.node(dataMessages.received(id: id, payload: payload, wantsReply: wantsReply, now: now))
        case .fileReceived(let file):
            // The watch app keeps every file the phone sends in <state>/received-files.
            let name = FileTransfers.keptName(file.key)
            out.node(.link(.keepReceivedFile(file.key, name: name)))
            out.node(fileTransfers.received(file, storedAs: "received-files/\(name)", now: now))
        case .fileFinished(let sequence, let error):
            out.node(fileTransfers.finished(sequence: sequence, error))
        case .userInfoReceived(let key, let payload):
            // The phone's transfers are complications, through their own queue or as ordinary
            // userInfo once the budget is spent: the newest by the phone's order is kept (on disk
            // before the ack).
            if let arrived = try? DocumentCoder.decode(ComplicationPayload.self, from: payload) {
                complicationsReceived += 1
                if complication.map({ $0.order <= arrived.order }) ?? true {
                    complication = arrived
                    out.actions.append(.store(.persistComplication(arrived)))
                }
                out.log(
                    .info, "complication", "complication received",
                    [("key", "\(key)"), ("sentAt", "\(arrived.sentAt)")])
            } else {
                // Done, and failed at the phone (payloadUnsupportedTypes): it must not block the queue.
                out.log(.notice, "link", "refused a transfer from the phone it cannot read", [("key", "\(key)")])
                out.node(.link(.transfersRefused([key], reason: "the watch cannot read this transfer")))
                return
            }
            out.node(.link(.transfersProcessed([key])))
        case .linkEstablished(let peer):
            out.log(.info, "link", "phone linked", [("peer", "\(peer)")])
        case .linkLost(let reason):
            out.log(.info, "link", "phone unlinked", [("reason", reason)])
        case .transferCancelled(let sequence, let payload, let wasSent):
            out.log(
                .notice, "link", "transfer not delivered",
                [("sequence", "\(sequence)"), ("reason", "\(LinkError.transferCancelled)")])
            if let message = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) {
                translate(engine.handle(.transferCancelled(message)), now: now, into: &out)
            }
            cancelEnded(sequence, AdminOutcome.cancelled(sequence, wasSent: wasSent, peer: "phone"), into: &out)
        case .transferCancelRefused(let sequence, let error):
            cancelEnded(sequence, .refused(error.description), into: &out)
        case .transferFailed(let sequence, _, let payload, let error):
            // The phone could not read it: the edit gives way to the phone's copy, as a cancelled one does.
            out.log(
                .warning, "link", "transfer failed at the phone", [("sequence", "\(sequence)"), ("reason", "\(error)")])
            if let message = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) {
                translate(engine.handle(.transferCancelled(message)), now: now, into: &out)
            }
        case .activated:
            translate(engine.handle(.linkActivated), now: now, into: &out)
        case .transferFinished(_, let payload):
            if let message = try? DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) {
                translate(engine.handle(.transferDelivered(message, now: editClock(now))), now: now, into: &out)
            }
        case .contextQueued, .contextRefused, .contextAcknowledged, .messageCompleted,
            .complicationFinished, .complicationCancelEnded, .launchDropped,
            .peerAppStateChanged,
            .watchStateChanged:
            break
        }
    }

    /// Durable repair for the live mirror: every run a flow or cover is on is compared with the
    /// watch's authoritative (applied) copy; a run pruned from the cache closes its views. A flow on a
    /// run the phone has locked for editing pops out (S8): it is closed here, and its liveEnded drops
    /// the phone's cover, so no phase of it can be advanced until the phone lets go.
    mutating func reconcileLive(now: Timestamp, into out: inout Output) {
        let followed = Set(live.mirror.flows.keys).union(live.mirror.covers.keys)
        for runID in followed.sorted() {
            if let run = engine.cache.workouts[runID] {
                out.node(live.feed(.documentAbsorbed(run, now: now)))
                if live.mirror.flows[runID] != nil, engine.cache.isParked(run) {
                    out.log(.info, "live", "live flow closed: the phone is editing the run (S8)", [("run", "\(runID)")])
                    out.node(live.feed(.flowClosed(runID: runID, now: now)))
                }
            } else {
                out.node(live.feed(.runRemoved(runID: runID)))
            }
        }
    }

    /// Answers the oldest `queue cancel` of `sequence` still waiting for the link.
    private mutating func cancelEnded(_ sequence: UInt64, _ outcome: AdminOutcome, into out: inout Output) {
        guard let request = cancelling.answered(sequence) else { return }
        reply(request, "queue cancel \(sequence)", outcome, into: &out)
    }

    /// A cache file skipped at start-up (`path: reason`) that the watch now writes or removes itself
    /// is no longer worth reporting.
    private mutating func forgetSkipped(_ file: String) {
        skippedCacheFiles.removeAll { $0.contains("\(file): ") }
    }

    /// Turns the engine's actions into the node's, in order; returns an edit's refusal, if any. A
    /// write is assumed done when the next action runs: a failed one stops the shell there.
    @discardableResult
    mutating func translate(_ actions: [WatchEngine.Action], now: Timestamp, into out: inout Output) -> EditRefusal? {
        var refusal: EditRefusal?
        let start = out.actions.count
        for action in actions {
            switch action {
            case .persistWorkout(let run):
                out.actions.append(.store(.persistWorkout(run)))
                forgetSkipped("/Workouts/\(run.id).json")
                // Every stored document repairs the live mirror, local edits too (the phone may be away).
                out.node(live.feed(.documentAbsorbed(run, now: now)))
            case .deleteWorkout(let id):
                out.actions.append(.store(.deleteWorkout(id)))
                forgetSkipped("/Workouts/\(id).json")
                out.node(live.feed(.runRemoved(runID: id)))
            case .persistSplit(let split):
                out.actions.append(.store(.persistSplit(split)))
                forgetSkipped("/Splits/\(split.id).json")
            case .deleteSplit(let id):
                out.actions.append(.store(.deleteSplit(id)))
                forgetSkipped("/Splits/\(id).json")
            case .persistPhoneEpoch(let record):
                out.actions.append(.store(.persistPhoneEpoch(record)))
                forgetSkipped("/phone-epoch.json")
            case .persistSession(let record):
                out.actions.append(.store(.persistSession(record)))
                forgetSkipped("/session.json")
                out.log(.info, "session", "session", [("state", describe(record.state))])
                out.node(
                    .journal(
                        JournalEntry(.session, run: record.state.runID?.description, detail: describe(record.state))))
            case .sendMessage(let token, let message):
                editsSentAt[token.rawValue] = linkNow
                out.node(
                    .link(
                        .sendMessage(
                            encode(message), wantsReply: true, run: message.runID, .edit(token: token.rawValue))))
            case .transferUserInfo(let message):
                out.node(.link(.transferUserInfo(encode(message), run: message.runID)))
            case .editRefused(_, let refused):
                refusal = refused
            case .bringAppToForeground:
                out.node(app.serve(.foreground).actions)
            case .log(let line):
                out.log(.info, "watch", line.description)
            }
        }
        // The clock's mark, when an edit reached it (`ClockLease`): a restart never stamps below it.
        // Written first: an edit's message goes before the edit's own write, and must not carry a
        // stamp a restarted clock could issue again (simulator seed 9006257).
        if let mark = clockLease.renew(covering: engine.editor.clock.last) {
            out.actions.insert(.node(.persistClock(mark)), at: start)
        }
        return refusal
    }

    /// A message's wire bytes; a workout update's run encoding is kept for the edit's reply, and for
    /// the push that brings it back (not decoded again).
    private mutating func encode(_ message: WatchToPhoneMessage) -> [UInt8] {
        guard case .workoutUpdate(let run, let epoch) = message else { return message.encoded() }
        let runBytes = DocumentCoder.encodeCompact(run)
        forwardedRun = (run, runBytes)
        engine.sent(run, encodedAs: runBytes)
        return WatchToPhoneMessage.encodedUpdate(run, runBytes: runBytes, epoch: epoch)
    }

    /// The compact encoding of a run an edit just forwarded (`encode`), else encoded now. Only the edit
    /// that made the run asks (it clears the kept copy first), so the copy kept is that same value.
    mutating func takeForwardedEncoding(of run: WorkoutDocument) -> [UInt8] {
        defer { forwardedRun = nil }
        if let forwardedRun, forwardedRun.run == run { return forwardedRun.bytes }
        return DocumentCoder.encodeCompact(run)
    }

    /// The actions one event produces, in order.
    struct Output: NodeOutput {
        var actions: [Action] = []
        static func shared(_ action: NodeAction) -> Action { .node(action) }
        static func sharedPart(of action: Action) -> NodeAction? { WatchNode.nodeAction(action) }
    }
}

extension WatchToPhoneMessage {
    /// The run an update is about, for the journal.
    fileprivate var runID: String? {
        guard case .workoutUpdate(let run, _) = self else { return nil }
        return run.id.description
    }
}
