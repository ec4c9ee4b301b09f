import LinkProtocol
import Nodes
import SyncEngine
import Testing
import WorkoutModel

/// The node with its link engine inside: verbs routed to the engine, notifications taken as the
/// node's next steps in the same `handle` (or at the `.resume` after a link state write), appends
/// numbered again after a refusal, reads resumed.
@Suite("Linked node: the node and its link engine composed")
struct LinkedNodeTests {
    static let now = Timestamp(secondsSinceEpoch: 1_780_000_000)
    static let linkNow = LinkInstant(.seconds(5))
    static let peer = InstanceID(bytes: Array(repeating: 9, count: 16))!

    /// An engine as a daemon restores it; `activated`: it has met its peer before.
    static func engine(role: LinkRole, activated: Bool = true) -> LinkEngine {
        LinkEngine(
            configuration: LinkConfiguration(role: role), instance: InstanceID(bytes: Array(repeating: 1, count: 16))!,
            authenticator: NoAuthenticator(),
            restored: RestoredLinkState(
                knownPeer: activated ? peer : nil, outboxQueue: InstanceID(bytes: Array(repeating: 2, count: 16))!,
                complicationQueue: role == .phone ? InstanceID(bytes: Array(repeating: 3, count: 16))! : nil),
            seed: 1)
    }

    static func handle(
        _ node: inout LinkedNode<ScriptedNode>, _ event: LinkedNode<ScriptedNode>.Event, reads: Reads = Reads()
    ) throws -> [LinkedNode<ScriptedNode>.Action] {
        try node.handle(event, now: now, linkNow: linkNow, reads: reads)
    }

    static func appends(_ actions: [LinkedNode<ScriptedNode>.Action]) -> [(UInt64, [UInt8], String?)] {
        actions.compactMap {
            if case .link(.appendTransfer(let sequence, let payload, _), let run) = $0 {
                (sequence, payload, run)
            } else {
                nil
            }
        }
    }

    @Test(
        "a context update is handed to the engine; the list ends after its slot write, and its answer is the node's step at the .resume"
    )
    func contextAnsweredAtResume() throws {
        var node = LinkedNode(ScriptedNode(), link: Self.engine(role: .phone))
        let actions = try Self.handle(&node, .inner(.script([.link(.updateContext([7], force: false))])))
        let persisted = try #require(
            actions.firstIndex { if case .link(.persistContextSlot, _) = $0 { true } else { false } })
        let notified = try #require(actions.firstIndex { $0 == .link(.notify(.contextQueued(generation: 1))) })
        #expect(persisted < notified, "the slot is written before the update is reported queued")
        // The shell begins the slot's write before the node takes the steps it raised.
        #expect(actions.last == .resume)
        #expect(node.inner.heard.isEmpty && node.isWaiting)
        let resumed = try Self.handle(&node, .resume)
        #expect(resumed.isEmpty)
        #expect(node.inner.heard == ["link contextQueued(generation: 1)"])
        #expect(!node.isWaiting)
    }

    @Test(
        "transfers are numbered in order; after a refused append the later ones are numbered again, the producer none the wiser"
    )
    func refusedAppendRenumbers() throws {
        var node = LinkedNode(ScriptedNode(), link: Self.engine(role: .watch))
        let asked = try Self.handle(
            &node,
            .inner(
                .script([
                    .link(.transferUserInfo([1], run: "a")), .link(.transferUserInfo([2], run: "b")),
                    .link(.transferUserInfo([3], run: "c")),
                ])))
        #expect(Self.appends(asked).map(\.0) == [1, 2, 3])
        #expect(Self.appends(asked).map(\.2) == ["a", "b", "c"])

        _ = try Self.handle(&node, .link(.transferPersisted(sequence: 1, payload: [1])))
        let refused = try Self.handle(&node, .appendRefused(sequence: 2, complication: false, reason: "disk full"))
        #expect(node.inner.heard == ["reported transferNotQueued([2], reason: \"disk full\")"])
        let marker = try #require(refused.firstIndex { $0 == .appendsRenumbered(complication: false) })
        let again = Self.appends(Array(refused[marker...]))
        #expect(again.map(\.0) == [2] && again.map(\.1) == [[3]] && again.map(\.2) == ["c"])
        #expect(Self.appends(Array(refused[..<marker])).isEmpty, "nothing is asked for under the void numbers")

        // The next transfer follows the renumbered one.
        let next = try Self.handle(&node, .inner(.script([.link(.transferUserInfo([4], run: nil))])))
        #expect(Self.appends(next).map(\.0) == [3])
    }

    @Test("a transfer the link would refuse is never numbered: the node hears why")
    func admissionRefused() throws {
        var node = LinkedNode(ScriptedNode(), link: Self.engine(role: .watch, activated: false))
        let actions = try Self.handle(&node, .inner(.script([.link(.transferUserInfo([1], run: nil))])))
        #expect(Self.appends(actions).isEmpty)
        #expect(node.inner.heard.count == 1)
        #expect(node.inner.heard.first?.hasPrefix("reported transferNotQueued([1]") == true)
    }

    @Test("a complication's admin request hears its sequence once the shell reports it durable")
    func complicationQueued() throws {
        var node = LinkedNode(ScriptedNode(), link: Self.engine(role: .phone))
        let request = AdminRequestID(7)
        let asked = try Self.handle(
            &node, .inner(.script([.link(.transferComplication([5], asCurrent: true, request))])))
        #expect(asked.contains(.link(.appendTransfer(sequence: 1, payload: [5], complication: true))))
        #expect(node.inner.heard.isEmpty, "not answered before the append is durable")
        _ = try Self.handle(&node, .link(.complicationPersisted(sequence: 1, payload: [5])))
        #expect(
            node.inner.heard == [
                "reported complicationQueued(admin#7, asCurrent: true, Swift.Result<Swift.UInt64, Nodes.ReadFailure>.success(1))"
            ])
    }

    @Test("a step that needs reads ends the list with .resume; .resume throws until the reads come, then takes it")
    func resumeWithReads() throws {
        var scripted = ScriptedNode()
        scripted.needsReadsOnLaunchDropped = true
        var node = LinkedNode(scripted, link: Self.engine(role: .phone))
        // A launch while unlinked is dropped: the node hears it, with no write before.
        let first = try Self.handle(&node, .inner(.script([.link(.launch([7]))])))
        #expect(!first.contains { $0.isLinkStateWrite })
        #expect(first.last == .resume)
        #expect(node.isWaiting && node.inner.heard.isEmpty)
        #expect(throws: NeedsReads.self) { try Self.handle(&node, .resume) }
        #expect(node.isWaiting, "a throw changes nothing")
        let reads = Reads(documents: [ScriptedNode.document: .failure(ReadFailure("gone"))])
        let resumed = try Self.handle(&node, .resume, reads: reads)
        #expect(resumed.isEmpty)
        #expect(node.inner.heard == ["link launchDropped"])
        #expect(!node.isWaiting)
    }

    @Test("heartbeats pass the writes in flight, never a seal; anything else waits")
    func heartbeatsPassWrites() {
        typealias Action = LinkedNode<ScriptedNode>.Action
        let connection = ConnectionID(1)
        let writes: [Action] = [.link(.persistPeer(Self.peer))]
        let me = HandshakeParticipant(role: .watch, instance: Self.peer, nonce: Array(repeating: 1, count: 32))
        let transcript = HandshakeTranscript(version: 1, dialer: me, listener: me)
        let seal = FrameSeal(authenticator: NoAuthenticator(), transcript: transcript, sender: .watch)
        let sealWaits = writes + [.link(.seal(connection, seal))]
        for heartbeat: Action in [
            .link(.send(connection, .ping(token: 1))), .link(.send(connection, .pong(token: 1))),
            .link(.scheduleWakeUp(at: Self.linkNow)),
        ] {
            #expect(heartbeat.passesWrites(waiting: writes))
            #expect(!heartbeat.passesWrites(waiting: sealWaits))
        }
        #expect(!Action.link(.send(connection, .launch(payload: [1]))).passesWrites(waiting: writes))
        #expect(!Action.messageAttempt(id: 1, run: nil).passesWrites(waiting: []))
    }
}

/// A node that does what it is told (`script`) and records what it hears.
struct ScriptedNode: ShelledNode {
    static let document = DocumentID(bytes: Array(repeating: 4, count: 16))

    enum Event: Sendable {
        case script([NodeAction])
        /// As `script`, from an admin request.
        case command([NodeAction])
        case link(LinkNotification)
        case reported(ShellReport)
    }

    enum Action: Equatable, Sendable {
        case node(NodeAction)
    }

    static func isStoreWrite(_ action: Action) -> Bool { false }

    var heard: [String] = []
    /// Hearing `launchDropped` needs a read of `document` (the phone's runs known by summary).
    var needsReadsOnLaunchDropped = false

    mutating func handle(_ event: Event, now: Timestamp, linkNow _: LinkInstant, reads: Reads) throws(NeedsReads)
        -> [Action]
    {
        switch event {
        case .script(let actions), .command(let actions):
            return actions.map(Action.node)
        case .link(let notification):
            if needsReadsOnLaunchDropped, case .launchDropped = notification, reads.documents.isEmpty {
                throw NeedsReads(documents: [Self.document: LinkedNodeTests.now])
            }
            heard.append("link \(notification)")
        case .reported(let report):
            heard.append("reported \(report)")
        }
        return []
    }

    static func reported(_ report: ShellReport) -> Event { .reported(report) }
    static func nodeAction(_ action: Action) -> NodeAction? {
        if case .node(let shared) = action { shared } else { nil }
    }
    static func linkNotified(_ notification: LinkNotification) -> Event { .link(notification) }
    static func isQuery(_ event: Event) -> Bool { false }
    static func isAdminRequest(_ event: Event) -> Bool {
        if case .command = event { true } else { false }
    }
}

/// Proofs that always pass: these tests never run a handshake.
struct NoAuthenticator: HandshakeAuthenticator {
    func proof(for transcript: [UInt8]) -> [UInt8] { Array(repeating: 0, count: 32) }
    func isValid(_ proof: [UInt8], for transcript: [UInt8]) -> Bool { true }
    func proof(forParts parts: [ArraySlice<UInt8>]) -> [UInt8] { Array(repeating: 0, count: 32) }
    func isValid(_ proof: ArraySlice<UInt8>, forParts parts: [ArraySlice<UInt8>]) -> Bool { true }
}
