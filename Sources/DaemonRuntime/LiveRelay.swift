import Foundation
import LinkProtocol
import LinkRuntime
import LiveMirror
import WorkoutModel

/// The live-run mirror's shell, shared by both daemons: owns the `LiveMirror` engine on the event
/// loop, sends its frames with `sendMessage` (never queued, never written to disk), feeds send
/// outcomes, reachability and received frames back, and keeps one wake-up timer for its boundaries
/// and retries. Loop-only.
package final class LiveRelay: @unchecked Sendable {
    // @unchecked: every member is used only on the link's event loop thread.
    package private(set) var mirror: LiveMirror
    private let link: LinkEndpoint
    private let logger: Logger
    private var timer: TimerID?
    /// Frames this side put on the wire, by kind (progress / ended), for status and tests.
    package private(set) var framesSent: [String: Int] = [:]
    package private(set) var framesReceived = 0
    /// Where the last version minted or received is kept (`<state>/live-version`), so the floor of the
    /// next start is never below it.
    private let versionFile: String
    private var persistedVersion: Int

    package init(link: LinkEndpoint, logger: Logger, now: Timestamp, versionFile: String) throws {
        self.link = link
        self.logger = logger
        self.versionFile = versionFile
        let persisted = try AtomicFile.read(versionFile).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        persistedVersion = persisted ?? 0
        mirror = LiveMirror(versionFloor: LiveMirror.versionFloor(startingAt: now, persisted: persisted))
    }

    /// Whether `payload` is a live frame (`kind` progress or ended) rather than another message.
    package static func isLiveMessage(_ payload: [UInt8]) -> Bool {
        struct Probe: Decodable { var kind: String? }
        let kind = try? JSONDecoder().decode(Probe.self, from: Data(payload)).kind
        return kind == "progress" || kind == "ended"
    }

    /// Feeds an event and carries out the actions; returns what the engine refused (for the CLI).
    @discardableResult
    package func handle(_ event: LiveMirror.Event) -> [LiveRefusal] {
        var refusals: [LiveRefusal] = []
        for action in mirror.handle(event) {
            switch action {
            case .send(let message, let attempt):
                send(message, attempt: attempt)
            case .scheduleWakeUp(let at):
                if let timer { link.loop.cancelTimer(timer) }
                let delay = Timestamp.current.duration(to: at)
                timer = link.loop.scheduleTimer(after: max(.zero, delay)) { [unowned self] in
                    timer = nil
                    handle(.tick(now: .current))
                }
            case .refused(_, let refusal):
                refusals.append(refusal)
            case .log(let line):
                logger.info(line, component: "live")
            }
        }
        persistVersion()
        return refusals
    }

    /// Keeps the floor monotone across restarts; a failed write is logged (the clock floor still holds).
    private func persistVersion() {
        guard mirror.version > persistedVersion else { return }
        do {
            try AtomicFile.write(Array("\(mirror.version)".utf8), to: versionFile)
            persistedVersion = mirror.version
        } catch {
            logger.warning("live version not persisted", ["reason": "\(error)"], component: "live")
        }
    }

    /// A live frame arrived from the peer.
    package func received(_ payload: [UInt8]) {
        framesReceived += 1
        handle(.payloadReceived(payload, now: .current))
    }

    private func send(_ message: LiveMessage, attempt: Int) {
        let kind: String
        switch message {
        case .progress: kind = "progress"
        case .ended: kind = "ended"
        }
        framesSent[kind, default: 0] += 1
        let runID = message.runID
        let version = message.version
        link.sendMessage(message.encoded(), wantsReply: false) { [unowned self] outcome in
            switch outcome {
            case .replied, .delivered:
                handle(.sendSucceeded(runID: runID, version: version))
            case .failed(let error):
                logger.info(
                    "live frame not delivered", ["run": runID, "version": version, "attempt": attempt, "reason": error],
                    component: "live")
                handle(
                    .sendFailed(
                        runID: runID, version: version, stillReachable: link.status().reachable, now: .current))
            }
        }
    }

    /// What `live show` prints: one line per screen, computed now.
    package func show(now: Timestamp) -> (text: String, json: String) {
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
        let json = String(decoding: DocumentCoder.encodeCompact(rows), as: UTF8.self)
        return (text, json)
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

extension Timestamp {
    /// The wall clock now, to the microsecond (shells only: pure code receives time in events).
    package static var current: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
}
