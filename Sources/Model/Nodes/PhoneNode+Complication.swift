import AdminCommands
import LinkProtocol
import WorkoutModel

/// What a `complication cancel` waits for: a complication transfer's sequence, or an ordinary
/// userInfo transfer's.
struct ComplicationCancel: Hashable, Sendable {
    var sequence: UInt64
    var userInfo: Bool
}

/// `complication show --json`: today's budget and the outstanding transfers to the watch.
package struct ComplicationStatus: Codable, Equatable, Sendable {
    /// `remainingComplicationUserInfoTransfers`: 0 while the watch reports its complication off the face.
    package var remaining: Int
    package var perDay: Int
    package var complicationEnabled: Bool
    /// The complication outbox (the newest tagged current), then ordinary userInfo transfers.
    package var outstanding: [OutstandingTransfer]
}

extension PhoneNode {
    /// `complication push`: through the complication outbox while today's budget lasts (spent now,
    /// given back if the link refuses), else as ordinary userInfo; answered once the link has it on
    /// disk (`complicationQueued`).
    mutating func pushComplication(
        _ text: String, request: AdminRequestID, facts: ShellFacts, now: Timestamp, into out: inout Output
    ) {
        let asCurrent = remainingComplications(facts, now: now) > 0
        if asCurrent { complicationBudget.spend(at: now) }
        let order = complicationBudget.nextOrder(at: now)
        out.actions.append(.store(.persistComplicationBudget(complicationBudget)))
        let payload = ComplicationPayload(text: text, sentAt: now, order: order).encoded()
        out.node(.link(.transferComplication(payload, asCurrent: asCurrent, request)))
    }

    /// The link took the complication (or refused it): the admin request's reply.
    mutating func complicationQueued(
        _ request: AdminRequestID, asCurrent: Bool, _ result: Result<UInt64, ReadFailure>, watchState: WatchState,
        now: Timestamp, into out: inout Output
    ) {
        let outcome: AdminOutcome
        switch result {
        case .success(let sequence):
            let pushed = AdminReply.ComplicationPushed(
                sentAs: asCurrent ? "complication" : "userInfo", sequence: sequence,
                remaining: complicationBudget.remaining(
                    at: now, perDay: complicationsPerDay, complicationEnabled: watchState.isComplicationEnabled))
            out.log(
                .info, "complication", "complication queued", [("sentAs", pushed.sentAs), ("sequence", "\(sequence)")])
            outcome = .output(
                text: "queued as \(pushed.sentAs) \(sequence); \(pushed.remaining) complication transfers left today",
                json: AdminOutcome.json(pushed))
        case .failure(let failure):
            if asCurrent {
                complicationBudget.refund(at: now)
                out.actions.append(.store(.persistComplicationBudget(complicationBudget)))
            }
            out.log(
                .notice, "admin", "refused admin request",
                [("command", "complication push"), ("reason", failure.description)])
            outcome = .refused(failure.description)
        }
        out.node(.reply(request, outcome.response))
    }

    /// `complication show`.
    func complicationStatus(_ facts: ShellFacts, now: Timestamp, reads: Reads) throws(NeedsReads) -> AdminOutcome {
        guard let transfers = reads.outstandingTransfers else { throw NeedsReads(outstandingTransfers: true) }
        let status = ComplicationStatus(
            remaining: remainingComplications(facts, now: now), perDay: complicationsPerDay,
            complicationEnabled: facts.link.watchState.isComplicationEnabled, outstanding: transfers)
        var lines = [
            "\(status.remaining) of \(status.perDay) complication transfers left today"
                + (status.complicationEnabled ? "" : " (the complication is not on the watch face)")
        ]
        lines += transfers.map { transfer in
            let kind =
                transfer.isCurrentComplicationInfo.map { $0 ? "complication (current)" : "complication" } ?? "userInfo"
            return "\(transfer.sequence)  \(kind)  \(transfer.bytes) bytes"
                + (transfer.sent ? "  (sent, awaiting ack)" : "")
        }
        return .output(text: lines.joined(separator: "\n"), json: AdminOutcome.json(status))
    }

    /// `complication cancel`: answered when the link says how it went (`complicationCancelEnded`).
    mutating func cancelComplication(
        _ sequence: UInt64, userInfo: Bool, request: AdminRequestID, into out: inout Output
    ) {
        cancelling.wait(request, for: ComplicationCancel(sequence: sequence, userInfo: userInfo))
        out.node(.link(userInfo ? .cancelTransfer(sequence: sequence) : .cancelComplication(sequence: sequence)))
    }

    /// The link's answer to a `complication cancel`.
    mutating func complicationCancelEnded(
        _ sequence: UInt64, userInfo: Bool, _ result: Result<Bool, LinkError>, into out: inout Output
    ) {
        guard let request = cancelling.answered(ComplicationCancel(sequence: sequence, userInfo: userInfo)) else {
            return
        }
        let outcome: AdminOutcome
        switch result {
        case .success(let wasSent):
            out.log(.notice, "complication", "complication transfer cancelled", [("sequence", "\(sequence)")])
            outcome = AdminOutcome.cancelled(sequence, wasSent: wasSent, peer: "watch")
        case .failure(let error):
            out.log(
                .notice, "admin", "refused admin request",
                [("command", "complication cancel \(sequence)"), ("reason", error.description)])
            outcome = .refused(error.description)
        }
        out.node(.reply(request, outcome.response))
    }

    private func remainingComplications(_ facts: ShellFacts, now: Timestamp) -> Int {
        complicationBudget.remaining(
            at: now, perDay: complicationsPerDay, complicationEnabled: facts.link.watchState.isComplicationEnabled)
    }
}
