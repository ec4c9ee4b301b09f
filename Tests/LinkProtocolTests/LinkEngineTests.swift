import LinkProtocol
import Testing

private let t0 = LinkInstant(.zero)

@Suite("Link engine: connection, activation, reachability")
struct LinkEngineConnectionTests {
    @Test("the watch dials, both sides authenticate, activate and become reachable")
    func establishes() {
        var pair = LinkPair()
        pair.start()
        #expect(pair.phone.isLinked && pair.watch.isLinked)
        #expect(pair.phone.isActivated && pair.watch.isActivated)
        #expect(pair.phone.peerInstance == LinkPair.watchInstance)
        #expect(pair.watch.peerInstance == LinkPair.phoneInstance)
        #expect(
            pair.notifications(.watch).prefix(3) == [
                .activated(peer: LinkPair.phoneInstance), .linkEstablished(peer: LinkPair.phoneInstance),
                .reachabilityChanged(true),
            ])
        #expect(pair.notifications(.phone).contains(.peerAppStateChanged(foreground: true)))
        #expect(pair.phone.isReachable)
        #expect(pair.recorded[.phone]!.contains(.persistPeer(LinkPair.watchInstance)))
    }

    @Test("frames fed one byte at a time establish the same link")
    func byteAtATime() {
        var pair = LinkPair()
        pair.byteAtATime = true
        pair.start()
        #expect(pair.phone.isReachable && pair.watch.isReachable)
    }

    @Test("before any handshake every channel refuses with sessionNotActivated")
    func notActivated() {
        let pair = LinkPair()
        #expect(pair.phone.admission(of: .context, bytes: 10) == .sessionNotActivated)
        #expect(pair.watch.admission(of: .userInfo, bytes: 10) == .sessionNotActivated)
        var watch = pair.watch
        let actions = watch.handle(.messageSent(id: 1, payload: [1], wantsReply: true, now: t0))
        #expect(actions == [.notify(.messageCompleted(id: 1, .failed(.sessionNotActivated)))])
    }

    @Test("a peer remembered from an earlier run keeps the session activated while unlinked")
    func activatedFromDisk() {
        let pair = LinkPair(
            watchRestored: RestoredLinkState(knownPeer: LinkPair.phoneInstance, outboxQueue: LinkPair.watchQueue))
        #expect(pair.watch.isActivated)
        #expect(!pair.watch.isReachable)
        #expect(pair.watch.admission(of: .userInfo, bytes: 65_536) == nil)
        #expect(pair.watch.admission(of: .userInfo, bytes: 65_537) == .payloadTooLarge(size: 65_537, limit: 65_536))
    }

    @Test("wrong pairing key: no link, and the watch redials with backoff")
    func wrongKey() {
        var pair = LinkPair(watchKey: Array("wrong".utf8))
        pair.start()
        #expect(!pair.phone.isLinked && !pair.watch.isLinked)
        #expect(!pair.phone.isActivated)
        #expect(pair.framesSent[.watch]!.contains { $0.kind == .error })
        pair.advance(by: .seconds(3))
        #expect(pair.nextConnection > 3)
        #expect(!pair.watch.isLinked)
    }

    @Test("wrist down makes the watch unreachable from the phone, not the other way round")
    func wristDown() {
        var pair = LinkPair()
        pair.start()
        pair.forget()
        pair.handle(.watch, .localAppStateChanged(foreground: false))
        #expect(!pair.phone.isReachable)
        #expect(pair.watch.isReachable)
        #expect(pair.notifications(.phone) == [.peerAppStateChanged(foreground: false), .reachabilityChanged(false)])
        pair.handle(.watch, .localAppStateChanged(foreground: false))
        #expect(pair.notifications(.phone).count == 2)
        pair.handle(.watch, .localAppStateChanged(foreground: true))
        #expect(pair.phone.isReachable)
        #expect(pair.notifications(.phone).last == .reachabilityChanged(true))
    }

    @Test("a blackholed peer is declared unreachable after the silence limit, then the link heals")
    func heartbeatDetectsBlackhole() {
        var pair = LinkPair()
        pair.start()
        pair.advance(by: .seconds(5))
        #expect(pair.phone.isLinked, "heartbeats keep a healthy link up")
        pair.forget()
        pair.blackholed = true
        pair.advance(by: .milliseconds(1_900))
        #expect(pair.phone.isLinked)
        pair.advance(by: .milliseconds(200))
        #expect(!pair.phone.isLinked && !pair.watch.isLinked)
        #expect(pair.notifications(.phone).filter { $0 == .reachabilityChanged(false) }.count == 1)
        pair.blackholed = false
        pair.advance(by: .milliseconds(1_100))
        #expect(pair.phone.isReachable && pair.watch.isReachable)
    }

    @Test("redial delays grow, are jittered and stay under the cap")
    func redialBackoff() {
        var pair = LinkPair()
        pair.watchCanDial = false
        pair.start()
        var dialTimes: [LinkInstant] = []
        for _ in 0..<400 {
            pair.forget()
            pair.advance(by: .milliseconds(10), step: .milliseconds(10))
            if pair.recorded[.watch]!.contains(.dial) { dialTimes.append(pair.now) }
        }
        let gaps = zip(dialTimes.dropFirst(), dialTimes).map { $0.sinceOrigin - $1.sinceOrigin }
        #expect(gaps.count >= 4)
        #expect(gaps.allSatisfy { $0 <= .milliseconds(1_010) })
        #expect(gaps.first! < .milliseconds(300))
        #expect(gaps.last! >= .milliseconds(500))
    }

    /// Found by the simulator (seed 17, docs/SIMULATION.md): a redial deadline left set while a
    /// connection came up was re-armed at once on every tick, forever.
    @Test("a stale redial deadline does not wake the engine in a loop once a connection is up")
    func staleRedialDeadline() {
        var watch = LinkEngine(
            configuration: LinkConfiguration(role: .watch), instance: LinkPair.watchInstance,
            authenticator: FakeAuthenticator(key: HandshakeSamples.key),
            restored: RestoredLinkState(outboxQueue: LinkPair.watchQueue), seed: 5)
        var now = LinkInstant(.zero)
        _ = watch.handle(.started(now: now))
        // A failure report arrives for a dial, then a connection opens before the redial is due.
        _ = watch.handle(.dialFailed(reason: "connection refused", now: now))
        _ = watch.handle(.connectionOpened(ConnectionID(5), nonce: [UInt8](repeating: 2, count: 32), now: now))
        now = now.advanced(by: .seconds(2))
        var wakeUps = 0
        for _ in 0..<50 {
            let actions = watch.handle(.tick(now: now))
            wakeUps += actions.filter { if case .scheduleWakeUp(let at) = $0 { at <= now } else { false } }.count
        }
        #expect(wakeUps <= 1, "the engine asked to be woken in the past \(wakeUps) times")
    }

    @Test("a newer authenticated connection replaces the older one")
    func replacement() {
        var pair = LinkPair()
        pair.start()
        let first = pair.open.sorted().first!
        pair.forget()
        // A second watch connection (say, the watch restarted before the phone noticed the old one die).
        pair.open.insert(99)
        pair.handle(.phone, .connectionOpened(ConnectionID(99), nonce: [UInt8](repeating: 7, count: 32), now: pair.now))
        var fresh = LinkEngine(
            configuration: LinkConfiguration(role: .watch), instance: LinkPair.watchInstance,
            authenticator: FakeAuthenticator(key: HandshakeSamples.key),
            restored: RestoredLinkState(outboxQueue: LinkPair.watchQueue), seed: 3)
        swap(&fresh, &pair.watch)
        pair.handle(.watch, .connectionOpened(ConnectionID(99), nonce: [UInt8](repeating: 8, count: 32), now: pair.now))
        #expect(pair.phone.isLinked)
        #expect(!pair.open.contains(first))
        #expect(
            pair.framesSent[.phone]!.contains(.error(code: .replaced, reason: "a newer connection replaced this one")))
    }

    private let nonce = [UInt8](repeating: 1, count: 32)

    @Test("at the cap a new connection closes the oldest one mid-handshake, never itself")
    func unauthenticatedCap() {
        var pair = LinkPair { $0.maximumUnauthenticatedConnections = 2 }
        for raw in 50..<53 {
            pair.open.insert(raw)
            pair.advance(by: .milliseconds(10))
            pair.handle(.phone, .connectionOpened(ConnectionID(raw), nonce: nonce, now: pair.now))
        }
        #expect(pair.phone.handshakingConnectionCount == 2)
        #expect(pair.open == [51, 52])
        #expect(
            pair.framesSent[.phone]!.contains { if case .error(.tooManyConnections, _) = $0 { true } else { false } })
    }

    @Test("a connection that sent a handshake frame outlasts silent ones, even older ones")
    func silentGoFirst() {
        var pair = LinkPair { $0.maximumUnauthenticatedConnections = 2 }
        let hello = LinkFrame.hello(
            version: pair.phone.configuration.protocolVersion, role: .watch, instance: LinkPair.watchInstance,
            nonce: [UInt8](repeating: 3, count: 32))
        pair.open.insert(60)
        pair.handle(.phone, .connectionOpened(ConnectionID(60), nonce: nonce, now: pair.now))
        pair.handle(.phone, .bytesReceived(ConnectionID(60), hello.encoded(), now: pair.now))
        for raw in 61..<64 {
            pair.open.insert(raw)
            pair.advance(by: .milliseconds(10))
            pair.handle(.phone, .connectionOpened(ConnectionID(raw), nonce: nonce, now: pair.now))
        }
        #expect(pair.open == [60, 63])
    }

    @Test("one source address holds at most its share of the handshakes; it evicts its own")
    func perAddressCap() {
        var pair = LinkPair {
            $0.maximumUnauthenticatedConnections = 8
            $0.maximumUnauthenticatedConnectionsPerAddress = 2
        }
        pair.open.insert(80)
        pair.handle(.phone, .connectionOpened(ConnectionID(80), nonce: nonce, now: pair.now, source: "10.0.0.2"))
        for raw in 81..<86 {
            pair.open.insert(raw)
            pair.advance(by: .milliseconds(10))
            pair.handle(.phone, .connectionOpened(ConnectionID(raw), nonce: nonce, now: pair.now, source: "10.0.0.9"))
        }
        #expect(pair.open == [80, 84, 85])
    }

    @Test("a handshake that does not finish by its deadline is closed with handshakeTimeout")
    func slowloris() {
        var pair = LinkPair()
        pair.open.insert(70)
        pair.handle(.phone, .connectionOpened(ConnectionID(70), nonce: [UInt8](repeating: 1, count: 32), now: t0))
        pair.advance(by: .milliseconds(4_990))
        #expect(pair.open.contains(70))
        pair.advance(by: .milliseconds(20))
        #expect(!pair.open.contains(70))
        #expect(pair.framesSent[.phone]!.contains { if case .error(.handshakeTimeout, _) = $0 { true } else { false } })
    }

    @Test("an oversized declared length closes the link with frameTooLarge before the body arrives")
    func oversizedFrame() {
        var pair = LinkPair()
        pair.start()
        let connection = ConnectionID(pair.open.sorted().first!)
        pair.forget()
        pair.handle(.phone, .bytesReceived(connection, [0x7F, 0xFF, 0xFF, 0xFF, 0x20], now: pair.now))
        #expect(!pair.phone.isLinked)
        #expect(pair.framesSent[.phone]!.contains { if case .error(.frameTooLarge, _) = $0 { true } else { false } })
    }

    @Test("a frame not allowed in this direction is a protocol violation")
    func wrongDirection() {
        var pair = LinkPair()
        pair.start()
        let connection = ConnectionID(pair.open.sorted().first!)
        pair.handle(
            .phone,
            .bytesReceived(connection, pair.wire([.launch(payload: [])], from: .watch, on: connection), now: pair.now))
        #expect(!pair.phone.isLinked)
        #expect(
            pair.framesSent[.phone]!.contains { if case .error(.protocolViolation, _) = $0 { true } else { false } })
    }
}
