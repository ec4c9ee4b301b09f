import LiveMirror
import TestSupport
import WorkoutModel

/// A fixed instant tests count from: 2026-11-29T12:00:00Z.
let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!

/// The instant `seconds` after `t0`.
func at(_ seconds: Int) -> Timestamp { t0.advanced(by: .seconds(seconds)) }

/// The instant `milliseconds` after `t0`.
func atMs(_ milliseconds: Int) -> Timestamp { t0.advanced(by: .milliseconds(milliseconds)) }

/// A deterministic document ID: `n` in the last bytes.
func id(_ n: Int) -> DocumentID {
    var bytes = [UInt8](repeating: 0xAB, count: 16)
    bytes[10] = 0x55  // keep clear of the 4 hex digits run-derived log IDs replace
    bytes[12] = UInt8((n >> 24) & 0xFF)
    bytes[13] = UInt8((n >> 16) & 0xFF)
    bytes[14] = UInt8((n >> 8) & 0xFF)
    bytes[15] = UInt8(n & 0xFF)
    return DocumentID(bytes: bytes)
}

/// The settings every test uses unless it says otherwise: a 5 s countdown and a 90 s rest.
let settings = Settings(restSeconds: 90, doneCountdownSeconds: 5)
let timings = LiveTimings(settings)

/// A split of two exercises: 3 sets of squats, then 2 sets of rows.
func split() -> SplitDocument {
    SplitDocument(
        id: id(1), name: "Legs & Back",
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 100),
            ExerciseTemplate(name: "Row", equipment: "cable", targetSets: 2, targetReps: 10, targetWeight: 40),
        ],
        updatedAt: t0)
}

/// A not-started run of `split()`.
func newRun(_ n: Int = 100) -> WorkoutDocument {
    do {
        return try WorkoutDocument.start(from: split(), id: id(n), at: t0)
    } catch {
        preconditionFailure("the fixture split has exercises: \(error)")
    }
}

extension WorkoutDocument {
    /// A copy with the first `count` sets of log `logIndex` done at `stamp`.
    func withSetsDone(_ count: Int, ofLog logIndex: Int = 0, at stamp: Timestamp = at(1)) -> WorkoutDocument {
        var run = self
        for setIndex in 0..<count {
            try? run.completeSet(logID: logs[logIndex].id, setIndex: setIndex, reps: 5, weight: 100, at: stamp)
        }
        return run
    }
}

/// A squat frame of run 100 (3 sets) at `phase`/`set`, anchored at `anchor`, stamped `version`.
func squat(
    _ phase: LivePhase, set: Int = 0, anchor: Timestamp = t0, version: Int, run: Int = 100
) -> LiveProgress {
    LiveProgress(
        runID: id(run), logID: newRun(run).logs[0].id, exerciseName: "Squat",
        position: LivePosition(phase: phase, setIndex: set, anchor: anchor), setCount: 3, timings: timings,
        version: version)
}

/// An engine with the peer reachable.
func reachableMirror(versionFloor: Int = 0) -> LiveMirror {
    var mirror = LiveMirror(versionFloor: versionFloor)
    _ = mirror.handle(.reachabilityChanged(true, now: t0))
    return mirror
}

/// The messages among `actions` that were sent.
func sent(_ actions: [LiveMirror.Action]) -> [LiveMessage] {
    actions.compactMap { if case .send(let message, _) = $0 { message } else { nil } }
}

/// The frame a send action carried, if it was a progress frame.
func progress(_ message: LiveMessage?) -> LiveProgress? {
    if case .progress(let frame) = message { frame } else { nil }
}

/// Two engines back to back: the phone and the watch, with an in-memory pipe between them.
///
/// `partitioned` makes the peer unreachable on both sides (sends fail as not reachable); `dropping`
/// keeps it reachable but fails every send (the retry path). Sends are delivered, and their outcome
/// reported, by `pump()` until both sides are quiet.
struct Pair {
    enum Side { case phone, watch }

    var phone = LiveMirror(versionFloor: 0)
    var watch = LiveMirror(versionFloor: 0)
    var now = t0
    var dropping = false
    private(set) var partitioned = false
    /// Every action either side returned, in order.
    private(set) var trace: [(Side, LiveMirror.Action)] = []
    private var pending: [(Side, LiveMirror.Action)] = []

    init() {
        feed(.phone, .reachabilityChanged(true, now: now))
        feed(.watch, .reachabilityChanged(true, now: now))
    }

    /// Feeds `event` to `side` and pumps the pipe until quiet.
    mutating func feed(_ side: Side, _ event: LiveMirror.Event) {
        let actions = side == .phone ? phone.handle(event) : watch.handle(event)
        pending += actions.map { (side, $0) }
        pump()
    }

    /// Cuts or heals the link: both sides see the reachability edge.
    mutating func setPartitioned(_ value: Bool) {
        partitioned = value
        feed(.phone, .reachabilityChanged(!value, now: now))
        feed(.watch, .reachabilityChanged(!value, now: now))
    }

    /// Moves time to `instant`, ticking both sides.
    mutating func advance(to instant: Timestamp) {
        now = instant
        feed(.phone, .tick(now: now))
        feed(.watch, .tick(now: now))
    }

    private mutating func pump() {
        while !pending.isEmpty {
            let (side, action) = pending.removeFirst()
            trace.append((side, action))
            guard case .send(let message, _) = action else { continue }
            let peer: Side = side == .phone ? .watch : .phone
            let outcome: LiveMirror.Event
            if partitioned || dropping {
                outcome = .sendFailed(
                    runID: message.runID, version: message.version, stillReachable: !partitioned, now: now)
            } else {
                let delivered =
                    peer == .phone
                    ? phone.handle(.messageReceived(message, now: now))
                    : watch.handle(.messageReceived(message, now: now))
                pending += delivered.map { (peer, $0) }
                outcome = .sendSucceeded(runID: message.runID, version: message.version)
            }
            let reported = side == .phone ? phone.handle(outcome) : watch.handle(outcome)
            pending += reported.map { (side, $0) }
        }
    }
}
