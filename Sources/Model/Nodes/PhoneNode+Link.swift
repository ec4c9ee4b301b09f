import AdminCommands
import LinkProtocol
import LiveMirror
import SyncEngine
import Trace
import WorkoutModel

/// What the link brings the phone: activation and reachability, the watch's messages and queued
/// transfers (merged in batches, acknowledged after their writes), and the live mirror's repair.
extension PhoneNode {
    mutating func linkNotified(
        _ notification: LinkNotification, now: Timestamp, reads: Reads, into out: inout Output
    ) throws(NeedsReads) {
        switch notification {
        case .activated(let peer):
            self.peer = peer
            translate(engine.handle(.linkActivated(now: now)), now: now, into: &out)
        case .contextQueued(let generation):
            // Not dropped: any event hands out an open batch's deferred writes.
            translate(engine.handle(.pushQueued(generation: generation)), now: now, into: &out)
        case .contextRefused(let error):
            out.log(.warning, "push", "push not sent", [("reason", error.description)])
            translate(engine.handle(.pushFailed(reason: error.description, now: now)), now: now, into: &out)
        case .reachabilityChanged(let reachable):
            out.log(.info, "link", "watch reachability changed", [("reachable", "\(reachable)")])
            if reachable { translate(engine.handle(.reachabilityRestored(now: now)), now: now, into: &out) }
            out.node(live.feed(.reachabilityChanged(reachable, now: now)))
        case .messageReceived(let id, let payload, let wantsReply):
            try messageReceived(id: id, payload: payload, wantsReply: wantsReply, now: now, reads: reads, into: &out)
        case .messageDataReceived(let id, let payload, let wantsReply):
            wakeForMessage(into: &out)
            out.node(dataMessages.received(id: id, payload: payload, wantsReply: wantsReply, now: now))
        case .fileReceived(let file):
            fileReceived(file, now: now, into: &out)
        case .fileFinished(let sequence, let error):
            out.node(fileTransfers.finished(sequence: sequence, error))
        case .userInfoReceived(let key, let payload):
            let decoded = decodeWatchMessage(payload, via: "userInfo \(key)", into: &out)
            let loaded = try documentToMerge(decoded, reads: reads, into: &out)
            if batch == nil {
                // The transfers of one read arrive in this turn; the batch ends after them.
                batch = Batch()
                translate(engine.handle(.batchBegan), now: now, into: &out)
                out.node(.callAtEndOfTurn)
            }
            switch decoded {
            case .success(.workoutUpdate(let run, let epoch)):
                let cause = TraceEvent.transferCause(queue: key.queue.description, sequence: key.sequence)
                ingest(run, epoch: epoch, loaded: loaded, via: .userInfo, cause: cause, now: now, into: &out)
            case .success(.requestSync):
                translate(engine.handle(.requestSyncReceived(now: now)), now: now, into: &out)
            case .failure(let error):
                // Done, and failed at the watch (payloadUnsupportedTypes): it must not block the queue.
                batch?.refused.append((key, error.description))
                return
            }
            // Acknowledged at the end of the batch, once its writes are on disk (or refused with a
            // logged reason: either way the transfer is done and must not block the queue).
            batch?.keys.append(key)
        case .launchDropped:
            launchesDropped += 1
            out.log(.notice, "link", "launch dropped: the watch is not linked")
        case .linkEstablished(let peer):
            self.peer = peer
            out.log(.info, "link", "watch linked", [("peer", "\(peer)")])
        case .linkLost(let reason):
            out.log(.info, "link", "watch unlinked", [("reason", reason)])
        case .watchStateChanged(let state):
            lastWatchState = state
            // sessionWatchStateDidChange: sends fail with deviceNotPaired / watchAppNotInstalled
            // (a refused push is retried) until the watch reports it can take them again.
            out.log(.notice, "link", "watch state changed", [("state", state.description)])
        case .contextAcknowledged(let generation):
            translate(engine.handle(.contextAcknowledged(generation: generation, now: now)), now: now, into: &out)
        case .complicationCancelEnded(let sequence, let result):
            complicationCancelEnded(sequence, userInfo: false, result, into: &out)
        case .transferCancelled(let sequence, _, let wasSent):
            complicationCancelEnded(sequence, userInfo: true, .success(wasSent), into: &out)
        case .transferCancelRefused(let sequence, let error):
            complicationCancelEnded(sequence, userInfo: true, .failure(error), into: &out)
        case .transferFailed(let sequence, let complication, _, let error):
            // A complication the watch could not read (sent by an older or newer phoned).
            out.log(
                .warning, "complication", "complication transfer failed at the watch",
                [
                    ("sequence", "\(sequence)"), ("queue", complication ? "complication" : "userInfo"),
                    ("reason", "\(error)"),
                ])
        case .contextReceived, .messageCompleted, .transferFinished, .complicationFinished,
            .launchReceived,
            .peerAppStateChanged:
            break
        }
    }

    /// A message from the watch launches a phone app that is not running, in the background, as iOS
    /// does (after any reads: a step that needs them changes nothing before).
    private mutating func wakeForMessage(into out: inout Output) {
        if !app.isRunning { out.node(app.launch(foreground: false, by: "a message from the watch")) }
    }

    private mutating func messageReceived(
        id: UInt64, payload: [UInt8], wantsReply: Bool, now: Timestamp, reads: Reads, into out: inout Output
    ) throws(NeedsReads) {
        if LiveDriver.isLiveMessage(payload) {
            wakeForMessage(into: &out)
            out.node(live.received(payload, now: now))
            out.node(.link(.answerMessage(id: id, .handled)))
            return
        }
        let decoded = decodeWatchMessage(payload, via: "message \(id)", into: &out)
        let loaded = try documentToMerge(decoded, reads: reads, into: &out)
        wakeForMessage(into: &out)
        switch decoded {
        case .success(.workoutUpdate(let run, let epoch)):
            let cause = TraceEvent.messageCause(sender: peer.map { "\($0)" } ?? "unknown", id: id)
            let outcome = ingest(run, epoch: epoch, loaded: loaded, via: .message, cause: cause, now: now, into: &out)
            reconcileLive(now: now, into: &out)
            let reply = PhoneReply.encoded(outcome: outcome.rawValue, phoneTime: now)
            out.node(.link(.answerMessage(id: id, wantsReply ? .reply(reply) : .handled)))
        case .success(.requestSync):
            translate(engine.handle(.requestSyncReceived(now: now)), now: now, into: &out)
            let reply = PhoneReply.encoded(outcome: "pushed", phoneTime: now)
            out.node(.link(.answerMessage(id: id, wantsReply ? .reply(reply) : .handled)))
        case .failure(let error):
            // WatchConnectivity's name for a payload the receiver cannot take.
            out.node(
                .link(
                    .answerMessage(
                        id: id, .failed(.payloadUnsupportedTypes, reason: "phoned cannot decode it: \(error)"))))
        }
    }

    /// The watch's message; a payload that does not decode is logged and returned as the failure.
    private func decodeWatchMessage(
        _ payload: [UInt8], via channel: String, into out: inout Output
    ) -> Result<WatchToPhoneMessage, DocumentError> {
        Result { () throws(DocumentError) in try DocumentCoder.decode(WatchToPhoneMessage.self, from: payload) }
            .mapError { error in
                out.log(
                    .warning, "ingest", "refused a watch update", [("via", channel), ("reason", error.description)])
                return error
            }
    }

    /// The phone's copy an update merges with, when only its summary is in memory (an old run):
    /// read first. A copy that cannot be read is logged and the update merges with none.
    private func documentToMerge(
        _ decoded: Result<WatchToPhoneMessage, DocumentError>, reads: Reads, into out: inout Output
    ) throws(NeedsReads) -> WorkoutDocument? {
        guard case .success(.workoutUpdate(let run, _)) = decoded, engine.needsDocument(run.id),
            let summary = engine.index[run.id]
        else { return nil }
        do {
            return try reads.workout(run.id, startedAt: summary.startedAt)
        } catch let needs as NeedsReads {
            throw needs
        } catch {
            out.log(
                .warning, "ingest", "could not load the phone's copy to merge",
                [("run", "\(run.id)"), ("reason", "\(error)")])
            return nil
        }
    }

    @discardableResult
    private mutating func ingest(
        _ run: WorkoutDocument, epoch: Timestamp?, loaded: WorkoutDocument?, via channel: SyncEngine.IngestChannel,
        cause: String, now: Timestamp, into out: inout Output
    ) -> SyncEngine.IngestOutcome {
        let (outcome, actions) = engine.ingestFromWatch(run, epoch: epoch, loaded: loaded, via: channel, now: now)
        translate(actions, now: now, into: &out)
        // Logged after the write, so a `merged` line always means the document is on disk: in a
        // batch that is at its end.
        let line = IngestLine(run: run.id, channel: channel, outcome: outcome, version: run.version, cause: cause)
        if batch != nil {
            batch?.lines.append(line)
        } else {
            out.ingestLine(line)
        }
        return outcome
    }

    /// The end of a batch of transfers: its writes and push, then the ingest lines (a `merged` line
    /// means the document is on disk), then one acknowledgement round for all of them.
    mutating func endBatch(now: Timestamp, into out: inout Output) {
        guard let ended = batch else { return }
        batch = nil
        translate(engine.handle(.batchEnded(now: now)), now: now, into: &out)
        persistClock(into: &out)
        for line in ended.lines { out.ingestLine(line) }
        reconcileLive(now: now, into: &out)
        if !ended.keys.isEmpty { out.node(.link(.transfersProcessed(ended.keys))) }
        for (key, reason) in ended.refused { out.node(.link(.transfersRefused([key], reason: reason))) }
    }

    /// Durable repair for the live mirror: every run a flow or cover is on is compared with the
    /// phone's authoritative copy (a run that is gone closes its views).
    mutating func reconcileLive(now: Timestamp, into out: inout Output) {
        let followed = Set(live.mirror.flows.keys).union(live.mirror.covers.keys)
        for runID in followed.sorted() {
            if let run = engine.run(runID) {
                out.node(live.feed(.documentAbsorbed(run, now: now)))
            } else if engine.index[runID] == nil {
                out.node(live.feed(.runRemoved(runID: runID)))
            }
        }
    }
}
