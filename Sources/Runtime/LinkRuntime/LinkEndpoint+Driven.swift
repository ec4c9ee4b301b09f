import LinkProtocol

/// Where a driven endpoint sends what happened: the node that holds the engine.
package struct LinkDriver {
    /// Bytes, connections, ticks, and what the outboxes made durable.
    package var event: (LinkEngine.Event) -> Void
    /// The outbox refused an append (`sequence`, which outbox, why); it wrote none after it.
    package var appendRefused: (UInt64, Bool, String) -> Void
    /// A file could not be copied into the file outbox (its sequence, why).
    package var fileNotQueued: (UInt64, String) -> Void

    package init(
        event: @escaping (LinkEngine.Event) -> Void, appendRefused: @escaping (UInt64, Bool, String) -> Void,
        fileNotQueued: @escaping (UInt64, String) -> Void
    ) {
        self.event = event
        self.appendRefused = appendRefused
        self.fileNotQueued = fileNotQueued
    }
}

// MARK: Driven by a node that holds the engine (the daemons)

extension LinkEndpoint {
    /// Hands the engine over: the holder took `engine` as it was restored, from now on every event
    /// goes to `driver`, and the holder carries out the engine's actions here (`carryOut(driven:)`),
    /// its state writes on its own write queue (`stateWrite`). The endpoint's app API, its own
    /// scheduling and `engine` are then unused. Before `start`.
    package func drive(_ driver: LinkDriver) {
        self.driver = driver
    }

    /// Carries out one of the engine's actions that is not a state write: frames, seals, closes,
    /// dials, the wake-up, file chunks, and the outboxes' appends and copies (their outcome comes
    /// back through the driver). `run` labels an append's journal line.
    package func carryOut(driven action: LinkEngine.Action, run: String? = nil) {
        loop.preconditionInLoop()
        guard !stopped else { return }
        switch action {
        case .appendTransfer(let sequence, let payload, let complication):
            guard !voidAppends.contains(complication) else { return }
            appendsWaiting.append(
                WaitingAppend(
                    sequence: sequence, payload: payload, complication: complication,
                    enqueuedAtMicros: Self.wallClockMicros(), run: run))
            commitDrivenAppends()
        case .enqueueFile(let sequence, let source, let metadata):
            let store = state.files
            outboxQueue.async { [loop] in
                let result = Result { try store.enqueue(source, metadata: metadata, sequence: sequence) }
                loop.execute { [self] in
                    guard let driver, !stopped else { return }
                    switch result {
                    case .success(let file): driver.event(.filePersisted(file))
                    case .failure(let error): driver.fileNotQueued(sequence, "\(error)")
                    }
                }
            }
        default:
            perform(action)
        }
    }

    /// The node numbered the refused outbox's appends again: the ones that follow are good.
    package func appendsRenumbered(complication: Bool) {
        voidAppends.remove(complication)
    }

    /// Stops (or resumes) reading from every connection: the holder has too much waiting.
    package func setReadingPaused(_ paused: Bool) {
        guard readingPaused != paused else { return }
        readingPaused = paused
        for connection in connections.values { connection.isReadingPaused = paused }
    }

    /// Group commit, as `commitWaitingAppends`, with the outcomes sent to the driver. After a refusal
    /// the outbox's later appends are void (the log wrote none of them) until `appendsRenumbered`.
    /// The commit counts as in flight until the driver has heard every outcome, so what the node asks
    /// for meanwhile goes in one commit.
    private func commitDrivenAppends() {
        startCommit { [self] batch, results in
            guard let driver, !stopped else { return }
            // Void once refused, for the rest of this batch (the node may number anew meanwhile).
            var void = voidAppends
            for (append, result) in zip(batch, results) where !void.contains(append.complication) {
                switch result {
                case .success:
                    journalQueued(append)
                    driver.event(
                        append.complication
                            ? .complicationPersisted(sequence: append.sequence, payload: append.payload)
                            : .transferPersisted(sequence: append.sequence, payload: append.payload))
                case .failure(let error):
                    void.insert(append.complication)
                    voidAppends.insert(append.complication)
                    appendsWaiting.removeAll { $0.complication == append.complication }
                    driver.appendRefused(append.sequence, append.complication, "\(error)")
                }
            }
            appendInFlight = false
            commitDrivenAppends()
        }
    }
}
