import LinkProtocol

/// A phone engine and a watch engine joined by a simulated network and clock, pumped until quiet.
///
/// Every `send` is encoded to bytes and fed to the other side (optionally one byte at a time); `dial`
/// opens a connection; `close` closes both ends; `scheduleWakeUp` is remembered and fired by
/// `advance(by:)`. Persist actions, notifications and logs are recorded per side. `blackholed` drops
/// frames silently both ways without closing anything (a partition: no FIN, no RST).
struct LinkPair {
    enum Side: Hashable, CustomStringConvertible {
        case phone, watch
        var description: String { self == .phone ? "phone" : "watch" }
    }

    var phone: LinkEngine
    var watch: LinkEngine
    var now = LinkInstant(.zero)
    var wakeUps: [Side: LinkInstant] = [:]
    var recorded: [Side: [LinkEngine.Action]] = [.phone: [], .watch: []]
    /// Connections by ID: which connection of the other side each end talks to.
    var open: Set<Int> = []
    var nextConnection = 1
    var watchCanDial = true
    var blackholed = false
    var byteAtATime = false
    var dropAllFramesOfKind: FrameKind?
    var framesSent: [Side: [LinkFrame]] = [.phone: [], .watch: []]
    /// Each side's seal per connection, once its handshake is over.
    var seals: [Side: [Int: FrameSeal]] = [:]
    /// The shells' files: each side's file outbox (bytes by sequence), partial files and inbox.
    var filesOut: [Side: [UInt64: [UInt8]]] = [.phone: [:], .watch: [:]]
    var partials: [Side: [TransferKey: [UInt8]]] = [.phone: [:], .watch: [:]]
    var inbox: [Side: [TransferKey: [UInt8]]] = [.phone: [:], .watch: [:]]

    /// The test shells' stand-in for SHA-256 (the pure module has no crypto): 32 bytes of FNV-1a.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return (0..<32).map { UInt8(truncatingIfNeeded: hash >> (UInt64($0 % 8) * 8)) }
    }

    /// Puts `bytes` in `side`'s file outbox as file `sequence` and tells its engine.
    mutating func queueFile(_ side: Side, sequence: UInt64, _ bytes: [UInt8], metadata: String = "{}") {
        filesOut[side, default: [:]][sequence] = bytes
        handle(
            side,
            .filePersisted(
                OutboundFile(
                    sequence: sequence, size: UInt64(bytes.count), digest: Self.digest(bytes), metadata: metadata)))
    }

    /// Whether `side` persisted a mark for `key`'s queue that applied `key`.
    func marked(_ side: Side, _ key: TransferKey) -> Bool {
        recorded[side]!.contains {
            guard case .persistTransferMark(key.queue, let mark) = $0 else { return false }
            return mark.highest >= key.sequence && mark.recent.contains { $0.sequence == key.sequence }
        }
    }

    static let phoneInstance = InstanceID(bytes: [UInt8](repeating: 0x80, count: 16))!
    static let watchInstance = InstanceID(bytes: [UInt8](repeating: 0x10, count: 16))!
    static let phoneQueue = InstanceID(bytes: [UInt8](repeating: 0x81, count: 16))!
    static let watchQueue = InstanceID(bytes: [UInt8](repeating: 0x11, count: 16))!

    init(
        phoneRestored: RestoredLinkState = RestoredLinkState(outboxQueue: LinkPair.phoneQueue),
        watchRestored: RestoredLinkState = RestoredLinkState(outboxQueue: LinkPair.watchQueue),
        phoneInstance: InstanceID = LinkPair.phoneInstance, watchKey: [UInt8] = HandshakeSamples.key,
        configure: (inout LinkConfiguration) -> Void = { _ in }
    ) {
        var phoneConfiguration = LinkConfiguration(role: .phone)
        var watchConfiguration = LinkConfiguration(role: .watch)
        configure(&phoneConfiguration)
        configure(&watchConfiguration)
        phone = LinkEngine(
            configuration: phoneConfiguration, instance: phoneInstance,
            authenticator: FakeAuthenticator(key: HandshakeSamples.key), restored: phoneRestored, seed: 1)
        watch = LinkEngine(
            configuration: watchConfiguration, instance: LinkPair.watchInstance,
            authenticator: FakeAuthenticator(key: watchKey), restored: watchRestored, seed: 2)
    }

    /// Feeds `event` to one side and pumps every consequence until both sides are quiet.
    mutating func handle(_ side: Side, _ event: LinkEngine.Event) {
        var queue: [(Side, LinkEngine.Event)] = [(side, event)]
        while !queue.isEmpty {
            let (target, next) = queue.removeFirst()
            let actions = target == .phone ? phone.handle(next) : watch.handle(next)
            recorded[target, default: []].append(contentsOf: actions)
            for action in actions {
                queue.append(contentsOf: perform(action, by: target))
            }
        }
    }

    /// Starts both engines: the watch dials at once.
    mutating func start() {
        handle(.phone, .started(now: now))
        handle(.watch, .started(now: now))
    }

    /// Moves the clock forward in small steps, firing wake-ups as they come due.
    mutating func advance(by duration: Duration, step: Duration = .milliseconds(10)) {
        let end = now.advanced(by: duration)
        while now < end {
            now = min(end, now.advanced(by: step))
            for side in [Side.phone, .watch] {
                if let due = wakeUps[side], due <= now {
                    wakeUps[side] = nil
                    handle(side, .tick(now: now))
                }
            }
        }
    }

    private mutating func perform(_ action: LinkEngine.Action, by side: Side) -> [(Side, LinkEngine.Event)] {
        let other: Side = side == .phone ? .watch : .phone
        switch action {
        case .send(let connection, let frame):
            guard open.contains(connection.rawValue) else { return [] }
            framesSent[side, default: []].append(frame)
            // A dropped frame is one never written: sealing it would leave a gap the peer refuses.
            if blackholed || frame.kind == dropAllFramesOfKind { return [] }
            let bytes = seals[side]?[connection.rawValue]?.seal(frame) ?? frame.encoded()
            if byteAtATime {
                return bytes.map { (other, .bytesReceived(connection, [$0], now: now)) }
            }
            return [(other, .bytesReceived(connection, bytes, now: now))]
        case .close(let connection, _):
            guard open.remove(connection.rawValue) != nil else { return [] }
            return [(side, .connectionClosed(connection, now: now)), (other, .connectionClosed(connection, now: now))]
        case .seal(let connection, let seal):
            seals[side, default: [:]][connection.rawValue] = seal
            return []
        case .dial:
            // A partition blackholes SYNs too: the dial times out instead of connecting.
            guard watchCanDial, !blackholed else {
                return [(.watch, .dialFailed(reason: "connection refused", now: now))]
            }
            let connection = ConnectionID(nextConnection)
            nextConnection += 1
            open.insert(connection.rawValue)
            return [
                (.phone, .connectionOpened(connection, nonce: [UInt8](repeating: 0x11, count: 32), now: now)),
                (.watch, .connectionOpened(connection, nonce: [UInt8](repeating: 0xD1, count: 32), now: now)),
            ]
        case .scheduleWakeUp(let at):
            wakeUps[side] = at
            return []
        case .sendFileChunk(let connection, let key, let offset, let length):
            let bytes = filesOut[side]?[key.sequence] ?? []
            let start = Int(offset)
            let data = Array(bytes[start..<min(bytes.count, start + length)])
            return perform(.send(connection, .fileChunk(key, offset: offset, data: data)), by: side)
        case .removeOutboundFile(let sequence):
            filesOut[side]?[sequence] = nil
            return []
        case .prepareInboundFile(let key, let keeping):
            partials[side, default: [:]][key] = Array((partials[side]?[key] ?? []).prefix(Int(keeping)))
            return []
        case .writeInboundChunk(let key, let offset, let data):
            var partial = partials[side]?[key] ?? []
            precondition(partial.count == Int(offset), "a chunk written out of place")
            partial += data
            partials[side, default: [:]][key] = partial
            return [(side, .inboundChunkPersisted(key, through: UInt64(partial.count)))]
        case .verifyInboundFile(let key, let digest):
            return [(side, .inboundFileVerified(key, matches: Self.digest(partials[side]?[key] ?? []) == digest))]
        case .deliverInboundFile(let key):
            inbox[side, default: [:]][key] = partials[side]?.removeValue(forKey: key)
            return []
        case .discardInboundFile(let key):
            partials[side]?[key] = nil
            inbox[side]?[key] = nil
            return []
        default:
            return []
        }
    }

    /// `frames` as `side` writes them on `connection`: sealed once its handshake is over (a test that
    /// plays a peer of another build injects these).
    mutating func wire(_ frames: [LinkFrame], from side: Side, on connection: ConnectionID) -> [UInt8] {
        frames.flatMap { seals[side]?[connection.rawValue]?.seal($0) ?? $0.encoded() }
    }

    /// Drops the connection as a crash or reset would: both sides see it close.
    mutating func cutConnection() {
        for raw in open.sorted() {
            open.remove(raw)
            handle(.phone, .connectionClosed(ConnectionID(raw), now: now))
            handle(.watch, .connectionClosed(ConnectionID(raw), now: now))
        }
    }

    /// Notifications one side emitted, in order.
    func notifications(_ side: Side) -> [LinkNotification] {
        recorded[side, default: []].compactMap {
            if case .notify(let notification) = $0 { return notification }
            return nil
        }
    }

    /// Clears what was recorded so far.
    mutating func forget() {
        recorded = [.phone: [], .watch: []]
        framesSent = [.phone: [], .watch: []]
    }
}
