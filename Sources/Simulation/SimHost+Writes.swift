import LinkProtocol
import Nodes

/// The shell's write queue, as `NodeShell` runs it (docs/SIMULATION.md, "The write queue").
extension SimHost {
    /// As `NodeShell` carries out actions with its write queue: a durable write lands 0–3 ms later,
    /// after the ones before it; an action after a write waits for it, except a query's reply.
    func queue(_ actions: [LinkedNode<Node>.Action], query: Bool) {
        releaseWaiting()
        for action in actions {
            guard isUp else { return }
            if case .resume = action {
                resumeNext = true
            } else if isDurableWrite(action) {
                if writesInFlight.isEmpty { busySince = world.now }
                writesInFlight.append(action)
                writesSent += 1
                hold.sent(writesSent)
                if writesInFlight.count == 1 {
                    world.schedule(after: world.writeDelay(), .writeLanded(side, life: life))
                }
            } else if query && action.answersWithoutWaiting || waitingActions.isEmpty && writesLanded == writesSent
                || passesWrites(action)
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
        defer { endTurnIfWritesLanded() }
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

    /// The end of turn that waited for the writes, once they have all landed (a read may have landed
    /// them: the write's scheduled landing still comes, and finds them gone).
    private func endTurnIfWritesLanded() {
        guard isUp else { return }
        // The held link events first (once no write that holds them is in flight): a batch waiting
        // to end takes them in.
        for held in hold.landed(through: writesLanded) { post(.link(held)) }
        guard writesInFlight.isEmpty, turnEndWaiting else { return }
        turnEndWaiting = false
        post(Node.reported(.turnEnded))
    }

    func performLanding(_ write: LinkedNode<Node>.Action) {
        carryOutNow(write)
        writesLanded += 1
    }

    func releaseWaiting() {
        while isUp, let first = waitingActions.first, first.after <= writesLanded {
            waitingActions.removeFirst()
            carryOutNow(first.action)
        }
    }

    func carryOutNow(_ action: LinkedNode<Node>.Action) {
        switch action {
        case .inner(let action):
            if let shared = Node.nodeAction(action) { perform(shared) } else { performStore(self, action) }
        case .link(let action, _):
            perform(action)
        case .messageAttempt, .appendsRenumbered:
            break  // the journal; no append is ever refused here
        case .resume:
            resumeNext = true
        }
    }

    private func isDurableWrite(_ action: LinkedNode<Node>.Action) -> Bool {
        switch action {
        case .inner(let action): Node.nodeAction(action)?.isDurableWrite ?? isStoreWrite(action)
        case .link(let action, _): action.isStateWrite
        case .messageAttempt, .appendsRenumbered, .resume: false
        }
    }

    /// As `NodeShell`: a heartbeat goes out past the writes unless a seal waits; the latest wake-up
    /// supersedes any waiting.
    private func passesWrites(_ action: LinkedNode<Node>.Action) -> Bool {
        guard action.passesWrites(waiting: waitingActions.lazy.map(\.action)) else { return false }
        if action.isWakeUp { waitingActions.removeAll { $0.action.isWakeUp } }
        return true
    }
}
