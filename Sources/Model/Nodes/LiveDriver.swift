import FoundationEssentials
import LinkProtocol
import LiveMirror
import WorkoutModel

/// The live-run mirror as both nodes drive it: owns the `LiveMirror` engine and turns its actions
/// into node actions — frames as messages (never queued, never written to disk, their outcomes fed
/// back), one wake-up timer for its boundaries and retries, and the version floor kept durable so a
/// restart never mints below it.
package struct LiveDriver: Sendable {
    package private(set) var mirror: LiveMirror
    /// Frames this side put on the wire, by kind (progress / ended), for status and tests.
    package private(set) var framesSent: [String: Int] = [:]
    package private(set) var framesReceived = 0
    private var persistedVersion: Int

    /// The driver at start-up, with the version last persisted (`<state>/live-version`), if any.
    package init(now: Timestamp, persistedVersion: Int?) {
        self.persistedVersion = persistedVersion ?? 0
        mirror = LiveMirror(versionFloor: LiveMirror.versionFloor(startingAt: now, persisted: persistedVersion))
    }

    /// Whether `payload` is a live frame (`kind` progress or ended) rather than another message.
    package static func isLiveMessage(_ payload: [UInt8]) -> Bool {
        let kind = MessageKind.of(payload)
        return kind == "progress" || kind == "ended"
    }

    /// Feeds an event; returns the node actions and what the engine refused (for the CLI).
    package mutating func handle(_ event: LiveMirror.Event) -> (actions: [NodeAction], refusals: [LiveRefusal]) {
        var actions: [NodeAction] = []
        var refusals: [LiveRefusal] = []
        for action in mirror.handle(event) {
            switch action {
            case .send(let message, let attempt):
                let kind: String
                switch message {
                case .progress: kind = "progress"
                case .ended: kind = "ended"
                }
                framesSent[kind, default: 0] += 1
                let purpose = MessagePurpose.live(runID: message.runID, version: message.version, attempt: attempt)
                actions.append(.link(.sendMessage(message.encoded(), wantsReply: false, run: nil, purpose)))
            case .scheduleWakeUp(let at):
                actions.append(.armTimer(.live, at: at))
            case .refused(_, let refusal):
                refusals.append(refusal)
            case .log(let line):
                actions.append(.log(LogLine(.info, "live", line.description)))
            }
        }
        if mirror.version > persistedVersion {
            persistedVersion = mirror.version
            actions.append(.persistLiveVersion(mirror.version))
        }
        return (actions, refusals)
    }

    /// Feeds an event whose refusals nobody reads (they are the engine's own to log).
    package mutating func feed(_ event: LiveMirror.Event) -> [NodeAction] { handle(event).actions }

    /// A live frame arrived from the peer.
    package mutating func received(_ payload: [UInt8], now: Timestamp) -> [NodeAction] {
        framesReceived += 1
        return feed(.payloadReceived(payload, now: now))
    }

    /// A frame this side sent ended.
    package mutating func sendEnded(
        runID: DocumentID, version: Int, attempt: Int, _ outcome: MessageOutcome, stillReachable: Bool, now: Timestamp
    ) -> [NodeAction] {
        switch outcome {
        case .replied, .delivered:
            return feed(.sendSucceeded(runID: runID, version: version))
        case .failed(let error):
            let line = LogLine(
                .info, "live", "live frame not delivered",
                [("run", "\(runID)"), ("version", "\(version)"), ("attempt", "\(attempt)"), ("reason", "\(error)")])
            return [.log(line)]
                + feed(.sendFailed(runID: runID, version: version, stillReachable: stillReachable, now: now))
        }
    }

    /// What `live show` prints: one line per screen, computed now.
    package func show(now: Timestamp) -> AdminOutcome {
        let screens = mirror.screen(now: now)
        let text = screens.isEmpty ? "no live run" : screens.map(\.description).joined(separator: "\n")
        let rows = screens.map { screen in
            LiveScreenRow(
                runID: screen.runID.rawValue, logID: screen.logID.rawValue, exercise: screen.exerciseName,
                role: screen.role.rawValue, phase: screen.phase.rawValue, set: screen.setNumber,
                setCount: screen.setCount, phaseAnchor: screen.phaseAnchor.iso8601,
                remainingSeconds: screen.remaining.map { Double($0.wholeMicroseconds) / 1_000_000 },
                version: screen.version)
        }
        return .output(text: text, json: AdminOutcome.json(rows))
    }
}

/// One row of `live show --json` (docs/CLI.md).
package struct LiveScreenRow: Codable, Sendable {
    package var runID: String
    package var logID: String
    package var exercise: String
    /// `driving` (the flow is open here) or `following` (the peer's broadcast, as a cover).
    package var role: String
    package var phase: String
    /// 1-based set number within the exercise.
    package var set: Int
    package var setCount: Int
    package var phaseAnchor: String
    /// Seconds left in a timed phase (ready, rest) at the moment of the call; absent for work/finish.
    package var remainingSeconds: Double?
    package var version: Int
}
