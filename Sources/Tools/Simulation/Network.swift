/// TCP as the link sees it, simulated: per connection an ordered byte stream in each direction,
/// delivered after a latency with jitter in chunks of any size (a frame may be split at any byte);
/// a close reaches the peer after the bytes sent before it. Faults: a blackhole (no FIN, no RST:
/// bytes wait, as TCP retransmits, and only heartbeats notice; they arrive when it heals, unless
/// the receiver gave up on the connection), a reset of every connection, a dial that never
/// completes while blackholed, and a refused dial while the phone is down.
final class Network {
    unowned let world: World
    private struct Connection {
        /// The sides that still have the connection open.
        var open: Set<Side> = [.phone, .watch]
        /// When the last chunk towards each side is due (chunks never overtake each other).
        var lastDue: [Side: Duration] = [:]
        /// The sides told the connection is open (the watch's dial completed; the phone accepted).
        var announced: Set<Side> = []
        /// The process life of each side when the connection was made: a later life never hears of it.
        var lives: [Side: UInt64] = [:]
    }
    private var connections: [Int: Connection] = [:]
    private var lastID = 0
    /// The directions bytes are dropped in (towards that side): both for a blackhole, one for a
    /// one-way drop.
    private(set) var dropping: Set<Side> = []
    var blackholed: Bool { dropping.count == 2 }
    /// What was sent while blackholed, in order: bytes, or a close (nil), towards a side.
    private var held: [(connection: Int, to: Side, bytes: [UInt8]?)] = []
    /// Whether the phone accepts connections (it is up).
    var phoneListening: () -> Bool = { true }
    /// Each side's current process life.
    var lifeOf: (Side) -> UInt64 = { _ in 0 }

    init(world: World) {
        self.world = world
    }

    private var latency: Duration { world.milliseconds(1...20) }

    func dial(from side: Side) {
        guard side == .watch else { return }
        if blackholed {
            // A SYN into a blackhole: the endpoint's connect timeout fails it.
            world.schedule(after: .seconds(1), .dialFailed(side, reason: "connect timed out", life: lifeOf(side)))
            return
        }
        guard phoneListening() else {
            world.schedule(after: latency, .dialFailed(side, reason: "connection refused", life: lifeOf(side)))
            return
        }
        lastID += 1
        connections[lastID] = Connection(lives: [.phone: lifeOf(.phone), .watch: lifeOf(.watch)])
        let first = latency
        world.schedule(after: first, .opened(connection: lastID, side: .phone))
        world.schedule(after: first + latency, .opened(connection: lastID, side: .watch))
        world.record(nil, "net dial #\(lastID)")
    }

    func send(from side: Side, connection id: Int, _ bytes: [UInt8]) {
        guard let connection = connections[id], connection.open.contains(side) else { return }
        if dropping.contains(side.other) {
            held.append((id, side.other, bytes))
        } else {
            deliver(bytes, connection: id, to: side.other)
        }
    }

    /// `side` closes: it hears its own close at once; the peer after what was sent before.
    func close(from side: Side, connection id: Int) {
        guard var connection = connections[id], connection.open.contains(side) else { return }
        connection.open.remove(side)
        connections[id] = connection
        world.schedule(after: .zero, .closed(connection: id, side: side))
        finReaches(side.other, connection: id)
    }

    /// A process died: its kernel resets its connections (the peer hears it, unless blackholed).
    func hostDied(_ side: Side) {
        for id in connections.keys.sorted() {
            guard var connection = connections[id], connection.open.contains(side) else { continue }
            connection.open.remove(side)
            connections[id] = connection
            finReaches(side.other, connection: id)
        }
    }

    /// `side` was told the connection opened.
    func announce(_ id: Int, to side: Side) { connections[id]?.announced.insert(side) }

    private func finReaches(_ side: Side, connection id: Int) {
        if dropping.contains(side) {
            held.append((id, side, nil))
        } else {
            let due = max(world.now + latency, connections[id]?.lastDue[side] ?? .zero)
            world.schedule(after: due - world.now, .closed(connection: id, side: side))
        }
    }

    private func deliver(_ bytes: [UInt8], connection id: Int, to side: Side) {
        guard var connection = connections[id] else { return }
        var due = max(world.now + latency, connection.lastDue[side] ?? .zero)
        var rest = bytes[...]
        while !rest.isEmpty {
            let size = world.chance(0.7) ? rest.count : world.pick(1...rest.count)
            world.schedule(after: due - world.now, .deliver(connection: id, to: side, bytes: Array(rest.prefix(size))))
            rest = rest.dropFirst(size)
            due += world.milliseconds(0...2)
        }
        connection.lastDue[side] = due
        connections[id] = connection
    }

    /// Whether bytes or a close may still reach `side` on this connection (in the life it was made in).
    func isOpen(_ id: Int, at side: Side) -> Bool {
        guard let connection = connections[id] else { return false }
        return connection.open.contains(side) && connection.lives[side] == lifeOf(side)
    }

    /// Whether the connection belongs to `side`'s current life.
    func isCurrent(_ id: Int, at side: Side) -> Bool { connections[id]?.lives[side] == lifeOf(side) }

    /// A close reached `side`: nothing more is delivered to it. Returns whether `side` had been told
    /// the connection opened (a dial that had not completed fails instead).
    func closeArrived(_ id: Int, at side: Side) -> Bool {
        let announced = connections[id]?.announced.contains(side) ?? false
        guard isCurrent(id, at: side) else {
            connections[id]?.open.remove(side)
            return false
        }
        connections[id]?.open.remove(side)
        return announced
    }

    func startBlackhole() {
        dropping = [.phone, .watch]
        world.record(nil, "net blackhole")
    }

    /// Only what goes towards `side` is dropped (an asymmetric firewall rule).
    func startDropping(towards side: Side) {
        dropping.insert(side)
        world.record(nil, "net drop towards \(side)")
    }

    func heal() {
        guard !dropping.isEmpty else { return }
        dropping = []
        world.record(nil, "net heal, \(held.count) held")
        let waiting = held
        held = []
        for (id, side, bytes) in waiting {
            if let bytes { deliver(bytes, connection: id, to: side) } else { finReaches(side, connection: id) }
        }
    }

    /// Every connection is reset: both sides hear it now.
    func reset() {
        world.record(nil, "net reset")
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            for side in connection.open.sorted(by: { $0.rawValue < $1.rawValue }) {
                world.schedule(after: .zero, .closed(connection: id, side: side))
            }
            connections[id]?.open = []
        }
        held.removeAll()
    }
}
