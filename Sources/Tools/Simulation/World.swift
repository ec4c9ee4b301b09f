import LinkProtocol
import Nodes
import WorkoutModel

/// The simulated world of one seed: virtual time, one event queue ordered by (time, insertion), one
/// seeded generator that every choice draws from, the network, both processes and the record of
/// what happened (hashed, and kept as lines when a trace is asked for).
final class World {
    var now: Duration = .zero
    /// True wall time at `now == 0` (each process adds its own clock offset).
    let epoch = Timestamp(secondsSinceEpoch: 1_790_000_000)
    var random: SplitMix64
    /// Draws for the write queue's delays only: a stream of its own, so a run without that model
    /// (`slicesTurns` false) draws exactly as before it existed.
    private var turnRandom: SplitMix64?
    private var queue = EventQueue()
    private(set) var network: Network!
    private(set) var steps = 0
    /// FNV-1a over every recorded line: the same seed gives the same hash, or determinism broke.
    private(set) var traceHash: UInt64 = 0xCBF2_9CE4_8422_2325
    private(set) var lines: [String]?
    /// Whether lines are written (hashed, and kept when `lines` is not nil).
    private let recording: Bool

    enum Scheduled {
        case deliver(connection: Int, to: Side, bytes: [UInt8])
        case opened(connection: Int, side: Side)
        case closed(connection: Int, side: Side)
        case dialFailed(Side, reason: String, life: UInt64)
        case hostTimer(Side, NodeTimer, token: UInt64)
        case linkTick(Side, life: UInt64)
        /// A side's runner asked for a turn (`RunnerPorts.scheduleTurn`).
        case turn(Side, life: UInt64)
        /// A side reads its connections again (`RunnerPorts.setReadingPaused`).
        case readingResumed(Side, life: UInt64)
        /// Durable write `number` on a side's write queue lands.
        case writeLanded(Side, life: UInt64, number: UInt64)
        /// The group commit of a side's outbox appends reached the disk (fdatasync).
        case outboxSynced(Side, life: UInt64)
        /// The phone's directory watcher reports a file the phone wrote, late (inotify echoes its own
        /// writes; a late one carries an older version than the phone now has). Boxed: a run inline
        /// made every queued event as large as a run, and the queue moves events around.
        indirect case echo(WorkoutDocument, life: UInt64)
        case step(Step)
    }

    /// What the scenario does next (workload, faults, restarts), interpreted by `Simulator`.
    enum Step {
        case operate
        case fault
        case heal
        case restart(Side)
        /// A crash or power loss while the side's outbox commit is in flight.
        case crashDuringCommit(Side)
        /// Every connection reset (a network fault scheduled by another fault, not drawn).
        case cutLink
        /// The side crashes now, if it is up (a crash scheduled by another event, not drawn).
        case crashNow(Side)
        /// The watch edits an active run now (an edit scheduled by another event, not drawn).
        case watchEdits
        case quiesce
    }

    init(seed: UInt64, keepLines: Bool, recording: Bool = true, slicesTurns: Bool = true) {
        random = SplitMix64(seed: seed)
        turnRandom = slicesTurns ? SplitMix64(seed: seed ^ 0x7475_726E_6275_6467) : nil
        lines = keepLines ? [] : nil
        self.recording = recording || keepLines
        network = Network(world: self)
    }

    func schedule(after delay: Duration, _ event: Scheduled) {
        queue.push(at: now + delay, event)
    }

    /// The next scheduled event, the clock moved to its time; nil when nothing is left.
    func next() -> Scheduled? {
        guard let (at, event) = queue.pop() else { return nil }
        now = max(now, at)
        steps += 1
        return event
    }

    var isIdle: Bool { queue.isEmpty }

    /// When the next scheduled event is due; nil when nothing is left.
    var nextAt: Duration? { queue.nextAt }

    /// Writes a line of the record; `line` is not evaluated when the record is not written, so it must
    /// draw nothing from `random` and change nothing.
    func record(_ side: Side?, _ line: @autoclosure () -> String) {
        guard recording else { return }
        let line = line()
        let millis = now.components.attoseconds / 1_000_000_000_000_000
        let text =
            "\(now.components.seconds).\(millis < 10 ? "00" : millis < 100 ? "0" : "")\(millis) \(side?.rawValue ?? "world") \(line)"
        for byte in text.utf8 { traceHash = (traceHash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        lines?.append(text)
    }

    // MARK: Choices

    func chance(_ probability: Double) -> Bool { Double(random.next() % 1_000_000) < probability * 1_000_000 }
    func pick(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
    func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[Int(random.next() % UInt64(items.count))] }
    func milliseconds(_ range: ClosedRange<Int>) -> Duration { .milliseconds(pick(range)) }

    /// Whether the shells' write queue is modelled.
    var queuesWrites: Bool { turnRandom != nil }

    /// How long a durable write on the shell's write queue takes to land: 0–3 ms.
    func writeDelay() -> Duration {
        guard var stream = turnRandom else { return .zero }
        defer { turnRandom = stream }
        return .microseconds(Int64(stream.next() % 3_000))
    }
}

/// A binary heap of scheduled events, ties broken by insertion order (so the run is deterministic).
struct EventQueue {
    private var heap: [(at: Duration, order: UInt64, event: World.Scheduled)] = []
    private var order: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    var nextAt: Duration? { heap.first?.at }

    mutating func push(at: Duration, _ event: World.Scheduled) {
        order += 1
        heap.append((at, order, event))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (Duration, World.Scheduled)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, less(left, smallest) { smallest = left }
            if right < heap.count, less(right, smallest) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (top.at, top.event)
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        (heap[a].at, heap[a].order) < (heap[b].at, heap[b].order)
    }
}
