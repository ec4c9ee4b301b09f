import LinkProtocol

// MARK: Running the engine alone: events in order, actions on the loop

extension LinkEndpoint {
    /// Feeds one event and carries out the actions; events raised meanwhile (an app calling back from
    /// a notification) wait their turn, so actions are never interleaved. Driven: the node gets it.
    func handle(_ event: LinkEngine.Event) {
        if let driver { return driver.event(event) }
        queuedEvents.append(event)
        work()
    }

    /// Hands `event` to the engine now, even from inside a notification (the app API that must take
    /// effect at once: `updateApplicationContext`, `transfersProcessed`); its actions are carried out
    /// after those of earlier calls, in the order the engine produced them.
    func handleAtOnce(_ event: LinkEngine.Event) {
        if let driver { return driver.event(event) }
        actionsLeft.append(contentsOf: engine.handle(event))
        work()
    }

    /// Carries out the actions in hand, then the waiting events', in order, until none are left.
    private func work() {
        guard !isHandling else { return }
        isHandling = true
        defer { isHandling = false }
        while true {
            if actionsLeft.isEmpty {
                guard !queuedEvents.isEmpty else { return }
                actionsLeft = engine.handle(queuedEvents.removeFirst())[...]
            }
            while let action = actionsLeft.popFirst() { carryOut([action]) }
        }
    }
}
