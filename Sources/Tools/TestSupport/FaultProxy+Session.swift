import POSIX

/// One proxied connection: the accepted client, its upstream connection and a `ProxyPipe` per stream.
///
/// Loop-confined (it lives in `FaultProxyCore`). Life: accepted → dialling the upstream (deferred
/// while a blackhole is on) → forwarding → ended (both sides closed or reset, removed from the core).
final class ProxySession {
    let id: Int
    private unowned let core: FaultProxyCore
    private let client: Connection
    private var server: Connection?
    private var isDialling = false
    private var upstream = ProxyPipe()
    private var downstream = ProxyPipe()
    private var resetTimer: TimerID?
    private var isEnded = false

    init(id: Int, core: FaultProxyCore, client: Connection) {
        self.id = id
        self.core = core
        self.client = client
    }

    var bytesHeld: Int { upstream.bytesHeld + downstream.bytesHeld }

    func begin() {
        client.onRead = { [weak self] bytes in self?.received(bytes, on: .upstream) }
        client.onClose = { [weak self] reason in self?.sourceClosed(.upstream, reason) }
        toxicsChanged()
    }

    /// Re-reads the core's toxics: arms or disarms the reset, dials if allowed, moves held bytes on.
    func toxicsChanged() {
        guard !isEnded else { return }
        if let delay = core.resetDelay {
            if resetTimer == nil {
                resetTimer = core.loop.scheduleTimer(after: delay) { [weak self] in
                    self?.resetTimer = nil
                    self?.end(resetting: true)
                }
            }
        } else if let resetTimer {
            core.loop.cancelTimer(resetTimer)
            self.resetTimer = nil
        }
        dialIfAllowed()
        pump(.upstream)
        pump(.downstream)
    }

    private func dialIfAllowed() {
        guard server == nil, !isDialling, !isEnded, !core.isBlackholed else { return }
        isDialling = true
        core.loop.connect(host: core.upstreamHost, port: core.upstreamPort) { [weak self] result in
            guard let self, !self.isEnded else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            isDialling = false
            switch result {
            case .success(let connection):
                server = connection
                connection.onRead = { [weak self] bytes in self?.received(bytes, on: .downstream) }
                connection.onClose = { [weak self] reason in self?.sourceClosed(.downstream, reason) }
                pump(.upstream)
                pump(.downstream)
            case .failure:
                // As if the server had refused the client: it sees a reset.
                end(resetting: true)
            }
        }
    }

    private func received(_ bytes: [UInt8], on stream: FaultProxy.Stream) {
        guard !isEnded else { return }
        self[stream].held += bytes
        pump(stream)
    }

    /// The source side of `stream` closed: remember how, and pass it on once `stream` has drained.
    private func sourceClosed(_ stream: FaultProxy.Stream, _ reason: Connection.CloseReason) {
        guard !isEnded else { return }
        switch reason {
        case .closedLocally, .loopShutDown:
            return
        case .peerClosed:
            self[stream].sourceEnd = .orderly
        case .reset, .failed, .writeBufferLimitExceeded:
            self[stream].sourceEnd = .reset
        }
        pump(stream)
    }

    private func sink(of stream: FaultProxy.Stream) -> Connection? {
        stream == .upstream ? server : client
    }

    /// Admits held bytes through the toxics into the stream's schedule, then releases what is due.
    private func pump(_ stream: FaultProxy.Stream) {
        guard !isEnded, !core.isBlackholed else { return }
        guard sink(of: stream) != nil else {
            // The client left before its upstream was dialled: nobody to deliver anything to.
            if stream == .upstream, upstream.sourceEnd != nil, !isDialling {
                end(resetting: upstream.sourceEnd == .reset)
            }
            return
        }
        let toxics = core.toxics[stream] ?? []
        var pipe = self[stream]
        for case .limitData(let limit) in toxics where pipe.admittedBytes >= limit { pipe.limitReached = true }
        if pipe.limitReached {
            pipe.held = []
        } else if !pipe.held.isEmpty {
            var bytes = pipe.held
            pipe.held = []
            for case .limitData(let limit) in toxics where pipe.admittedBytes + bytes.count >= limit {
                bytes = Array(bytes.prefix(limit - pipe.admittedBytes))
                pipe.limitReached = true
            }
            pipe.admittedBytes += bytes.count
            for case .corrupt(let pattern) in toxics where !core.corruptedSinceUpdate[stream, default: false] {
                guard let found = bytes.firstRange(of: pattern) else { continue }
                bytes[found.lowerBound] ^= 0x01
                core.corruptedSinceUpdate[stream] = true
                core.corruptions += 1
            }
            var pieces = [bytes]
            var gap = Duration.zero
            for case .slicer(let size, let delay) in toxics where size > 0 {
                pieces = stride(from: 0, to: bytes.count, by: size).map {
                    Array(bytes[$0..<min($0 + size, bytes.count)])
                }
                gap = delay
            }
            var delay = Duration.zero
            for case .latency(let latency) in toxics { delay = latency }
            var due = core.clock.now.advanced(by: delay)
            if let last = pipe.scheduled.last?.due, last > due { due = last }
            for (index, piece) in pieces.enumerated() where !piece.isEmpty {
                if index > 0 { due = due.advanced(by: gap) }
                pipe.scheduled.append((due, piece))
            }
        }
        self[stream] = pipe
        release(stream)
    }

    /// Writes every scheduled piece that is due, arms a timer for the next, and passes on the
    /// source's close (or the limit's) once nothing is left in flight.
    private func release(_ stream: FaultProxy.Stream) {
        guard !isEnded, !core.isBlackholed, let sink = sink(of: stream) else { return }
        let now = core.clock.now
        while let first = self[stream].scheduled.first, first.due <= now {
            self[stream].scheduled.removeFirst()
            sink.write(first.bytes)
            core.forwarded[stream, default: 0] += first.bytes.count
            core.writes[stream, default: 0] += 1
        }
        if let timer = self[stream].timer { core.loop.cancelTimer(timer) }
        self[stream].timer = nil
        if let next = self[stream].scheduled.first {
            self[stream].timer = core.loop.scheduleTimer(after: now.duration(to: next.due)) { [weak self] in
                self?[stream].timer = nil
                self?.release(stream)
            }
        } else if self[stream].limitReached {
            end(resetting: false)
        } else if let sourceEnd = self[stream].sourceEnd, self[stream].held.isEmpty {
            end(resetting: sourceEnd == .reset)
        }
    }

    /// Closes both sides (after flushing what was written to them) or resets both, and leaves the core.
    private func end(resetting: Bool) {
        guard !isEnded else { return }
        isEnded = true
        for timer in [upstream.timer, downstream.timer, resetTimer].compactMap({ $0 }) { core.loop.cancelTimer(timer) }
        for connection in [client, server].compactMap({ $0 }) {
            if resetting { connection.reset() } else { connection.closeAfterFlush() }
        }
        core.sessionEnded(self)
    }

    private subscript(stream: FaultProxy.Stream) -> ProxyPipe {
        get { stream == .upstream ? upstream : downstream }
        set {
            if stream == .upstream { upstream = newValue } else { downstream = newValue }
        }
    }
}

/// One direction of a proxied connection: what was read and not yet admitted, what is scheduled
/// for delivery, and how the source ended.
struct ProxyPipe {
    /// How a source side closed.
    enum SourceEnd: Equatable {
        case orderly
        case reset
    }

    /// Read from the source, not yet through the toxics (blackholed, or no upstream yet).
    var held: [UInt8] = []
    /// Through the toxics, waiting for their delivery instant; instants never decrease.
    var scheduled: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
    /// Armed for the first scheduled piece.
    var timer: TimerID?
    /// Bytes admitted since the connection started (what `limitData` counts).
    var admittedBytes = 0
    /// `limitData` was reached: nothing more is admitted and the connection ends once drained.
    var limitReached = false
    /// Set once the source side has closed.
    var sourceEnd: SourceEnd?

    var bytesHeld: Int { held.count + scheduled.reduce(0) { $0 + $1.bytes.count } }
}
