import AdminCommands
import DaemonConfiguration
import DurableFiles
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import Trace
import WorkoutModel

// MARK: The shared actions

extension NodeShell {

    /// Carries out one action that is not a durable write, on the loop; throws when it failed.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func carryOut(_ action: LinkedNode<Node>.Action) throws {
        switch action {
        case .inner(let action):
            if let shared = Node.nodeAction(action) {
                try perform(shared)
            } else {
                try daemon.performStore(action)
            }
        case .link(let action, let run):
            link.carryOut(driven: action, run: run)
        case .messageAttempt(let id, let run):
            link.journalAttempt(id, run: run)
        case .appendsRenumbered(let complication):
            link.appendsRenumbered(complication: complication)
        case .resume:
            break  // the runner's own
        }
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func perform(_ action: NodeAction) throws {
        switch action {
        case .link:
            // The node hands its link verbs to its engine; the one left (`keepReceivedFile`) is a
            // durable write, sent to the write queue by the runner.
            break
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
            arm(name, at: at, armedFor: max(Timestamp.current.duration(to: at), .zero), since: .now)
        case .cancelTimer(let name):
            if let timer = timers.removeValue(forKey: name) { loop.cancelTimer(timer) }
        case .callAtEndOfTurn:
            break  // the runner's own (`NodeRunner.turn`)
        case .persistLiveVersion, .persistClock, .markStoppedCleanly:
            // Durable writes: the runner sends them to the write queue (`beginWrite`).
            break
        case .notifyStopping:
            try? notifier.stopping()
        case .closeServices:
            daemon.closeServices()
            link.stop()
            if let watchdogTimer { loop.cancelTimer(watchdogTimer) }
        case .exit(let code):
            exit(code)
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

    /// Arms `name` for the wall-clock deadline `at`, a wait of `armedFor` from `since`: fired when due
    /// (`NodeTimer.isDue`), looked at again until then.
    func arm(_ name: NodeTimer, at: Timestamp, armedFor: Duration, since: ContinuousClock.Instant) {
        let wait = NodeTimer.wait(until: at, now: .current, waited: since.duration(to: .now), armedFor: armedFor)
        timers[name] = loop.scheduleTimer(after: wait) { [unowned self] in
            timers[name] = nil
            let waited = since.duration(to: .now)
            guard NodeTimer.isDue(at: at, now: .current, waited: waited, armedFor: armedFor) else {
                return arm(name, at: at, armedFor: armedFor, since: since)
            }
            report(.timerFired(name))
        }
    }
}
