import Nodes

/// The shell's write queue, as `NodeShell` runs it (docs/SIMULATION.md, "The write queue").
extension SimHost {
    /// As `NodeShell` carries out actions with its write queue: a durable write lands 0–3 ms later,
    /// after the ones before it; an action after a write waits for it, except a query's reply.
    func queue(_ actions: [Node.Action], query: Bool) {
        releaseWaiting()
        for action in actions {
            guard isUp else { return }
            if isDurableWrite(action) {
                writesInFlight.append(action)
                writesSent += 1
                if writesInFlight.count == 1 {
                    world.schedule(after: world.writeDelay(), .writeLanded(side, life: life))
                }
            } else if query && Node.nodeAction(action)?.answersWithoutWaiting == true
                || waitingActions.isEmpty && writesLanded == writesSent
            {
                carryOutNow(action)
            } else {
                waitingActions.append((writesSent, action))
            }
        }
        if writesLandAtOnce {
            while isUp, !writesInFlight.isEmpty { landWrite() }
        }
    }

    /// The oldest write in flight lands (or fails: then nothing behind it runs and the node hears
    /// of it), and the actions that waited for it follow.
    func landWrite() {
        guard !writesInFlight.isEmpty else { return }
        guard !failNextWrite else {
            writesInFlight = []
            waitingActions = []
            writesLanded = writesSent
            return failWrite()
        }
        performLanding(writesInFlight.removeFirst())
        releaseWaiting()
        if !writesInFlight.isEmpty, !writesLandAtOnce {
            world.schedule(after: world.writeDelay(), .writeLanded(side, life: life))
        }
    }

    func performLanding(_ write: Node.Action) {
        carryOutNow(write)
        writesLanded += 1
    }

    func releaseWaiting() {
        while isUp, let first = waitingActions.first, first.after <= writesLanded {
            waitingActions.removeFirst()
            carryOutNow(first.action)
        }
    }

    private func carryOutNow(_ action: Node.Action) {
        if let shared = Node.nodeAction(action) { perform(shared) } else { performStore(self, action) }
    }

    private func isDurableWrite(_ action: Node.Action) -> Bool {
        Node.nodeAction(action)?.isDurableWrite ?? isStoreWrite(action)
    }
}
