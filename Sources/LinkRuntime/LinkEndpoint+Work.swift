import Foundation
import LinkProtocol
import POSIX

// MARK: Handling events: in order, a turn's budget at a time, never waiting on the disk

extension LinkEndpoint {
    /// Feeds one event and carries out the actions; events raised meanwhile wait their turn.
    func handle(_ event: LinkEngine.Event) {
        // Bytes that wait behind others from the same connection join them: the engine then handles
        // them in one go (the acks of several reads cost one outbox write, as one read's do).
        if case .bytesReceived(let connection, let more, let now) = event,
            case .bytesReceived(connection, let earlier, _) = queuedEvents.last,
            earlier.count + more.count <= Self.maximumJoinedBytes
        {
            queuedEvents[queuedEvents.count - 1] = .bytesReceived(connection, earlier + more, now: now)
        } else {
            queuedEvents.append(event)
        }
        limitBacklog()
        if !isHandling {
            isHandling = true
            work(since: ContinuousClock.now)
        } else if writeInFlight, Self.isTick(event) || ContinuousClock.now - writeSentAt >= slowWrite {
            // A tick is never held up by writes: heartbeats go out, and silence is found, on time.
            handleWhileWriting()
        }
    }

    private static func isTick(_ event: LinkEngine.Event) -> Bool {
        if case .tick = event { true } else { false }
    }

    /// Hands `event` to the engine now, even from inside a notification (the app API that must take
    /// effect at once: `updateApplicationContext`, `transfersProcessed`); its actions are carried out
    /// after those of earlier calls, in the order the engine produced them.
    func handleAtOnce(_ event: LinkEngine.Event) {
        actionsLeft.append(contentsOf: engine.handle(event))
        guard !isHandling else { return }
        isHandling = true
        work(since: ContinuousClock.now)
    }

    /// Carries out the actions in hand, then the waiting events', in order, until none are left,
    /// `turnBudget` is spent (the rest waits for a later turn) or a state write goes to the write
    /// queue (the rest waits for it to land).
    private func work(since start: ContinuousClock.Instant) {
        while true {
            if actionsLeft.isEmpty {
                guard !queuedEvents.isEmpty else { break }
                actionsLeft = engine.handle(queuedEvents.removeFirst())[...]
            }
            while let action = actionsLeft.popFirst() {
                if let writes, let (what, write) = stateWrite(action) {
                    writeInFlight = true
                    writeSentAt = ContinuousClock.now
                    writes.async { [loop] in
                        let result = Result { try write() }
                        loop.execute { [unowned self] in
                            writeInFlight = false
                            if case .failure(let error) = result { onFatal("\(what) failed: \(error)") }
                            work(since: ContinuousClock.now)
                        }
                    }
                    limitBacklog()
                    return
                }
                carryOut([action])
                guard let turnBudget, !actionsLeft.isEmpty || !queuedEvents.isEmpty,
                    ContinuousClock.now - start >= turnBudget
                else { continue }
                // Bytes read meanwhile only queue (cheap), so the burst's end still sees all of them.
                limitBacklog()
                loop.execute { [unowned self] in work(since: ContinuousClock.now) }
                return
            }
        }
        isHandling = false
        limitBacklog()
        let caughtUp = whenCaughtUp
        whenCaughtUp = []
        for work in caughtUp { work() }
    }

    /// While a state write is slow to land, the events that arrive are handed to the engine at once:
    /// heartbeats (a ping answered, one sent) go out now, whatever waits for the write, since they
    /// promise nothing about it; any other action waits its turn with the rest.
    private func handleWhileWriting() {
        while !queuedEvents.isEmpty {
            let actions = engine.handle(queuedEvents.removeFirst())
            // Not before a waiting seal: a frame sent unsealed on a sealed link closes it.
            if actions.allSatisfy(Self.isHeartbeat), !actionsLeft.contains(where: Self.isSeal) {
                // The engine's latest wake-up supersedes any it asked for before.
                if actions.contains(where: Self.isWakeUp) { actionsLeft.removeAll(where: Self.isWakeUp) }
                carryOut(actions)
            } else {
                actionsLeft.append(contentsOf: actions)
            }
        }
        limitBacklog()
    }

    /// Stops reading while much waits to be handled (a burst spread over turns, a slow state write),
    /// so a peer that keeps sending is slowed by TCP, not held in memory.
    private func limitBacklog() {
        var queuedBytes = 0
        for case .bytesReceived(_, let bytes, _) in queuedEvents { queuedBytes += bytes.count }
        pauseReading(
            queuedEvents.count > Self.maximumQueuedEvents || queuedBytes > Self.maximumQueuedBytes
                || actionsLeft.count > Self.maximumActionsLeft)
    }

    /// How much may wait to be handled before reading stops: events, bytes read, actions.
    static let maximumQueuedEvents = 16
    static let maximumQueuedBytes = 1 << 20
    static let maximumActionsLeft = 4096
    /// Bytes from one connection are joined up to this size (one engine event).
    static let maximumJoinedBytes = 256 << 10

    private static func isSeal(_ action: LinkEngine.Action) -> Bool {
        if case .seal = action { true } else { false }
    }

    private static func isWakeUp(_ action: LinkEngine.Action) -> Bool {
        if case .scheduleWakeUp = action { true } else { false }
    }

    private static func isHeartbeat(_ action: LinkEngine.Action) -> Bool {
        switch action {
        case .send(_, .ping), .send(_, .pong), .scheduleWakeUp: true
        default: false
        }
    }

    /// Runs `work` once every event fed so far has been handled and its actions carried out: now,
    /// or after the turns a burst was spread over. Loop-only.
    package func afterActionsInHand(_ work: @escaping () -> Void) {
        loop.preconditionInLoop()
        if isHandling { whenCaughtUp.append(work) } else { work() }
    }

    private func pauseReading(_ paused: Bool) {
        guard readingPaused != paused else { return }
        readingPaused = paused
        for connection in connections.values { connection.isReadingPaused = paused }
    }
}
