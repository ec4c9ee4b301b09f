import WorkoutModel

/// The wire side: staging and sending, delivery reports, reachability, and what a received frame does.
extension LiveMirror {
    /// Stages `message` for its run (replacing whatever was staged) and sends it if the peer is reachable.
    mutating func stageAndSend(_ message: LiveMessage, into actions: inout [Action]) {
        staging.stage(message)
        if isReachable { sendStaged(message.runID, into: &actions) }
    }

    /// Sends the run's staged frame.
    mutating func sendStaged(_ runID: DocumentID, into actions: inout [Action]) {
        guard let message = staging[runID]?.message else { return }
        actions.append(.send(message, attempt: staging.recordSend(runID)))
    }

    /// The run's open flow, sent again while the peer is reachable (a cover it already shows is not
    /// older, so showing it again changes nothing); a frame already staged goes as it is.
    mutating func resendFlow(_ runID: DocumentID, into actions: inout [Action]) {
        guard isReachable, let view = flows[runID] else { return }
        if staging[runID] == nil { staging.stage(.progress(view.basis)) }
        sendStaged(runID, into: &actions)
    }

    /// A send failed: retry with backoff while the peer is still reachable and the budget lasts.
    mutating func sendFailed(
        _ runID: DocumentID, version: Int, stillReachable: Bool, now: Timestamp, into actions: inout [Action]
    ) {
        guard staging.isStaged(runID, version: version) else { return }
        guard stillReachable, isReachable else {
            actions.append(.log(.sendFailedStaged(run: runID, version: version)))
            return
        }
        if let due = staging.scheduleRetry(runID, now: now), let used = staging[runID]?.retriesUsed {
            actions.append(.log(.sendFailedRetrying(run: runID, version: version, retry: used, at: due)))
        } else {
            actions.append(.log(.sendGivenUp(run: runID, version: version)))
        }
    }

    /// A reachability edge: coming back re-sends every staged frame (one per run, the newest); going away
    /// cancels scheduled retries (the next edge re-sends instead).
    mutating func reachabilityChanged(_ reachable: Bool, into actions: inout [Action]) {
        guard reachable != isReachable else { return }
        isReachable = reachable
        if reachable {
            // A flow open here whose last frame was delivered is sent again: the peer may have
            // restarted since (covers live in memory only), and a cover it already shows is not
            // older, so showing it again changes nothing.
            for (runID, view) in flows.sorted(by: { $0.key < $1.key }) where staging[runID] == nil {
                staging.stage(.progress(view.basis))
            }
            for runID in staging.runIDs { sendStaged(runID, into: &actions) }
        } else {
            staging.cancelRetries()
        }
    }

    /// A frame from the peer: bump the counter past it, arbitrate against a staged frame of the same kind
    /// (anti-rollback), then apply it to the local flow (adopt a later human action) or to the follower
    /// cover.
    ///
    /// A liveEnded and a progress frame are never arbitrated: they are about different flows. A peer's
    /// liveEnded closes the peer's flow, never one open here, so the flow's staged frame must still reach
    /// the peer; and a peer's progress frame is the peer's open flow, which closing the flow here does not
    /// end, so it shows as a cover. (Arbitrating them left a flow open on one side and nothing on the
    /// other: the simulator's seed 1000147.)
    mutating func receive(_ message: LiveMessage, now: Timestamp, into actions: inout [Action]) {
        let runID = message.runID
        version = max(version, message.version)
        if let staged = staging[runID]?.message, Self.isSameKind(staged, message) {
            if message.isNewer(than: staged) {
                staging.drop(runID)
                actions.append(.log(.stagedDropped(run: runID, staged: staged.order, peer: message.order)))
            } else if staged.isNewer(than: message) {
                actions.append(.log(.outrankedByStaged(run: runID, received: message.order, staged: staged.order)))
                return
            }
        }
        switch message {
        case .progress(let frame):
            receiveProgress(frame, into: &actions)
        case .ended(let marker):
            receiveEnded(marker, into: &actions)
        }
    }

    /// Whether both are progress frames or both are liveEnded markers.
    private static func isSameKind(_ first: LiveMessage, _ second: LiveMessage) -> Bool {
        switch (first, second) {
        case (.progress, .progress), (.ended, .ended): true
        case (.progress, .ended), (.ended, .progress): false
        }
    }

    private mutating func receiveProgress(_ frame: LiveProgress, into actions: inout [Action]) {
        let runID = frame.runID
        if let view = flows[runID] {
            guard frame.order.isNewer(than: view.basis.order) else {
                actions.append(.log(.staleWhileDriving(run: runID, received: frame.order, driving: view.basis.order)))
                return
            }
            flows[runID] = LiveRunView(frame)
            actions.append(.log(.adoptedWhileOpen(run: runID, frame)))
            return
        }
        if let ended = endedCovers[runID], !frame.order.isNewer(than: ended) {
            actions.append(.log(.staleAfterEnd(run: runID, received: frame.order, ended: ended)))
            return
        }
        if let cover = covers[runID], !frame.order.isNewer(than: cover.basis.order) {
            actions.append(.log(.staleWhileFollowing(run: runID, received: frame.order, following: cover.basis.order)))
            return
        }
        endedCovers[runID] = nil
        covers[runID] = LiveRunView(frame)
        actions.append(.log(.following(run: runID, frame, coverDismissed: dismissed.contains(runID))))
    }

    private mutating func receiveEnded(_ marker: LiveEnded, into actions: inout [Action]) {
        let runID = marker.runID
        if let view = flows[runID] {
            covers[runID] = nil
            endedCovers[runID] = marker.order
            actions.append(.log(.peerClosedWhileDriving(run: runID, version: marker.version)))
            // The peer shows nothing for the run now: the flow's current frame goes to it again (the
            // frame, not a new one, as a reachability edge sends it), so it follows the flow open here.
            if staging[runID] == nil { stageAndSend(.progress(view.basis), into: &actions) }
            return
        }
        if let cover = covers[runID], !marker.order.isNewer(than: cover.basis.order) {
            actions.append(
                .log(.staleEndWhileFollowing(run: runID, received: marker.order, following: cover.basis.order)))
            return
        }
        if let ended = endedCovers[runID], !marker.order.isNewer(than: ended) {
            return
        }
        covers[runID] = nil
        dismissed.remove(runID)
        endedCovers[runID] = marker.order
        actions.append(.log(.peerClosed(run: runID, version: marker.version)))
    }
}
