import LinkProtocol
import WorkoutModel

/// A daemon's whole decision-making as one value: its node (`PhoneNode` or `WatchNode`) and the link
/// engine, composed. Bytes, connections, timers and what the shell's outbox made of an append go in
/// as events; the engine's actions and the node's come out as one ordered list. The link verbs the
/// node asks for are handed to the engine here, and the engine's notifications become the node's next
/// steps in the same `handle`, after the step that raised them: no shell routes anything between the
/// two. A step that needs reads ends the list with `.resume`; the shell reads and feeds `.resume`. So
/// does a step that wrote the link's state when steps wait after it (the write begins sooner).
package struct LinkedNode<Inner: ShelledNode>: Sendable {
    package private(set) var inner: Inner
    package private(set) var link: LinkEngine
    /// The steps not taken yet, in order: `waiting[head...]`.
    private var waiting: [Event] = []
    private var head = 0
    /// Appends the engine asked for that the shell has not reported on: what each was for, and its
    /// payload, to number again after a refusal.
    private var appends: [Slot: Append] = [:]
    /// Files being copied into the file outbox, for the admin request that asked.
    private var fileCopies: [UInt64: AdminRequestID] = [:]
    /// Whether the app runs (`setAppRunning`). While it does not, what the link delivers to it waits
    /// in `heldForApp`, in order: the newest context only (latest wins), each transfer and file once
    /// (the link has not acknowledged them, so after a restart the sender sends them again).
    package private(set) var isAppRunning = true
    private var heldForApp: [LinkNotification] = []

    package enum Event: Sendable {
        case inner(Inner.Event)
        case link(LinkEngine.Event)
        /// The outbox refused the append of `sequence`; it wrote none after it.
        case appendRefused(sequence: UInt64, complication: Bool, reason: String)
        /// The file `sequence` could not be copied into the file outbox.
        case fileNotQueued(sequence: UInt64, reason: String)
        /// Take the steps the last list left waiting (`Action.resume`).
        case resume
    }

    package enum Action: Sendable {
        case inner(Inner.Action)
        /// The engine's action; `run` labels an append's journal line.
        case link(LinkEngine.Action, run: String? = nil)
        /// A message goes out under `id`: journal its attempt (`run` labels its lines).
        case messageAttempt(id: UInt64, run: String?)
        /// After a refused append, the outbox's appends asked for before this are void (they are asked
        /// for again, numbered anew, right after): the shell drops any it has not made yet.
        case appendsRenumbered(complication: Bool)
        /// Feed `.resume` next, before any other event: a step waits for reads, or for a link write to begin.
        case resume
    }

    private struct Slot: Hashable, Sendable {
        var complication: Bool
        var sequence: UInt64
    }

    private struct Append: Sendable {
        var payload: [UInt8]
        var origin: Origin
    }

    private enum Origin: Sendable {
        case userInfo(run: String?)
        case complication(AdminRequestID, asCurrent: Bool)

        var run: String? { if case .userInfo(let run) = self { run } else { nil } }
    }

    package init(_ inner: Inner, link: LinkEngine) {
        self.inner = inner
        self.link = link
    }

    /// `WCSession.hasContentPending`: items received for the app that it has not processed yet
    /// (waiting for its launch, or handed to it and not done).
    package var hasContentPending: Bool { !heldForApp.isEmpty || link.hasContentPending }

    /// The link's status, as the app's status shows it.
    package var linkStatus: LinkStatus {
        var status = link.status
        status.hasContentPending = hasContentPending
        return status
    }

    /// Whether steps wait for a `.resume`.
    package var isWaiting: Bool { head < waiting.count }

    /// Takes `event`'s step, then every step it raised, in order. Throws `NeedsReads` only when
    /// nothing changed (the shell reads and feeds the same event again); once something did, a step
    /// that needs reads ends the list with `.resume` instead.
    // Specialised here for the two nodes: the shells, in other modules, would otherwise run it generic.
    @_specialize(exported:true,where Inner == PhoneNode)
    @_specialize(exported:true,where Inner == WatchNode)
    package mutating func handle(
        _ event: Event, now: Timestamp, linkNow: LinkInstant, reads: Reads = Reads()
    ) throws(NeedsReads) -> [Action] {
        var step = Step(now: now, linkNow: linkNow, reads: reads)
        let fresh: Bool
        if case .resume = event { fresh = false } else { fresh = true }
        if fresh { waiting.append(event) }
        var changed = false
        defer {
            waiting.removeFirst(head)
            head = 0
        }
        while head < waiting.count {
            let taken = step.out.count
            do throws(NeedsReads) {
                try take(waiting[head], &step)
            } catch {
                if changed {
                    step.out.append(.resume)
                    return step.out
                }
                if fresh { waiting.removeLast() }
                throw error
            }
            changed = true
            head += 1
            // A step that wrote the link's state (a received context) hands the list back before the
            // steps it raised: the shell begins the write while the node takes them, and each action
            // still waits for the same writes.
            if head < waiting.count, step.out[taken...].contains(where: { $0.isLinkStateWrite }) {
                step.out.append(.resume)
                return step.out
            }
        }
        return step.out
    }

    private struct Step {
        var now: Timestamp
        var linkNow: LinkInstant
        var reads: Reads
        var out: [Action] = []
    }

    private mutating func take(_ event: Event, _ step: inout Step) throws(NeedsReads) {
        switch event {
        case .inner(let event):
            for action in try inner.handle(event, now: step.now, linkNow: step.linkNow, reads: step.reads) {
                if case .link(let command)? = Inner.nodeAction(action), command.isRouted {
                    route(command, &step)
                } else {
                    step.out.append(.inner(action))
                }
            }
        case .link(let event):
            absorb(link.handle(event), &step)
            landed(event)
        case .appendRefused(let sequence, let complication, let reason):
            if let refused = appends.removeValue(forKey: Slot(complication: complication, sequence: sequence)) {
                failed(refused, reason: reason)
            }
            let later = appends.filter { $0.key.complication == complication && $0.key.sequence > sequence }
                .sorted { $0.key.sequence < $1.key.sequence }
            for (slot, _) in later { appends[slot] = nil }
            absorb(link.handle(.transfersNotPersisted(from: sequence, complication: complication)), &step)
            step.out.append(.appendsRenumbered(complication: complication))
            for (_, append) in later { request(append.payload, append.origin, complication: complication, &step) }
        case .fileNotQueued(let sequence, let reason):
            if let request = fileCopies.removeValue(forKey: sequence) {
                report(.fileQueued(request, .failure(ReadFailure(reason))))
            }
        case .resume:
            break
        }
    }

    /// Hands a link verb of the node's to the engine (admission checked here, as `WCSession` checks it
    /// before it queues anything).
    private mutating func route(_ command: LinkCommand, _ step: inout Step) {
        switch command {
        case .updateContext(let payload, let force):
            absorb(link.handle(.contextUpdated(payload: payload, force: force, now: step.linkNow)), &step)
        case .sendMessage(let payload, let wantsReply, let run, _, let id):
            step.out.append(.messageAttempt(id: id, run: run))
            absorb(
                link.handle(.messageSent(id: id, payload: payload, wantsReply: wantsReply, now: step.linkNow)), &step)
        case .sendMessageData(let payload, let wantsReply, _, let id):
            step.out.append(.messageAttempt(id: id, run: nil))
            absorb(
                link.handle(.messageDataSent(id: id, payload: payload, wantsReply: wantsReply, now: step.linkNow)),
                &step)
        case .answerMessage(let id, let answer):
            absorb(link.handle(.messageAnswered(id: id, answer)), &step)
        case .transferUserInfo(let payload, let run):
            if let error = link.admission(of: .userInfo, bytes: payload.count) {
                report(.transferNotQueued(payload, reason: "\(error)"))
            } else {
                request(payload, .userInfo(run: run), complication: false, &step)
            }
        case .transferComplication(let payload, let asCurrent, let request):
            if let error = link.admission(of: .userInfo, bytes: payload.count) {
                report(.complicationQueued(request, asCurrent: asCurrent, .failure(ReadFailure("\(error)"))))
            } else {
                self.request(payload, .complication(request, asCurrent: asCurrent), complication: asCurrent, &step)
            }
        case .transferFile(let source, let metadata, let request):
            if let error = link.admission(of: .userInfo, bytes: 0) {
                return report(.fileQueued(request, .failure(ReadFailure("\(error)"))))
            }
            let actions = link.handle(.fileRequested(source, metadata: metadata))
            if let sequence = actions.lazy.compactMap(\.enqueuedFile).first {
                fileCopies[sequence] = request
            } else {
                report(
                    .fileQueued(request, .failure(ReadFailure("\(LinkError.deliveryFailed(reason: "no file outbox"))")))
                )
            }
            absorb(actions, &step)
        case .cancelFile(let sequence, let request):
            if let error = link.fileCancellationError(sequence: sequence) {
                report(.fileCancelEnded(request, sequence: sequence, ReadFailure(error.description)))
            } else {
                absorb(link.handle(.fileCancelRequested(sequence: sequence)), &step)
                report(.fileCancelEnded(request, sequence: sequence, nil))
            }
        case .fileProcessed(let key):
            absorb(link.handle(.fileProcessed(key)), &step)
        case .transfersProcessed(let keys):
            absorb(link.handle(.transfersProcessed(keys)), &step)
        case .transfersRefused(let keys, let reason):
            absorb(link.handle(.transfersRefused(keys, reason: reason)), &step)
        case .cancelTransfer(let sequence):
            absorb(link.handle(.transferCancelRequested(sequence: sequence)), &step)
        case .cancelComplication(let sequence):
            absorb(link.handle(.complicationCancelRequested(sequence: sequence)), &step)
        case .launch(let payload):
            absorb(link.handle(.launchRequested(payload: payload)), &step)
        case .setAppForeground(let foreground):
            absorb(link.handle(.localAppStateChanged(foreground: foreground)), &step)
        case .setAppRunning(let running):
            isAppRunning = running
            guard running else { return }
            waiting += heldForApp.map { .inner(Inner.linkNotified($0)) }
            heldForApp = []
        case .setWatchState(let state):
            absorb(link.handle(.localWatchStateChanged(state)), &step)
        case .keepReceivedFile:
            preconditionFailure("the shell's own work is never routed")
        }
    }

    /// Has the engine number a transfer and ask for its append, remembering what it is for.
    private mutating func request(_ payload: [UInt8], _ origin: Origin, complication: Bool, _ step: inout Step) {
        let actions = link.handle(.transferRequested(payload: payload, complication: complication))
        var numbered = false
        for case .appendTransfer(let sequence, _, let outbox) in actions {
            appends[Slot(complication: outbox, sequence: sequence)] = Append(payload: payload, origin: origin)
            numbered = true
        }
        if !numbered {
            failed(
                Append(payload: payload, origin: origin),
                reason: "\(LinkError.deliveryFailed(reason: "no outbox for this transfer"))")
        }
        absorb(actions, &step, run: origin.run)
    }

    /// The engine's actions go out in order; each notification also becomes the node's step (after
    /// the ones waiting), and is passed out for the journal.
    private mutating func absorb(_ actions: [LinkEngine.Action], _ step: inout Step, run: String? = nil) {
        for action in actions {
            #if SIMULATION_MUTATION_NO_APP_HOLD
                let held = false
            #else
                let held = !isAppRunning && holdForApp(notification: action)
            #endif
            if case .notify(let notification) = action, !held {
                waiting.append(.inner(Inner.linkNotified(notification)))
            }
            if case .appendTransfer = action {
                step.out.append(.link(action, run: run))
            } else {
                step.out.append(.link(action))
            }
        }
    }

    /// Keeps what the link delivers to an app that is not running until it launches; false for
    /// anything else (the app's node decides what to do with it).
    private mutating func holdForApp(notification action: LinkEngine.Action) -> Bool {
        guard case .notify(let notification) = action, notification.isDeliveryToApp else { return false }
        switch notification {
        case .contextReceived:
            heldForApp.removeAll { if case .contextReceived = $0 { true } else { false } }
        case .userInfoReceived(let key, _):
            if heldForApp.contains(where: { if case .userInfoReceived(key, _) = $0 { true } else { false } }) {
                return true
            }
        case .fileReceived(let file):
            if heldForApp.contains(where: {
                if case .fileReceived(let held) = $0 { held.key == file.key } else { false }
            }) {
                return true
            }
        default:
            break
        }
        heldForApp.append(notification)
        return true
    }

    /// What the shell's report of an append or a file copy answers.
    private mutating func landed(_ event: LinkEngine.Event) {
        switch event {
        case .transferPersisted(let sequence, _), .complicationPersisted(let sequence, _):
            let complication = if case .complicationPersisted = event { true } else { false }
            guard let append = appends.removeValue(forKey: Slot(complication: complication, sequence: sequence)),
                case .complication(let request, let asCurrent) = append.origin
            else { return }
            report(.complicationQueued(request, asCurrent: asCurrent, .success(sequence)))
        case .filePersisted(let file):
            if let request = fileCopies.removeValue(forKey: file.sequence) {
                report(.fileQueued(request, .success(file)))
            }
        default:
            break
        }
    }

    private mutating func failed(_ append: Append, reason: String) {
        switch append.origin {
        case .userInfo:
            report(.transferNotQueued(append.payload, reason: reason))
        case .complication(let request, let asCurrent):
            report(.complicationQueued(request, asCurrent: asCurrent, .failure(ReadFailure(reason))))
        }
    }

    private mutating func report(_ report: ShellReport) {
        waiting.append(.inner(Inner.reported(report)))
    }
}

extension LinkedNode.Action: Equatable where Inner.Action: Equatable {}

extension LinkedNode.Action {
    /// Whether a shell may carry this out ahead of the writes before it, with `waiting` the actions
    /// that wait for them: a heartbeat (a ping, a pong, the next wake-up) promises nothing about the
    /// disk, but never goes ahead of a seal (a frame sent unsealed on a sealed link closes it).
    package func passesWrites(waiting: some Sequence<Self>) -> Bool {
        guard case .link(let action, _) = self, action.isHeartbeat else { return false }
        return !waiting.contains { if case .link(.seal, _) = $0 { true } else { false } }
    }

    /// Whether this may go out ahead of the writes before it when it answers a query: it reports, it
    /// changes nothing (`NodeAction.answersWithoutWaiting`).
    package var answersWithoutWaiting: Bool {
        if case .inner(let inner) = self { Inner.nodeAction(inner)?.answersWithoutWaiting == true } else { false }
    }

    /// A write to the link's state directory.
    package var isLinkStateWrite: Bool {
        if case .link(let action, _) = self { action.isStateWrite } else { false }
    }

    /// The engine's next wake-up: the latest supersedes any waiting.
    package var isWakeUp: Bool {
        if case .link(.scheduleWakeUp, _) = self { true } else { false }
    }
}

extension LinkedNode.Event {
    /// Whether the writes this event raises hold the link's events that arrive while they are in
    /// flight (`LinkEventHold`): the link's intake and all that follows from it (the outboxes'
    /// reports, timers, the end of a turn) do, for group commit; an admin request's writes (an edit
    /// made on this side) do not, so a context that comes back meanwhile is taken in at once and
    /// its writes queue behind. `.resume` goes on with the event before it (`previous`).
    package func holdsLinkEvents(resuming previous: Bool) -> Bool {
        switch self {
        case .inner(let event): !Inner.isAdminRequest(event)
        case .resume: previous
        case .link, .appendRefused, .fileNotQueued: true
        }
    }
}

extension LinkCommand {
    /// Whether the node hands this to its engine (the rest is the shell's own work).
    var isRouted: Bool {
        if case .keepReceivedFile = self { false } else { true }
    }
}

extension LinkEngine.Action {
    var enqueuedFile: UInt64? {
        if case .enqueueFile(let sequence, _, _) = self { sequence } else { nil }
    }
}

extension LinkNotification {
    /// What the link delivers to the app: a context, a transfer, a file (held while it is not running).
    package var isDeliveryToApp: Bool {
        switch self {
        case .contextReceived, .userInfoReceived, .fileReceived: true
        default: false
        }
    }
}
