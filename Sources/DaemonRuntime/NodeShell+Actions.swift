import AdminCommands
import DaemonConfiguration
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes
import Trace
import WorkoutModel

// MARK: The shared actions

extension NodeShell {

    func perform(_ action: NodeAction) throws {
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
            // A burst the link spreads over several turns (`turnBudget`) ends once it is all handled.
            loop.execute { [unowned self] in link.afterActionsInHand { [unowned self] in report(.turnEnded) } }
        case .persistLiveVersion, .persistClock:
            // Durable writes: `run` sends them to the write queue (`durableWrite`).
            break
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
            link.updateContext(payload, force: force)
        case .sendMessage(let payload, let wantsReply, let run, _, let id):
            link.sendMessage(id: id, payload, wantsReply: wantsReply, run: run, asData: false)
        case .sendMessageData(let payload, let wantsReply, _, let id):
            link.sendMessage(id: id, payload, wantsReply: wantsReply, run: nil, asData: true)
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
        case .keepReceivedFile:
            // A durable write: `run` sends it to the write queue (`durableWrite`).
            break
        case .transfersProcessed(let keys):
            link.transfersProcessed(keys)
        case .cancelTransfer(let sequence):
            link.requestTransferCancel(sequence: sequence)
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
