import POSIX

/// A TCP proxy on loopback in front of a real server (phoned's link port, an echo server), with
/// Toxiproxy-style faults switched on and off while connections are open.
///
/// ```
/// client (watchd, a TestEndpoint) ──▶ listenHost:port ──[toxics]──▶ upstreamHost:upstreamPort
///      upstream stream: client → server          downstream stream: server → client
/// ```
///
/// Each accepted connection gets a connection of its own to the upstream, and bytes are copied both
/// ways through the toxics active on their stream at the moment they pass:
///
/// | toxic | effect |
/// |---|---|
/// | `latency(d)` | every chunk is delivered `d` after it was read; order is kept |
/// | `blackhole` | nothing passes and nothing is refused, on either stream: bytes are read and held, a side's close is held too, new connections are accepted but their upstream is not dialled — a partition in which TCP stays open. Removing it releases what was held, in order (as TCP would retransmit), then any held close |
/// | `resetPeer(after:)` | after the delay, every connection — open now, or accepted while the toxic is on — is aborted on both sides with a TCP reset (`SO_LINGER` 0): reads and writes fail with `ECONNRESET` |
/// | `slicer(maximumChunkBytes:delay:)` | each chunk is cut into pieces of at most that many bytes, written separately, `delay` apart |
/// | `limitData(bytes:)` | once that many bytes have passed on the stream (counted from the connection's start) the rest is dropped and both sides are closed |
/// | `corrupt(pattern:)` | the first time a chunk holds `pattern`, one bit of its first byte is flipped (once per stream each time the toxics are set, whatever the connection: a retransmission passes): what an attacker on the path, or a broken middlebox, does to a frame |
///
/// Toxics combine: a blackhole holds everything; otherwise a chunk is cut short by `limitData`, then
/// sliced, then delayed. Half-closes are not forwarded: when one side closes, the other is closed
/// (a reset for a reset) once what was in flight towards it has been delivered. An upstream that
/// refuses the connection makes the proxy reset the client.
///
/// The proxy owns an event loop of its own; every method may be called from any task. `stop()` (or
/// releasing the proxy) closes every connection and stops the loop.
package final class FaultProxy: Sendable {
    /// One fault; see the type's table.
    package enum Toxic: Sendable, Equatable, CustomStringConvertible {
        case latency(Duration)
        case blackhole
        case resetPeer(after: Duration = .zero)
        case slicer(maximumChunkBytes: Int, delay: Duration = .zero)
        case limitData(bytes: Int)
        case corrupt(pattern: [UInt8])

        package var description: String {
            switch self {
            case .latency(let delay): return "latency(\(delay))"
            case .blackhole: return "blackhole"
            case .resetPeer(let delay): return "reset_peer(after: \(delay))"
            case .slicer(let size, let delay): return "slicer(\(size) bytes, \(delay) apart)"
            case .limitData(let bytes): return "limit_data(\(bytes) bytes)"
            case .corrupt(let pattern): return "corrupt(\(pattern.count)-byte pattern)"
            }
        }
    }

    /// A direction of a proxied connection.
    package enum Stream: String, Sendable, Hashable, CaseIterable {
        /// From the client to the upstream server.
        case upstream
        /// From the upstream server back to the client.
        case downstream
    }

    /// Counters for assertions and logs.
    package struct Statistics: Sendable, Equatable {
        /// Client connections accepted since the proxy started.
        package var connectionsAccepted = 0
        /// Proxied connections not yet ended.
        package var openConnections = 0
        /// Bytes written to the far side, per stream, over the proxy's life.
        package var bytesForwarded: [Stream: Int] = [.upstream: 0, .downstream: 0]
        /// Separate writes to the far side, per stream (what `slicer` multiplies).
        package var writesForwarded: [Stream: Int] = [.upstream: 0, .downstream: 0]
        /// Bytes read but not yet delivered (blackholed, delayed, or waiting for the upstream).
        package var bytesHeld = 0
        /// Bits flipped by `corrupt`.
        package var corruptions = 0
    }

    /// The port the proxy listens on (kernel-chosen).
    package let port: UInt16
    /// Where the proxy forwards to.
    package let upstreamPort: UInt16
    private let loop: EventLoop
    private let core: FaultProxyCore

    /// Starts listening on `listenHost` (a kernel-chosen port, see `port`) in front of
    /// `upstreamHost:upstreamPort`, with no toxics.
    package init(upstreamHost: String = "127.0.0.1", upstreamPort: UInt16, listenHost: String = "127.0.0.1")
        async throws
    {
        self.upstreamPort = upstreamPort
        let loop = try EventLoop(name: "fault-proxy")
        let core = FaultProxyCore(loop: loop, upstreamHost: upstreamHost, upstreamPort: upstreamPort)
        do {
            port = try await loop.submit { try core.start(listenHost: listenHost) }
        } catch {
            loop.shutdown()
            throw error
        }
        self.loop = loop
        self.core = core
    }

    deinit {
        loop.shutdown()
    }

    /// Replaces the toxics on `streams` (both by default) with `toxics`; the change applies to the
    /// bytes, connections and closes that pass from now on, including ones held until now.
    package func setToxics(_ toxics: [Toxic], on streams: Set<Stream> = Set(Stream.allCases)) async throws {
        let core = self.core
        try await loop.submit { core.update(toxics, on: streams) }
    }

    /// Removes every toxic: held bytes and closes flow on, deferred upstream connections are dialled.
    package func heal() async throws {
        try await setToxics([])
    }

    /// The toxics active on `stream`.
    package func toxics(on stream: Stream) async throws -> [Toxic] {
        let core = self.core
        return try await loop.submit { core.toxics[stream] ?? [] }
    }

    /// The counters now.
    package func statistics() async throws -> Statistics {
        let core = self.core
        return try await loop.submit { core.statistics }
    }

    /// Stops listening, closes every proxied connection and stops the proxy's loop. Idempotent.
    package func stop() {
        loop.shutdown()
    }
}

/// The proxy's state, confined to its event loop: the listener, the toxics and the live sessions.
final class FaultProxyCore: @unchecked Sendable {
    // @unchecked Sendable is sound because the core is handed to its loop once, at creation, and
    // every member is then read and written only on that loop's thread (through `submit` or loop
    // callbacks); Sendable only lets the reference travel into those closures.
    let loop: EventLoop
    let upstreamHost: String
    let upstreamPort: UInt16
    let clock = ContinuousClock()
    var toxics: [FaultProxy.Stream: [FaultProxy.Toxic]] = [:]
    private var listener: Listener?
    private var sessions: [Int: ProxySession] = [:]
    private var lastSessionID = 0
    private var accepted = 0
    var forwarded: [FaultProxy.Stream: Int] = [.upstream: 0, .downstream: 0]
    var writes: [FaultProxy.Stream: Int] = [.upstream: 0, .downstream: 0]
    var corruptions = 0
    /// Whether `corrupt` has flipped its bit on a stream since the toxics were last set.
    var corruptedSinceUpdate: [FaultProxy.Stream: Bool] = [:]

    init(loop: EventLoop, upstreamHost: String, upstreamPort: UInt16) {
        self.loop = loop
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
    }

    /// Listens on a kernel-chosen port and returns it. Loop-only.
    func start(listenHost: String) throws -> UInt16 {
        let listener = try loop.listen(host: listenHost, port: 0) { [unowned self] client in accept(client) }
        self.listener = listener
        return listener.port
    }

    /// Whether a blackhole is on, on either stream (a partition cuts both ways).
    var isBlackholed: Bool {
        toxics.values.contains { $0.contains(.blackhole) }
    }

    /// The delay of an active `resetPeer`, on either stream.
    var resetDelay: Duration? {
        for case .resetPeer(let delay) in toxics.values.joined() { return delay }
        return nil
    }

    var statistics: FaultProxy.Statistics {
        FaultProxy.Statistics(
            connectionsAccepted: accepted, openConnections: sessions.count, bytesForwarded: forwarded,
            writesForwarded: writes,
            bytesHeld: sessions.values.reduce(0) { $0 + $1.bytesHeld }, corruptions: corruptions)
    }

    func update(_ newToxics: [FaultProxy.Toxic], on streams: Set<FaultProxy.Stream>) {
        for stream in streams {
            toxics[stream] = newToxics
            corruptedSinceUpdate[stream] = false
        }
        for session in Array(sessions.values) { session.toxicsChanged() }
    }

    private func accept(_ client: Connection) {
        accepted += 1
        lastSessionID += 1
        let session = ProxySession(id: lastSessionID, core: self, client: client)
        sessions[session.id] = session
        session.begin()
    }

    func sessionEnded(_ session: ProxySession) {
        sessions[session.id] = nil
    }
}
