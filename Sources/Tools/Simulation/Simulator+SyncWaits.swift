import AdminCommands
import Nodes

/// `watchctl wait` in the workload. What is checked: once the watch answers that it is synced, the
/// phone's documents hold every edit the watch alone made to a set before the wait was asked (that
/// edit, or one acknowledged since). A refusal at the timeout is an allowed answer.
extension Simulator {
    struct PendingWait {
        /// The watch's life when it asked: a restart owes no answer.
        var life: UInt64
        /// How many edits each set had acknowledged when the wait was asked.
        var editCounts: [Checker.SetKey: Int]
    }

    func waitForSync() {
        let pending = PendingWait(life: watch.life, editCounts: checker.editCounts)
        let reply = watchctl(.waitSynced(milliseconds: world.pick(0...3) * 1_000))
        guard watch.isUp else { return }
        if let reply {
            checkWait(reply, pending)
        } else {
            pendingWaits[AdminRequestID(lastRequest)] = pending
        }
    }

    /// The waits answered since.
    func harvestWaits() {
        for (request, pending) in pendingWaits.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if pending.life != watch.life {
                pendingWaits[request] = nil
            } else if let reply = watch.replies.removeValue(forKey: request) {
                pendingWaits[request] = nil
                checkWait(reply, pending)
            }
        }
    }

    private func checkWait(_ reply: AdminResponse, _ pending: PendingWait) {
        guard reply.status == .ok else { return }
        // A file another device just put an older copy in lacks what the phone has until it sees it.
        let replaced = phone.store.olderCopies
        for missing in checker.editsMissing(phone: phone, since: pending.editCounts, replaced: replaced) {
            dataViolation("after the watch answered wait with synced: \(missing)")
        }
    }
}
