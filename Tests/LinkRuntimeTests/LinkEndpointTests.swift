import Foundation
import LinkProtocol
import LinkRuntime
import Synchronization
import TestSupport
import Testing

/// A phone listening on a kernel-chosen port and a watch dialling it, both with fresh state.

private func linkedPair(
    _ directory: TemporaryDirectory, key: [UInt8], watchAnswer: MessageAnswer? = .handled,
    phoneAnswer: MessageAnswer? = .handled,
    configure: @escaping (inout LinkConfiguration) -> Void = { _ in }
) async throws -> (phone: TestEndpoint, watch: TestEndpoint) {
    let phone = try await TestEndpoint(
        role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0),
        messageAnswer: phoneAnswer, configure: configure)
    let watch = try await TestEndpoint(
        role: .watch, state: directory.appending("watch"), key: key,
        address: .dial(host: "127.0.0.1", port: phone.port!), messageAnswer: watchAnswer, configure: configure)
    try await phone.waitUntil(linked: true)
    try await watch.waitUntil(linked: true)
    try await phone.notifications.wait(for: "watch app state") { $0.contains(.reachabilityChanged(true)) }
    return (phone, watch)
}

@Suite("Link endpoint over loopback TCP with real state files")
struct LinkEndpointTests {
    let key = freshPairingKey()

    @Test("both sides authenticate, activate and see each other's instance")
    func links() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer {
            phone.shutdown()
            watch.shutdown()
        }
        let phoneStatus = try await phone.on { $0.status() }
        let watchStatus = try await watch.on { $0.status() }
        #expect(phoneStatus.activated && phoneStatus.reachable)
        #expect(phoneStatus.peer == watchStatus.instance)
        #expect(watchStatus.peer == phoneStatus.instance)
    }

    @Test("a dialled connection refused for want of a nonce is a failed dial: the watch redials and links")
    func nonceFailureRedials() async throws {
        let directory = try TemporaryDirectory("link")
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0))
        let watch = try await TestEndpoint(
            role: .watch, state: directory.appending("watch"), key: key,
            address: .dial(host: "127.0.0.1", port: phone.port!),
            prepare: { endpoint in
                // The first draw fails (as RAND_bytes would without an entropy source), later ones work.
                var failed = false
                endpoint.nonces = {
                    guard failed else {
                        failed = true
                        throw SecureRandomError.generatorFailed(byteCount: LinkFrame.nonceByteCount)
                    }
                    return try SecureRandom.bytes(count: LinkFrame.nonceByteCount)
                }
            })
        defer {
            watch.shutdown()
            phone.shutdown()
        }
        // Before: the engine never heard of that connection and stayed "dialling" for good.
        try await watch.waitUntil(linked: true)
        try await phone.waitUntil(linked: true)
    }

    @Test("a watch with the wrong pairing key never links")
    func wrongKey() async throws {
        let directory = try TemporaryDirectory("link")
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0))
        let watch = try await TestEndpoint(
            role: .watch, state: directory.appending("watch"), key: Array("another key entirely".utf8),
            address: .dial(host: "127.0.0.1", port: phone.port!))
        defer {
            phone.shutdown()
            watch.shutdown()
        }
        let rawProbe = try RawLinkClient(port: phone.port!)
        rawProbe.send(LinkFrame.ping(token: 1))
        let refused = try rawProbe.readUntilClosed()
        #expect(refused.contains { if case .error(.protocolViolation, _) = $0 { true } else { false } })
        let status = try await watch.on { $0.status() }
        #expect(!status.linked && !status.activated)
        #expect(try await phone.on { $0.status().activated } == false)
    }

    @Test("three context updates while the watch is down: one delivery, of the third, kept across its restart")
    func latestWinsAcrossRestart() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, firstWatch) = try await linkedPair(directory, key: key)
        defer { phone.shutdown() }
        firstWatch.shutdown()
        try await phone.waitUntil(linked: false)
        for value in ["one", "two", "three"] {
            try await phone.on { try $0.updateApplicationContext(Array(value.utf8)) }
        }
        let watch = try await TestEndpoint(
            role: .watch, state: directory.appending("watch"), key: key,
            address: .dial(host: "127.0.0.1", port: phone.port!))
        let received = try await watch.notifications.wait(for: "a context") {
            $0.contains { if case .contextReceived = $0 { true } else { false } }
        }
        try await phone.notifications.wait(for: "the ack") { $0.contains(.contextAcknowledged(generation: 3)) }
        watch.shutdown()
        let contexts = received.compactMap { if case .contextReceived(let context) = $0 { context } else { nil } }
        #expect(contexts.map(\.payload) == [Array("three".utf8)])
        #expect(contexts.map(\.generation) == [3])
        let reopened = try LinkStateDirectory(root: directory.appending("watch")) { [UInt8](repeating: 0, count: 16) }
        #expect(try reopened.readReceivedContext()?.payload == Array("three".utf8))
    }

    @Test("messages: a reply; notReachable with the watch app in the background; a timeout; payloadTooLarge")
    func messages() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key, watchAnswer: .reply([]), phoneAnswer: nil) {
            $0.messageReplyTimeout = .milliseconds(300)
        }
        defer {
            phone.shutdown()
            watch.shutdown()
        }
        #expect(await phone.send(Array("ping".utf8)) == .replied(Array("ping".utf8)))
        try await watch.on { $0.setAppForeground(false) }
        try await phone.notifications.wait(for: "wrist down") { $0.last == .reachabilityChanged(false) }
        #expect(await phone.send([1]) == .failed(.notReachable))
        #expect(await watch.send([2]) == .failed(.messageReplyTimedOut), "the phone never answers")
        #expect(
            await phone.send(Array(repeating: 0, count: 70_000))
                == .failed(.payloadTooLarge(size: 70_000, limit: 65_536)))
    }

    @Test("an oversize frame closes that connection with frameTooLarge while the link stays up")
    func oversizeFrame() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer {
            phone.shutdown()
            watch.shutdown()
        }
        let attacker = try RawLinkClient(port: phone.port!)
        attacker.send([0x7F, 0xFF, 0xFF, 0xFF, 0x10])
        let frames = try attacker.readUntilClosed()
        #expect(frames.contains { if case .error(.frameTooLarge, _) = $0 { true } else { false } })
        #expect(try await phone.on { $0.status().linked })
        #expect(await watch.send([9], wantsReply: false) == .delivered)
    }

    @Test(
        "a refused connection and a failed handshake are each logged once, with the connection and the reason; a wrong key as a warning"
    )
    func refusalsLoggedOnce() async throws {
        let directory = try TemporaryDirectory("link-log")
        let lines = Recorder<String>()
        let warnings = Recorder<String>()
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0),
            prepare: { endpoint in
                endpoint.log = { lines.record($0) }
                endpoint.warn = { line in
                    lines.record(line)
                    warnings.record(line)
                }
            })
        defer { phone.shutdown() }
        let garbage = try RawLinkClient(port: phone.port!)
        garbage.send([0x7F, 0xFF, 0xFF, 0xFF, 0x10])
        _ = try garbage.readUntilClosed()
        let wrongKey = try await TestEndpoint(
            role: .watch, state: directory.appending("watch"), key: freshPairingKey(),
            address: .dial(host: "127.0.0.1", port: phone.port!))
        defer { wrongKey.shutdown() }
        let logged = try await lines.wait(for: "both refusals") { lines in
            lines.contains { $0.contains("over the maximum") } && lines.contains { $0.contains("handshake") }
        }
        #expect(logged.filter { $0.contains("over the maximum") }.count == 1, "\(logged)")
        // The watch redials with a backoff: count the lines about the first failed connection only.
        let first = try #require(logged.first { $0.contains("handshake") })
        let connection = try #require(first.split(separator: " ").first { $0.hasPrefix("#") }).trimmingCharacters(
            in: CharacterSet(charactersIn: ":"))
        #expect(logged.filter { $0.contains("handshake") && $0.contains("\(connection):") }.count == 1, "\(logged)")
        // The wrong key is the operator's to see (level=warning); the garbage is not.
        let warned = warnings.values
        #expect(warned.contains { $0.contains("\(connection):") && $0.contains("authenticationFailed") }, "\(warned)")
        #expect(!warned.contains { $0.contains("over the maximum") }, "\(warned)")
    }

    @Test("a silent connection is closed at the handshake deadline (slowloris)")
    func slowloris() async throws {
        let directory = try TemporaryDirectory("link")
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0)
        ) { $0.handshakeTimeout = .milliseconds(300) }
        defer { phone.shutdown() }
        let idle = try RawLinkClient(port: phone.port!)
        idle.send([0x00, 0x00])  // two bytes of a length prefix, then nothing
        let frames = try idle.readUntilClosed()
        #expect(frames.contains { if case .error(.handshakeTimeout, _) = $0 { true } else { false } })
    }

    @Test("connections mid-handshake are capped: the oldest is closed to make room for the newest")
    func unauthenticatedCap() async throws {
        let directory = try TemporaryDirectory("link")
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0)
        ) {
            $0.maximumUnauthenticatedConnections = 2
            // Far beyond how long the test takes, so only the cap can close a connection however slowly
            // a loaded machine runs it: with the default 5 s, `first` and `second` may reach their
            // deadline before `third` connects, and neither expectation below can hold.
            $0.handshakeTimeout = .seconds(120)
        }
        defer { phone.shutdown() }
        let first = try RawLinkClient(port: phone.port!)
        let second = try RawLinkClient(port: phone.port!)
        try await phone.notifications.wait(for: "nothing") { _ in true }
        while try await phone.on({ $0.status().handshakingConnections }) < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let third = try RawLinkClient(port: phone.port!)
        let frames = try first.readUntilClosed()
        #expect(frames.contains { if case .error(.tooManyConnections, _) = $0 { true } else { false } }, "\(frames)")
        #expect(try await phone.on({ $0.status().handshakingConnections }) == 2)
        _ = (second, third)
    }

    @Test("a reflected proof and a replayed transcript are refused over TCP")
    func reflectionAndReplay() async throws {
        let directory = try TemporaryDirectory("link")
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0))
        defer { phone.shutdown() }
        let authenticator = try PairingKeyAuthenticator(key: key)
        let instance = InstanceID(bytes: [UInt8](repeating: 0x42, count: 16))!
        let nonce = [UInt8](repeating: 0x24, count: 32)
        let hello = LinkFrame.hello(version: Handshake.protocolVersion, role: .watch, instance: instance, nonce: nonce)

        // Reflection: send the phone's own proof back as ours.
        let reflector = try RawLinkClient(port: phone.port!)
        reflector.send(hello)
        guard case .challenge(_, _, _, _, let phoneProof) = try #require(try reflector.readFrame()) else {
            Issue.record("expected a challenge")
            return
        }
        reflector.send(.proof(phoneProof))
        #expect(
            try reflector.readUntilClosed().contains {
                if case .error(.authenticationFailed, _) = $0 { true } else { false }
            })

        // Replay: a proof that was valid in one session is useless in the next (fresh phone nonce).
        let honest = try RawLinkClient(port: phone.port!)
        honest.send(hello)
        guard
            case .challenge(let version, _, let phoneInstance, let phoneNonce, _) = try #require(try honest.readFrame())
        else {
            Issue.record("expected a challenge")
            return
        }
        let transcript = HandshakeTranscript(
            version: version, dialer: HandshakeParticipant(role: .watch, instance: instance, nonce: nonce),
            listener: HandshakeParticipant(role: .phone, instance: phoneInstance, nonce: phoneNonce))
        let recordedProof = authenticator.proof(for: transcript.bytes(provenBy: .watch))
        honest.send(.proof(recordedProof))
        #expect(try honest.readFrame() == .welcome)

        let replayer = try RawLinkClient(port: phone.port!)
        replayer.send(hello)
        _ = try replayer.readFrame()
        replayer.send(.proof(recordedProof))
        #expect(
            try replayer.readUntilClosed().contains {
                if case .error(.authenticationFailed, _) = $0 { true } else { false }
            })
    }

    @Test("a context update made while a notification is handled counts at once: status names its generation")
    func contextUpdateInsideANotification() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer { phone.shutdown() }
        // As phoned does: a message arrives, the app pushes, then reads the generation it was given.
        let seen = Recorder<(before: UInt64?, after: UInt64?)>()
        try await phone.on { link in
            let previous = link.onNotification
            link.onNotification = { notification in
                previous(notification)
                guard case .messageReceived = notification else { return }
                let before = link.status().contextGenerationSent
                try? link.updateApplicationContext(Array("pushed while handling".utf8))
                seen.record((before, link.status().contextGenerationSent))
            }
        }
        _ = await watch.send(Array("edit".utf8))
        let pushes = try await seen.wait(for: "the push inside the notification") { !$0.isEmpty }
        #expect(pushes.first?.after == (pushes.first?.before ?? 0) + 1, "\(pushes)")
    }

    @Test("transfers flow both ways in order and are finished on ack; outstanding ones are listed and cancellable")
    func transfers() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer { phone.shutdown() }
        // The app processes each transfer durably, then tells the link.
        for endpoint in [phone, watch] {
            try await endpoint.on { link in
                let previous = link.onNotification
                link.onNotification = { notification in
                    previous(notification)
                    if case .userInfoReceived(let key, _) = notification { link.transferProcessed(key) }
                }
            }
        }
        for index in 1...20 {
            let payload = Array("edit-\(index)".utf8)
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UInt64, any Error>) in
                watch.loop.execute { watch.endpoint.transferUserInfo(payload) { continuation.resume(with: $0) } }
            }
        }
        let received = try await phone.notifications.wait(for: "20 transfers") {
            $0.filter { if case .userInfoReceived = $0 { true } else { false } }.count == 20
        }
        let payloads = received.compactMap { notification -> String? in
            if case .userInfoReceived(_, let payload) = notification { return String(decoding: payload, as: UTF8.self) }
            return nil
        }
        #expect(payloads == (1...20).map { "edit-\($0)" })
        try await watch.notifications.wait(for: "finished") {
            $0.contains(.transferFinished(sequence: 20, payload: Array("edit-20".utf8)))
        }
        #expect(try await watch.on { $0.outstandingTransfers() }.isEmpty)

        // With the phone gone, new transfers wait in the outbox and the unsent ones can be cancelled.
        phone.shutdown()
        try await watch.waitUntil(linked: false)
        for index in 21...23 {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UInt64, any Error>) in
                watch.loop.execute {
                    watch.endpoint.transferUserInfo(Array("edit-\(index)".utf8)) { continuation.resume(with: $0) }
                }
            }
        }
        let outstanding = try await watch.on { $0.outstandingTransfers() }
        #expect(outstanding.map(\.sequence) == [21, 22, 23])
        _ = try await watch.on { try $0.cancelTransfer(sequence: 22) }
        #expect(try await watch.on { $0.outstandingTransfers() }.map(\.sequence) == [21, 23])
        await #expect(throws: LinkError.unknownTransfer(sequence: 99)) {
            try await watch.on { try $0.cancelTransfer(sequence: 99) }
        }
        watch.shutdown()
        let reopened = try LinkStateDirectory(root: directory.appending("watch")) { [UInt8](repeating: 0, count: 16) }
        #expect(reopened.outbox.pending().map(\.sequence) == [21, 23], "the outbox and the cancel survive a restart")
    }

    @Test(
        "an append the log refuses fails alone: the ones numbered after it are numbered again, so the outbox has no gap"
    )
    func refusedAppendRenumbers() async throws {
        let directory = try TemporaryDirectory("link-refused-append")
        // The session admits more than the outbox log takes (65,536 bytes): the log is what refuses.
        let (phone, watch) = try await linkedPair(directory, key: key) { $0.maximumUserInfoBytes = 100_000 }
        defer { phone.shutdown() }
        let outcomes = Recorder<(String, String)>()
        let payloads: [(String, [UInt8])] = [
            ("a", [1]), ("big", [UInt8](repeating: 2, count: 70_000)), ("c", [3]),
        ]
        try await watch.on { link in
            // One turn: "a" commits alone, "big" and "c" wait and go together in the next commit.
            for (name, payload) in payloads {
                link.transferUserInfo(payload) { result in
                    switch result {
                    case .success(let sequence): outcomes.record((name, "queued \(sequence)"))
                    case .failure(let error): outcomes.record((name, "\(error)"))
                    }
                }
            }
        }
        let three = try await outcomes.wait(for: "three outcomes") { $0.count == 3 }
        let byName = Dictionary(uniqueKeysWithValues: three.map { ($0.0, $0.1) })
        #expect(byName["a"] == "queued 1")
        #expect(byName["big"]?.contains("exceeds the maximum") == true, "\(three)")
        // "c" was written after "big" in the same commit, so the log refused it too (no gap); it
        // was numbered anew and went in the next commit, its producer none the wiser.
        #expect(byName["c"] == "queued 2", "\(three)")
        let next = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UInt64, any Error>) in
            watch.loop.execute { watch.endpoint.transferUserInfo([4]) { continuation.resume(with: $0) } }
        }
        #expect(next == 3)
        watch.shutdown()
        let reopened = try LinkStateDirectory(root: directory.appending("watch")) { [UInt8](repeating: 0, count: 16) }
        #expect(reopened.outbox.pending().map(\.payload) == [[1], [3], [4]])
        #expect(reopened.outbox.pending().map(\.sequence) == [1, 2, 3])
    }

    @Test("16 producers, each asking again when it hears back: every commit after the first carries all 16")
    func groupCommitTakesEveryProducer() async throws {
        let directory = try TemporaryDirectory("link-group-commit")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer { phone.shutdown() }
        let done = Recorder<UInt64>()
        try await watch.on { link in
            let total = 160
            var issued = 0
            func produce() {
                guard issued < total else { return }
                issued += 1
                link.transferUserInfo([UInt8(issued % 256)]) { result in
                    if case .success(let sequence) = result { done.record(sequence) }
                    produce()
                }
            }
            for _ in 0..<16 { produce() }
        }
        _ = try await done.wait(for: "160 transfers on disk") { $0.count == 160 }
        // The first call commits alone (nothing was in flight), the other 15 wait; from then on each
        // commit takes all 16. (Starting the next commit at the first producer's answer alternated
        // commits of one transfer and of sixteen: nearly twice as many.)
        #expect(try await watch.on { $0.groupCommits } == 11)
    }

    @Test("launch reaches a linked watch and is dropped, not queued, when the watch is away")
    func launch() async throws {
        let directory = try TemporaryDirectory("link")
        let (phone, watch) = try await linkedPair(directory, key: key)
        defer { phone.shutdown() }
        try await phone.on { $0.launch(Array("run".utf8)) }
        try await watch.notifications.wait(for: "launch") { $0.contains(.launchReceived(payload: Array("run".utf8))) }
        watch.shutdown()
        try await phone.waitUntil(linked: false)
        try await phone.on { $0.launch(Array("late".utf8)) }
        try await phone.notifications.wait(for: "dropped") { $0.contains(.launchDropped) }
    }
}
