import WorkoutModel

/// The live-run mirror's pure decision core (seed 000 §3, seed 001 S2/S3 and the live-mirror delivery
/// invariants): this device's exercise flows, the peer's broadcasts shown as follower covers, the shared
/// version counter, and the staged outbound frames with their retries, behind one `handle(_:) -> [Action]`.
///
/// Per run, a device is in one of these states:
/// - `idle`: no flow, no cover. → `driving` on `flowOpened`; → `following` on a newer peer frame.
/// - `driving`: the run's flow is open here (`flows`); human actions mint frames. → `idle` on
///   `flowClosed` (sends liveEnded) or `runRemoved`. A newer peer frame is adopted into the flow (both
///   devices drove the same run: the later human action wins) and keeps it `driving`; so does the peer's
///   liveEnded, which sends the flow's current frame again so the peer follows it.
/// - `following`: the peer's latest frame is shown as a cover (`covers`), timers run locally from its
///   anchor. → `hidden` on `coverDismissed`; → `driving` on `flowOpened`; → `idle` on the peer's
///   liveEnded or `runRemoved`.
/// - `hidden`: a cover is kept up to date but not shown (dismissed). → `idle` on the peer's liveEnded
///   (which also forgets the dismissal) or `runRemoved`; → `driving` on `flowOpened`.
///
/// Only human actions produce frames (open, complete set, skip countdown, skip rest, close); timed
/// crossings (`RunFlow.advance`) never do. Durable repair (`documentAbsorbed`) moves a flow or cover
/// forward to what the document shows, never backward, and sends nothing.
///
/// The shell (each daemon) MUST:
/// - build the engine with `LiveMirror(versionFloor: LiveMirror.versionFloor(startingAt: now, persisted:))`
///   and persist `version` whenever it grows, so a restarted daemon's frames outrank every one before;
/// - feed `reachabilityChanged` on every change of the link's `isReachable`, and `true` again when the
///   session (re)activates;
/// - perform `send` over the message channel only (`message.encoded()`), and report exactly one
///   `sendSucceeded` or `sendFailed` per send (with the link's reachability at the time of the failure);
///   never queue or persist a live message;
/// - keep one wake-up timer: each `scheduleWakeUp` replaces the previous one; when it fires, feed
///   `tick(now:)`;
/// - on a person completing a set in a live flow, feed `setCompleted` BEFORE feeding the document that
///   carries that set's durable write to `documentAbsorbed` (otherwise repair has already moved the flow
///   to the next set's work page);
/// - feed every workout document it stores or receives to `documentAbsorbed`, and `runRemoved` when a
///   run is deleted or pruned;
/// - show `refused` to the person who asked; nothing changed.
package struct LiveMirror: Sendable {
    /// Facts fed into the engine, each with the wall-clock time it happened where time matters.
    package enum Event: Equatable, Sendable {
        /// The person opened the run's exercise flow here: `logID`'s exercise, or when nil the exercise
        /// of the run's first unfinished set. It starts at the ready countdown of the exercise's first
        /// unfinished set (at `finish` when none is left), timed by `settings`.
        case flowOpened(run: WorkoutDocument, logID: DocumentID?, settings: Settings, now: Timestamp)
        /// The person completed the flow's current set (the durable write is the shell's business).
        case setCompleted(runID: DocumentID, now: Timestamp)
        /// The person cut the ready countdown short.
        case countdownSkipped(runID: DocumentID, now: Timestamp)
        /// The person cut the rest short.
        case restSkipped(runID: DocumentID, now: Timestamp)
        /// The person left the run's flow here.
        case flowClosed(runID: DocumentID, now: Timestamp)
        /// The person dismissed the follower cover for the run.
        case coverDismissed(runID: DocumentID)
        /// A live message arrived from the peer.
        case messageReceived(LiveMessage, now: Timestamp)
        /// Raw live-message bytes arrived from the peer (decoded here; undecodable ones are logged and dropped).
        case payloadReceived([UInt8], now: Timestamp)
        /// The send of the run's frame with `version` reached the peer.
        case sendSucceeded(runID: DocumentID, version: Int)
        /// The send of the run's frame with `version` failed; `stillReachable` is the link's reachability then.
        case sendFailed(runID: DocumentID, version: Int, stillReachable: Bool, now: Timestamp)
        /// The peer became reachable (or the session activated) or stopped being reachable.
        case reachabilityChanged(Bool, now: Timestamp)
        /// A workout document was stored or received here (the durable state, for repair).
        case documentAbsorbed(WorkoutDocument, now: Timestamp)
        /// The run was deleted or pruned: forget its flow, cover and staged frame.
        case runRemoved(runID: DocumentID)
        /// The peer can show the run again (it came back into the phone's push, or reached the peer
        /// after its frame did): a flow open here is sent again.
        case peerShowsRunAgain(runID: DocumentID)
        /// The wake-up timer fired.
        case tick(now: Timestamp)
    }

    /// What the shell must do, in order.
    package enum Action: Equatable, Sendable {
        /// Send over the message channel (reachable-only); report the outcome by run ID and version.
        /// `attempt` counts this frame's sends, from 1.
        case send(LiveMessage, attempt: Int)
        /// Feed `tick` at this instant (replaces any earlier wake-up).
        case scheduleWakeUp(at: Timestamp)
        /// Tell the person their action was refused; nothing changed.
        case refused(runID: DocumentID, LiveRefusal)
        case log(LiveDiagnostic)
    }

    /// Runs whose flow is open here (driving), by run ID.
    package internal(set) var flows: [DocumentID: LiveRunView] = [:]
    /// The peer's latest frame per run it drives (shown unless open here or dismissed).
    package internal(set) var covers: [DocumentID: LiveRunView] = [:]
    /// Runs whose cover the person dismissed; forgotten when the peer ends that run's flow.
    package internal(set) var dismissed: Set<DocumentID> = []
    /// The order of the last liveEnded received per run, so a late progress frame cannot revive the cover.
    package internal(set) var endedCovers: [DocumentID: LiveOrder] = [:]
    /// Staged outbound frames and their retries.
    package internal(set) var staging = LiveStaging()
    /// The shared version counter: the last version minted or received.
    package internal(set) var version: Int
    /// Whether the peer is reachable (the link's `isReachable`).
    package internal(set) var isReachable = false
    /// The wake-up last asked of the shell and not yet fired.
    package internal(set) var scheduledWakeUp: Timestamp?

    /// An engine whose first frame is stamped `versionFloor + 1`.
    package init(versionFloor: Int = 0) {
        precondition(versionFloor >= 0, "a version floor is not negative")
        version = versionFloor
    }

    /// The version floor for an engine started at `now`: milliseconds since the epoch, and never below
    /// `persisted`, the last version the previous life minted or received. A restarted daemon then
    /// outranks everything before it even when its clock stepped back or a peer's ran ahead (versions
    /// grow by one per human action, far slower than one per millisecond), and bumping past received
    /// versions keeps both sides in step.
    package static func versionFloor(startingAt now: Timestamp, persisted: Int? = nil) -> Int {
        max(Int(max(0, now.microsecondsSinceEpoch / 1_000)), persisted ?? 0)
    }

    /// Handles one event and returns the complete list of actions, in order.
    package mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .flowOpened(let run, let logID, let settings, let now):
            openFlow(run, logID: logID, settings: settings, now: now, into: &actions)
        case .setCompleted(let runID, let now):
            humanAction(runID, "complete a set", now: now, into: &actions) { $0.completeSet(at: now) }
        case .countdownSkipped(let runID, let now):
            humanAction(runID, "skip the countdown", now: now, into: &actions) { $0.skipCountdown(at: now) }
        case .restSkipped(let runID, let now):
            humanAction(runID, "skip the rest", now: now, into: &actions) { $0.skipRest(at: now) }
        case .flowClosed(let runID, let now):
            closeFlow(runID, now: now, into: &actions)
        case .coverDismissed(let runID):
            dismissed.insert(runID)
            actions.append(.log(.coverDismissed(run: runID)))
        case .messageReceived(let message, let now):
            receive(message, now: now, into: &actions)
        case .payloadReceived(let bytes, let now):
            do throws(DocumentError) {
                receive(try LiveMessage.decode(bytes), now: now, into: &actions)
            } catch {
                actions.append(.log(.undecodableMessage(error)))
            }
        case .sendSucceeded(let runID, let version):
            if staging.isStaged(runID, version: version) { staging.drop(runID) }
        case .sendFailed(let runID, let version, let stillReachable, let now):
            sendFailed(runID, version: version, stillReachable: stillReachable, now: now, into: &actions)
        case .reachabilityChanged(let reachable, _):
            reachabilityChanged(reachable, into: &actions)
        case .documentAbsorbed(let run, let now):
            repair(from: run, now: now, into: &actions)
        case .runRemoved(let runID):
            removeRun(runID, into: &actions)
        case .peerShowsRunAgain(let runID):
            resendFlow(runID, into: &actions)
        case .tick(let now):
            scheduledWakeUp = nil
            tick(now: now, into: &actions)
        }
        scheduleNextWakeUp(into: &actions)
        return actions
    }

    /// Asks for a wake-up at the earliest pending deadline (a retry, or a shown timer's end) unless that
    /// one is already scheduled.
    private mutating func scheduleNextWakeUp(into actions: inout [Action]) {
        var deadlines = flows.values.compactMap(\.flow.phaseEnd)
        deadlines += covers.filter { isCoverShown($0.key) }.compactMap(\.value.flow.phaseEnd)
        if isReachable, let retry = staging.nextRetry { deadlines.append(retry) }
        guard let next = deadlines.min() else { return }
        if next != scheduledWakeUp {
            scheduledWakeUp = next
            actions.append(.scheduleWakeUp(at: next))
        }
    }

    /// Whether the peer's cover for `runID` is on screen: there is one, the run is not open here, and the
    /// person has not dismissed it.
    package func isCoverShown(_ runID: DocumentID) -> Bool {
        covers[runID] != nil && flows[runID] == nil && !dismissed.contains(runID)
    }
}

/// One run as this device sees it: the frame that set it up and where time and repair have moved it since.
package struct LiveRunView: Hashable, Sendable {
    /// The last frame minted here or adopted from the peer: the exercise, and the ordering key (the
    /// version and anchor of that human action, which later crossings and repairs do not change).
    package var basis: LiveProgress
    /// Where the flow is: `basis`'s position, advanced by elapsed time and moved forward by repair.
    package var flow: RunFlow

    package init(_ frame: LiveProgress) {
        basis = frame
        flow = frame.flow
    }
}

/// Why a person's live-flow action was refused. Nothing changed.
package enum LiveRefusal: Hashable, Sendable, CustomStringConvertible {
    /// The run has no log with this ID.
    case unknownLog(DocumentID)
    /// The run has no sets to drive.
    case nothingToRun
    /// The run's flow is not open on this device.
    case flowNotOpen
    /// The action does not apply to the flow's current phase.
    case notInPhase(action: String, phase: LivePhase)

    package var description: String {
        switch self {
        case .unknownLog(let log): "the run has no exercise log \(log)"
        case .nothingToRun: "the run has no sets"
        case .flowNotOpen: "the run's flow is not open here"
        case .notInPhase(let action, let phase): "cannot \(action) during \(phase)"
        }
    }
}
