import AdminCommands
import DaemonConfiguration
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import Trace
import WorkoutModel

/// The shell both daemons share: owns the node on the event loop, feeds it one event at a time in
/// the order they came (an event an action produces, or a link notification that arrives while
/// actions run, waits its turn: nothing re-enters the node), stamps each with the wall clock,
/// reads what the node asks for, and carries out the shared actions — the link's verbs, logs, the
/// journal, admin replies, timers, the clock and live-version files, systemd, exit. The daemon adds
/// its own store: `read` and `performStore`. A failed durable action stops the rest of its list and
/// is reported to the node, which exits.
package final class NodeShell<Node: ShelledNode>: @unchecked Sendable {
    // @unchecked: after `init`, every member is used only on `loop`'s thread.
    package private(set) var node: Node
    package let loop: EventLoop
    package let link: LinkEndpoint
    package let logger: Logger
    private var clockFile: ClockFile
    private let stateDirectory: String
    private let notifier: SystemdNotifier
    private let startedAt = ContinuousClock.now
    private var timers: [NodeTimer: TimerID] = [:]
    private var responders: [AdminRequestID: AdminResponder] = [:]
    private var lastRequest: UInt64 = 0
    private var queue: [Node.Event] = []
    private var draining = false
    private var watchdogTimer: TimerID?

    /// Reads the documents or listings the node asked for (the daemon's store).
    package var read: (NeedsReads) -> Reads = { _ in Reads() }
    /// Carries out one of the node's own actions (its store's writes); throws when a durable one failed.
    package var performStore: (Node.Action) throws -> Void = { _ in }
    /// Stops the daemon's own services (the admin socket, phoned's watcher).
    package var closeServices: () -> Void = {}
    /// phoned's listening port, for status.
    package var listenPort = 0

    package init(
        node: Node, loop: EventLoop, link: LinkEndpoint, logger: Logger, clockFile: ClockFile, stateDirectory: String,
        notifier: SystemdNotifier
    ) {
        self.node = node
        self.loop = loop
        self.link = link
        self.logger = logger
        self.clockFile = clockFile
        self.stateDirectory = stateDirectory
        self.notifier = notifier
    }

    /// Feeds `event` (after the ones already waiting); on the loop.
    package func post(_ event: Node.Event) {
        loop.preconditionInLoop()
        queue.append(event)
        guard !draining else { return }
        draining = true
        defer { draining = false }
        var next = 0
        while next < queue.count {
            let event = queue[next]
            next += 1
            // A failure is the node's next event, before anything that waited.
            if let failure = run(event) { queue.insert(failure, at: next) }
            if next > 1024 {
                queue.removeFirst(next)
                next = 0
            }
        }
        queue.removeAll(keepingCapacity: true)
    }

    /// Serves one admin request: numbers it and hands the node the event `make` builds with the
    /// facts a status shows; the node's reply goes to `respond`.
    package func admin(
        respond: AdminResponder, _ make: (AdminRequestID, ShellFacts) -> Node.Event
    ) {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        responders[request] = respond
        post(make(request, facts))
    }

    /// What the shell knows that a status reply shows.
    package var facts: ShellFacts {
        ShellFacts(
            link: link.status(), uptimeSeconds: Int((ContinuousClock.now - startedAt).components.seconds),
            journalCounts: link.journal?.counts ?? [:], listenPort: listenPort, starts: link.state.starts,
            fsyncLatency: LatencyRecorder.fsync.snapshot)
    }

    /// Tells systemd the daemon is ready (with `status`), then keeps its watchdog fed while it runs.
    package func notifyReady(_ status: String) {
        try? notifier.ready(status: status)
        notifier.keepWatchdogFed(on: loop) { [unowned self] timer in watchdogTimer = timer }
    }

    private func run(_ event: Node.Event) -> Node.Event? {
        var reads = Reads()
        var actions: [Node.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: .current, reads: reads)
                break
            } catch {
                let more = read(error)
                reads.documents.merge(more.documents) { _, new in new }
                if let listing = more.outstandingTransfers { reads.outstandingTransfers = listing }
                if error.outstandingFiles { reads.outstandingFiles = link.outstandingFileTransfers() }
                reads.samples.merge(more.samples) { _, new in new }
                for id in error.samples.keys where reads.samples[id] == nil { reads.samples[id] = .some(nil) }
                // Whatever the store did not answer is unreadable: the node must not ask forever.
                for id in error.documents.keys where reads.documents[id] == nil {
                    reads.documents[id] = .failure(ReadFailure("not readable"))
                }
                if error.outstandingTransfers, reads.outstandingTransfers == nil { reads.outstandingTransfers = [] }
            }
        }
        for action in actions {
            do {
                if let shared = Node.nodeAction(action) {
                    try perform(shared)
                } else {
                    try performStore(action)
                }
            } catch {
                // Nothing after a failed durable write may run (an acknowledgement least of all).
                return Node.reported(.durableWriteFailed(reason: "\(error)"))
            }
        }
        return nil
    }

    private func report(_ report: ShellReport) {
        post(Node.reported(report))
    }

    // MARK: The shared actions

    private func perform(_ action: NodeAction) throws {
        switch action {
        case .link(let command):
            try perform(command)
        case .log(let line):
            logger.withComponent(line.component).log(
                Self.level(line.level), line.message, fields: line.fields.map { ($0.key, $0.value) })
        case .journal(let entry):
            link.journal?.record(entry.kind, cause: entry.cause, run: entry.run, detail: entry.detail)
        case .reply(let request, let response) where response.more == true:
            // A chunk: the node hears when the client has taken it, to send the next, or has gone.
            responders[request]?.chunk(response) { [unowned self] open in
                if !open { responders[request] = nil }
                report(.replyTaken(request, clientGone: !open))
            }
        case .reply(let request, let response):
            responders.removeValue(forKey: request)?(response)
        case .replyTrace(let request, let query):
            let journal = EventJournal.read(stateDirectory: stateDirectory)
            let events = query.filter(now: EventJournal.wallMicros()).apply(journal)
            let outcome: AdminOutcome =
                query.json
                ? .output(text: "", json: events.map { $0.jsonLine() }.joined(separator: "\n"))
                : .output(text: AdminOutcome.lines(events.map(\.humanLine), empty: "no events"), json: "")
            responders.removeValue(forKey: request)?(outcome.response)
        case .armTimer(let name, let at):
            if let timer = timers.removeValue(forKey: name) { loop.cancelTimer(timer) }
            let delay = max(Timestamp.current.duration(to: at), .zero)
            timers[name] = loop.scheduleTimer(after: delay) { [unowned self] in
                timers[name] = nil
                report(.timerFired(name))
            }
        case .cancelTimer(let name):
            if let timer = timers.removeValue(forKey: name) { loop.cancelTimer(timer) }
        case .callAtEndOfTurn:
            loop.execute { [unowned self] in report(.turnEnded) }
        case .persistLiveVersion(let version):
            do {
                try AtomicFile.write(Array("\(version)".utf8), to: "\(stateDirectory)/live-version")
            } catch {
                logger.warning("live version not persisted", ["reason": "\(error)"], component: "live")
            }
        case .persistClock(let stamp):
            try clockFile.persist(stamp)
        case .notifyStopping:
            try? notifier.stopping()
        case .closeServices:
            closeServices()
            link.stop()
            if let watchdogTimer { loop.cancelTimer(watchdogTimer) }
        case .exit(let code):
            exit(code)
        }
    }

    private func perform(_ command: LinkCommand) throws {
        switch command {
        case .updateContext(let payload, let force):
            do {
                try link.updateApplicationContext(payload, force: force)
                report(.contextQueued(generation: link.status().contextGenerationSent ?? 0))
            } catch {
                report(.contextRefused(reason: error.description))
            }
        case .sendMessage(let payload, let wantsReply, let run, let purpose):
            link.sendMessage(payload, wantsReply: wantsReply, run: run) { [unowned self] outcome in
                report(.messageEnded(purpose, outcome, stillReachable: link.status().reachable))
            }
        case .sendMessageData(let payload, let wantsReply, let purpose):
            link.sendMessageData(payload, wantsReply: wantsReply) { [unowned self] outcome in
                report(.messageEnded(purpose, outcome, stillReachable: link.status().reachable))
            }
        case .answerMessage(let id, let answer):
            link.answerMessage(id: id, answer)
        case .transferUserInfo(let payload, let run):
            link.transferUserInfo(payload, run: run) { [unowned self] result in
                if case .failure(let error) = result { report(.transferNotQueued(payload, reason: "\(error)")) }
            }
        case .transferComplication(let payload, let asCurrent, let request):
            let queued: (Result<UInt64, any Error>) -> Void = { [unowned self] result in
                report(.complicationQueued(request, asCurrent: asCurrent, result.mapError { ReadFailure("\($0)") }))
            }
            if asCurrent {
                link.transferCurrentComplicationUserInfo(payload, completion: queued)
            } else {
                link.transferUserInfo(payload, completion: queued)
            }
        case .transferFile(let source, let metadata, let request):
            link.transferFile(source, metadata: metadata) { [unowned self] result in
                report(.fileQueued(request, result.mapError { ReadFailure("\($0)") }))
            }
        case .cancelFile(let sequence, let request):
            do {
                try link.cancelFileTransfer(sequence: sequence)
                report(.fileCancelEnded(request, sequence: sequence, nil))
            } catch {
                report(.fileCancelEnded(request, sequence: sequence, ReadFailure(error.description)))
            }
        case .fileProcessed(let key):
            link.fileProcessed(key)
        case .keepReceivedFile(let key, let name):
            let directory = "\(stateDirectory)/received-files"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try AtomicFile.moveDurably(link.inboxPath(for: key), to: "\(directory)/\(name)")
        case .transfersProcessed(let keys):
            link.transfersProcessed(keys)
        case .cancelTransfer(let sequence, let request):
            let payload = link.state.outbox.pending().first { $0.sequence == sequence }?.payload
            let result: Result<Bool, ReadFailure>
            do {
                result = .success(try link.cancelTransfer(sequence: sequence))
            } catch {
                result = .failure(ReadFailure(error.description))
            }
            report(.transferCancelEnded(request, sequence: sequence, result, payload: payload))
        case .launch(let payload):
            link.launch(payload)
        case .setAppForeground(let foreground):
            link.setAppForeground(foreground)
        case .setWatchState(let state):
            link.setWatchState(state)
        }
    }

    private static func level(_ level: LogLine.Level) -> LogLevel {
        switch level {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}

/// The small files a daemon keeps in its state directory.
package enum StateFiles {
    /// A value kept in the state directory, nil when there is none yet.
    package static func readState<T: VersionedDocument>(_ type: T.Type, _ path: String) throws -> T? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        return try DocumentCoder.decode(type, from: bytes)
    }

    /// The live mirror's last version (`<state>/live-version`), nil when there is none yet.
    package static func liveVersion(stateDirectory: String) throws -> Int? {
        try AtomicFile.read("\(stateDirectory)/live-version").flatMap { Int(String(decoding: $0, as: UTF8.self)) }
    }

    /// Handles one event and carries out its actions; returns the failure to report when a durable
    /// one failed (the actions after it are not carried out).
}

extension Timestamp {
    /// The wall clock now, to the microsecond (shells only: pure code receives time in events).
    package static var current: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
}
