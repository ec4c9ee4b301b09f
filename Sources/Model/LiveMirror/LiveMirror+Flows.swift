import WorkoutModel

/// The local side: opening and driving flows, closing them, crossing timers, durable repair.
extension LiveMirror {
    /// Opens the run's flow here and broadcasts its first frame.
    mutating func openFlow(
        _ run: WorkoutDocument, logID: DocumentID?, settings: Settings, now: Timestamp, into actions: inout [Action]
    ) {
        let logIndex: Int
        if let logID {
            guard let index = run.logs.firstIndex(where: { $0.id == logID }) else {
                actions.append(.refused(runID: run.id, .unknownLog(logID)))
                return
            }
            logIndex = index
        } else {
            logIndex = run.position(ofStateIndex: run.firstUnfinishedSetIndex)?.logIndex ?? run.logs.count - 1
        }
        guard run.logs.indices.contains(logIndex), !run.logs[logIndex].sets.isEmpty else {
            actions.append(.refused(runID: run.id, .nothingToRun))
            return
        }
        let log = run.logs[logIndex]
        let start = Self.firstUnfinishedSet(of: log, in: run) ?? log.sets.count
        let flow = RunFlow.opening(setCount: log.sets.count, timings: LiveTimings(settings), at: start, now: now)
        let frame = publish(runID: run.id, logID: log.id, exerciseName: log.exerciseName, flow: flow, into: &actions)
        actions.append(.log(.driving(run: run.id, frame)))
    }

    /// Applies a human action to an open flow and broadcasts the result, or refuses it.
    mutating func humanAction(
        _ runID: DocumentID, _ name: String, now: Timestamp, into actions: inout [Action],
        _ apply: (inout RunFlow) -> Bool
    ) {
        guard var view = flows[runID] else {
            actions.append(.refused(runID: runID, .flowNotOpen))
            return
        }
        guard apply(&view.flow) else {
            flows[runID] = view
            actions.append(.refused(runID: runID, .notInPhase(action: name, phase: view.flow.position.phase)))
            return
        }
        let frame = publish(
            runID: runID, logID: view.basis.logID, exerciseName: view.basis.exerciseName, flow: view.flow,
            into: &actions)
        actions.append(.log(.moved(run: runID, frame)))
    }

    /// Closes the run's flow here and broadcasts liveEnded (which replaces whatever is staged).
    mutating func closeFlow(_ runID: DocumentID, now: Timestamp, into actions: inout [Action]) {
        guard flows.removeValue(forKey: runID) != nil else {
            actions.append(.refused(runID: runID, .flowNotOpen))
            return
        }
        covers[runID] = nil
        version += 1
        stageAndSend(.ended(LiveEnded(runID: runID, version: version, anchor: now)), into: &actions)
        actions.append(.log(.closed(run: runID, version: version)))
    }

    /// Stamps the flow's state with the next version, records it as the flow's basis, stages and sends it.
    private mutating func publish(
        runID: DocumentID, logID: DocumentID, exerciseName: String, flow: RunFlow, into actions: inout [Action]
    ) -> LiveProgress {
        version += 1
        let frame = LiveProgress(
            runID: runID, logID: logID, exerciseName: exerciseName, position: flow.position,
            setCount: flow.setCount, timings: flow.timings, version: version)
        flows[runID] = LiveRunView(frame)
        stageAndSend(.progress(frame), into: &actions)
        return frame
    }

    /// Sends due retries, then crosses every elapsed boundary of every flow and cover, silently: an
    /// auto-advance is never sent, only logged (once per run, however many boundaries it caught up on).
    mutating func tick(now: Timestamp, into actions: inout [Action]) {
        if isReachable {
            for runID in staging.dueRetries(at: now) {
                sendStaged(runID, into: &actions)
            }
        }
        for runID in flows.keys.sorted() {
            if let crossed = flows[runID]?.flow.advance(to: now), crossed > 0, let view = flows[runID] {
                actions.append(
                    .log(
                        .crossed(
                            run: runID, view.flow.position, setCount: view.flow.setCount, role: .driving,
                            crossed: crossed)))
            }
        }
        for runID in covers.keys.sorted() {
            if let crossed = covers[runID]?.flow.advance(to: now), crossed > 0, isCoverShown(runID),
                let view = covers[runID]
            {
                actions.append(
                    .log(
                        .crossed(
                            run: runID, view.flow.position, setCount: view.flow.setCount, role: .following,
                            crossed: crossed)))
            }
        }
    }

    /// Durable repair: when the document shows more of an exercise done than the flow or cover for it,
    /// jump forward to the first unfinished set's work page (finish when the exercise or the run is
    /// done); never backward, and no frame is sent.
    ///
    /// The document's position is read per exercise: the first set of the view's log that is not done
    /// (none when the log is resolved or the run completed). When exercises are done in order this is
    /// exactly `currentStateIndex` (`position(ofStateIndex:)` lands in the view's log, or past it when
    /// the log is done); unlike the run-wide index it still moves an exercise opened out of order.
    mutating func repair(from run: WorkoutDocument, now: Timestamp, into actions: inout [Action]) {
        for role in [LiveScreen.Role.driving, .following] {
            let current = role == .driving ? flows[run.id] : covers[run.id]
            guard var view = current,
                let log = run.logs.first(where: { $0.id == view.basis.logID }),
                log.sets.count == view.flow.setCount
            else { continue }
            let firstUnfinished = Self.firstUnfinishedSet(of: log, in: run)
            guard view.flow.jumpForward(toFirstUnfinishedSet: firstUnfinished, at: now) else { continue }
            if role == .driving { flows[run.id] = view } else { covers[run.id] = view }
            actions.append(
                .log(.repairedForward(run: run.id, view.flow.position, setCount: view.flow.setCount, role: role)))
        }
    }

    /// Forgets everything about a deleted or pruned run.
    mutating func removeRun(_ runID: DocumentID, into actions: inout [Action]) {
        let known = flows[runID] != nil || covers[runID] != nil || staging[runID] != nil
        flows[runID] = nil
        covers[runID] = nil
        staging.drop(runID)
        dismissed.remove(runID)
        endedCovers[runID] = nil
        if known { actions.append(.log(.removed(run: runID))) }
    }

    /// The first set of `log` that is not done, or nil when the log is resolved, fully done, or the run
    /// is completed.
    static func firstUnfinishedSet(of log: ExerciseLog, in run: WorkoutDocument) -> Int? {
        guard run.status != .completed, !log.isResolved else { return nil }
        return log.sets.firstIndex(where: { !$0.isDone })
    }
}
