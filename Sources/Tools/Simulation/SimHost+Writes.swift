import AdminCommands
import LinkProtocol
import Nodes

/// The write queue and the reads (docs/SIMULATION.md, "The write queue"): a durable write lands
/// 0–3 ms after the one before it; the runner decides what waits for it.
extension SimHost {
    func beginWrite(_ number: UInt64, _ action: LinkedNode<Node>.Action) {
        writesInFlight.append((number, action, onDisk: false))
        if writesInFlight.count == 1 { scheduleLanding() }
    }

    /// The oldest write's landing, unless it is scheduled already.
    private func scheduleLanding() {
        guard let first = writesInFlight.first, scheduledLanding != first.number else { return }
        scheduledLanding = first.number
        world.schedule(after: world.writeDelay(), .writeLanded(side, life: life, number: first.number))
    }

    /// Write `number` lands, if it is still in flight (`settle` may have landed it first).
    func writeLanded(life: UInt64, number: UInt64) {
        guard life == self.life, isUp else { return }
        if scheduledLanding == number { scheduledLanding = nil }
        if writesInFlight.first?.number == number { landOldest() }
        scheduleLanding()
    }

    /// Until the workload's admin request is answered, the writes in flight land at once (a fast
    /// disk) and the turns the runner asks for come at once, so the workload reads the reply when
    /// its call returns, as it was written to. What is still in flight then lands in its time: a
    /// crash right after the reply (`Simulator.phonectl`) loses it, and only it.
    func settle(_ request: AdminRequestID) {
        while isUp, let runner, replies[request] == nil {
            if !writesInFlight.isEmpty {
                landOldest()
            } else if runner.hasWork {
                turn(life: life)
            } else {
                break
            }
        }
        scheduleLanding()
    }

    /// The oldest write in flight reaches the disk, or fails: then none behind it does, and the node
    /// hears of it (it must exit, never retry).
    private func landOldest() {
        guard let runner else { return }
        let write = writesInFlight.removeFirst()
        guard !failNextWrite else {
            failNextWrite = false
            writesInFlight = []
            world.record(side, "durable write fails (EIO)")
            runner.landed(through: write.number, failure: "EIO (simulated)")
            checkRunaway()
            if isUp { keptRunningAfterFailure = "the \(side) kept running after a failed durable write" }
            return
        }
        if !write.onDisk { apply(write.action) }
        runner.landed(through: write.number)
        checkRunaway()
    }

    /// What the node asked for, once every write begun is on the disk.
    func read(_ needs: NeedsReads, link: LinkEngine) -> Reads {
        for index in writesInFlight.indices where !writesInFlight[index].onDisk {
            writesInFlight[index].onDisk = true
            apply(writesInFlight[index].action)
        }
        return Store.read(self, needs)
    }
}
