import LinkProtocol
import Nodes
import Testing
import WorkoutModel

/// The one scheduler, rule by rule: each test posts events to a runner over a node that does what
/// it is told (`TurnNode`) and asserts the whole list of what the runner asked of its host.
@Suite("Node runner: the order of a node's events and actions")
struct NodeRunnerTests {
    let ports = RecordingPorts()
    var runner: NodeRunner<TurnNode> { ports.runner }

    static let reply = TurnNode.Action.node(.reply(AdminRequestID(1), .ok(text: "done", json: "")))

    @Test("events are fed one at a time in the order they came: one posted while another is handled waits its turn")
    func oneAtATime() {
        ports.onCarryOut = { [ports] in
            if $0 == "say post b" { ports.runner.post(.inner(.go("b", [.say("b done")]))) }
        }
        runner.post(.inner(.go("a", [.say("post b"), .say("a done")])))
        #expect(ports.log == ["feed a", "carry say post b", "carry say a done", "feed b", "carry say b done"])
    }

    @Test("write barrier: a durable write goes to the write queue; each action after it waits until it has landed")
    func writeBarrier() {
        runner.post(.inner(.go("a", [.write("w1"), .say("s1"), .write("w2"), .say("s2")])))
        #expect(ports.log == ["feed a", "begin 1 write w1", "begin 2 write w2"])
        ports.log = []
        runner.landed(through: 1)
        #expect(ports.log == ["carry say s1"])
        ports.log = []
        runner.landed(through: 2)
        #expect(ports.log == ["carry say s2"])
    }

    @Test("an action waits for the writes of earlier events too, and in order behind the actions already waiting")
    func waitsBehindEarlierEvents() {
        runner.post(.inner(.go("a", [.write("w1"), .say("s1")])))
        runner.post(.inner(.go("b", [.say("s2")])))
        runner.landed(through: 1)
        #expect(ports.log == ["feed a", "begin 1 write w1", "feed b", "carry say s1", "carry say s2"])
    }

    @Test(
        "query bypass: a query's reply goes at once past the writes in flight; its other actions and a command's reply wait"
    )
    func queryBypass() {
        runner.post(.inner(.go("a", [.write("w1")])))
        runner.post(.inner(.query("q", [.say("q side"), Self.reply])))
        runner.post(.inner(.command("c", [Self.reply])))
        #expect(ports.log == ["feed a", "begin 1 write w1", "feed q", "carry reply", "feed c"])
        ports.log = []
        runner.landed(through: 1)
        #expect(ports.log == ["carry say q side", "carry reply"])
    }

    @Test(
        "failure first: a failed write drops what waits, skips later writes, and the node hears of it before anything else"
    )
    func failureFirst() {
        runner.post(.inner(.go("a", [.write("w1"), .say("s1")])))
        runner.post(.inner(.go("b", [.say("s2")])))
        ports.log = []
        runner.landed(through: 1, failure: "EIO")
        #expect(ports.log == ["feed reported durableWriteFailed(reason: \"EIO\")"])
        ports.log = []
        // Only the way out is left: what the node does now goes at once, and no write begins.
        runner.post(.inner(.go("c", [.write("w2"), .say("exit")])))
        #expect(ports.log == ["feed c", "carry say exit"])
    }

    @Test("a failed action stops the rest of its list, and the node hears of it next")
    func failedActionStopsTheList() {
        ports.failing = ["say bad"]
        runner.post(.inner(.go("a", [.say("bad"), .say("after")])))
        runner.post(.inner(.go("b", [])))
        #expect(
            ports.log == [
                "feed a", "carry say bad", "feed reported durableWriteFailed(reason: \"EIO\")", "feed b",
            ])
    }

    @Test("end of turn: asked for behind the writes, it comes in a later turn, once every write has landed")
    func endOfTurn() {
        runner.post(.inner(.go("a", [.write("w1"), .node(.callAtEndOfTurn)])))
        #expect(ports.log == ["feed a", "begin 1 write w1"])
        runner.landed(through: 1)
        #expect(ports.log.last == "turn asked")
        // A write begun before the turn comes holds the end of turn until it lands.
        runner.post(.inner(.go("b", [.write("w2")])))
        ports.log = []
        runner.turn()
        #expect(ports.log.isEmpty)
        runner.landed(through: 2)
        #expect(ports.log == ["feed reported turnEnded"])
    }

    @Test(
        "reads: the node asks, the host reads, the node takes the event with what was read; what the host left out is unreadable"
    )
    func reads() {
        runner.post(.inner(.needs("n", TurnNode.document)))
        #expect(ports.log == ["feed n", "read 1 documents"])
        #expect(runner.node.inner.heard == ["n read: not readable"])
    }

    @Test(
        "a node that asks again for the reads it was given yields the turn: the events after it go on, it is fed again next turn"
    )
    func readsRepeated() {
        runner.post(.inner(.spin("s")))
        runner.post(.inner(.go("b", [.say("b done")])))
        let needs = NeedsReads(documents: [TurnNode.document: LinkedNodeTests.now])
        #expect(
            ports.log == [
                "feed s", "read 1 documents", "diagnose \(TurnDiagnostic.readsRepeated(needs))", "turn asked",
                "feed b", "carry say b done",
            ])
        ports.log = []
        runner.turn()
        #expect(
            ports.log == [
                "feed s", "read 1 documents", "diagnose \(TurnDiagnostic.readsRepeated(needs))", "turn asked",
            ])
    }

    @Test("turn budget: a turn feeds at most its budget of events, says so, and the rest goes on in the next turn")
    func turnBudget() {
        ports.onCarryOut = { [ports] in
            if $0 == "say fan out" { for i in 1...40 { ports.runner.post(.inner(.go("e\(i)", []))) } }
        }
        runner.post(.inner(.go("a", [.say("fan out")])))
        let budget = runner.budget.events
        let first = ["feed a", "carry say fan out"] + (1..<budget).map { "feed e\($0)" }
        #expect(ports.log == first + ["diagnose turn budget spent: \(budget) events fed", "turn asked"])
        ports.log = []
        runner.turn()
        #expect(ports.log == (budget...40).map { "feed e\($0)" })
    }

    @Test("the link's events are fed after the other events waiting, in the order they came")
    func linkAfterOthers() {
        ports.onCarryOut = { [ports] in
            guard $0 == "say arrive" else { return }
            ports.runner.linkArrived(.tick(now: ports.linkNow))
            ports.runner.post(.inner(.go("b", [])))
        }
        runner.post(.inner(.go("a", [.say("arrive")])))
        #expect(ports.fed == ["feed a", "feed b", "feed link tick"])
    }

    @Test(
        "link hold: while the intake's writes are in flight, bytes wait and are fed once the writes land; a tick is not held"
    )
    func linkHold() {
        runner.post(.inner(.go("intake", [.write("w1")])))
        runner.linkArrived(.bytesReceived(ConnectionID(7), [1, 2], now: ports.linkNow))
        runner.linkArrived(.bytesReceived(ConnectionID(7), [3], now: ports.linkNow))
        #expect(ports.fed == ["feed intake"])
        runner.landed(through: 1)
        // Joined into one event.
        #expect(ports.fed == ["feed intake", "feed link 3 bytes"])
        ports.log = []
        runner.post(.inner(.go("intake", [.write("w2")])))
        runner.linkArrived(.bytesReceived(ConnectionID(7), [4], now: ports.linkNow))
        runner.linkArrived(.tick(now: ports.linkNow))
        #expect(ports.fed == ["feed intake", "feed link 1 bytes", "feed link tick"])
    }

    @Test(
        "heartbeats: the engine's next wake-up goes out past the writes in flight (the latest supersedes any waiting)")
    func heartbeatsPassWrites() {
        // A command's writes hold no link event: a connection opened meanwhile is fed at once.
        runner.post(.inner(.command("edit", [.write("w1"), .say("s1")])))
        ports.log = []
        let nonce = [UInt8](repeating: 0, count: LinkFrame.nonceByteCount)
        runner.linkArrived(.connectionOpened(ConnectionID(1), nonce: nonce, now: ports.linkNow, source: nil))
        #expect(ports.log.count == 2 && ports.log[0] == "feed link connectionOpened")
        #expect(ports.log.last?.hasPrefix("carry link scheduleWakeUp") == true)
    }

    @Test("link hold: an admin command's writes hold nothing: what arrives meanwhile is fed at once")
    func commandWritesHoldNothing() {
        runner.post(.inner(.command("edit", [.write("w1")])))
        runner.linkArrived(.bytesReceived(ConnectionID(7), [1], now: ports.linkNow))
        #expect(ports.fed == ["feed edit", "feed link 1 bytes"])
    }

    @Test("bytes are fed a slice at a time")
    func slices() {
        let bytes = [UInt8](repeating: 0, count: runner.budget.sliceBytes * 2 + 5)
        runner.linkArrived(.bytesReceived(ConnectionID(7), bytes, now: ports.linkNow))
        let slice = runner.budget.sliceBytes
        #expect(ports.fed == ["feed link \(slice) bytes", "feed link \(slice) bytes", "feed link 5 bytes"])
    }

    @Test(
        "back-pressure: the host stops reading while more link events wait than a turn's budget can take, and reads again after"
    )
    func backPressure() {
        ports.onCarryOut = { [ports] in
            if $0 == "say flood" { for _ in 0..<100 { ports.runner.linkArrived(.tick(now: ports.linkNow)) } }
        }
        runner.post(.inner(.go("a", [.say("flood")])))
        #expect(ports.log.last == "pause reading")
        while ports.log.last != "resume reading", ports.fed.count < 200 {
            ports.log = []
            runner.turn()
        }
        #expect(ports.log.last == "resume reading")
    }

    @Test(
        "link held: its events wait unread and reading pauses while other events go on; let go, they are fed in order"
    )
    func linkHeldByTheHost() {
        runner.holdLink(true)
        #expect(ports.log == ["pause reading"])
        runner.linkArrived(.bytesReceived(ConnectionID(7), [1, 2], now: ports.linkNow))
        runner.post(.inner(.query("status", [Self.reply])))
        runner.linkArrived(.tick(now: ports.linkNow))
        #expect(ports.fed == ["feed status"])
        ports.log = []
        runner.holdLink(false)
        #expect(ports.log == ["feed link 2 bytes", "feed link tick", "resume reading"])
    }

    @Test("link held: an outbox's outcome comes after the link events that came before it, and before the later ones")
    func outcomeWhileLinkHeld() {
        runner.holdLink(true)
        runner.linkArrived(.tick(now: ports.linkNow))
        runner.postAfterHeld(.inner(.go("outcome", [])))
        runner.linkArrived(.bytesReceived(ConnectionID(7), [1], now: ports.linkNow))
        #expect(ports.fed.isEmpty)
        runner.holdLink(false)
        #expect(ports.fed == ["feed link tick", "feed outcome", "feed link 1 bytes"])
    }
}

/// A node that does what each event tells it (`TurnNode.Event`) and records what it hears.
struct TurnNode: ShelledNode {
    static let document = DocumentID(bytes: Array(repeating: 5, count: 16))

    enum Event: Sendable, CustomStringConvertible {
        /// Named, with the actions to emit.
        case go(String, [Action])
        /// An admin request that only reads (its reply may pass the writes).
        case query(String, [Action])
        /// An admin request that changes something.
        case command(String, [Action])
        /// Taken once `document` is read.
        case needs(String, DocumentID)
        /// Asks for the same read whatever it is given.
        case spin(String)
        case link(LinkNotification)
        case reported(ShellReport)

        var description: String {
            switch self {
            case .go(let name, _), .query(let name, _), .command(let name, _), .needs(let name, _), .spin(let name):
                name
            case .link(let notification): "link \(notification)"
            case .reported(let report): "reported \(report)"
            }
        }
    }

    enum Action: Equatable, Sendable, CustomStringConvertible {
        /// A durable write of the node's store.
        case write(String)
        /// Carried out at once.
        case say(String)
        case node(NodeAction)

        var description: String {
            switch self {
            case .write(let name): "write \(name)"
            case .say(let name): "say \(name)"
            case .node(.reply): "reply"
            case .node(let action): "\(action)"
            }
        }
    }

    var heard: [String] = []

    mutating func handle(_ event: Event, now: Timestamp, linkNow _: LinkInstant, reads: Reads) throws(NeedsReads)
        -> [Action]
    {
        switch event {
        case .go(_, let actions), .query(_, let actions), .command(_, let actions):
            return actions
        case .needs(let name, let id):
            guard let read = reads.documents[id] else { throw NeedsReads(documents: [id: LinkedNodeTests.now]) }
            heard.append("\(name) read: \((try? read.get()).map { _ in "ok" } ?? "not readable")")
        case .spin:
            throw NeedsReads(documents: [Self.document: LinkedNodeTests.now])
        case .link, .reported:
            heard.append("\(event)")
        }
        return []
    }

    static func reported(_ report: ShellReport) -> Event { .reported(report) }
    static func nodeAction(_ action: Action) -> NodeAction? {
        if case .node(let shared) = action { shared } else { nil }
    }
    static func linkNotified(_ notification: LinkNotification) -> Event { .link(notification) }
    static func isQuery(_ event: Event) -> Bool {
        if case .query = event { true } else { false }
    }
    static func isAdminRequest(_ event: Event) -> Bool {
        switch event {
        case .query, .command: true
        default: false
        }
    }
    static func isStoreWrite(_ action: Action) -> Bool {
        if case .write = action { true } else { false }
    }
}

/// A host that records, in order, what the runner asks of it.
final class RecordingPorts: RunnerPorts {
    typealias Node = TurnNode
    private(set) var runner: NodeRunner<TurnNode>!
    var log: [String] = []
    /// Told of each action carried out (by its description), to post more from there.
    var onCarryOut: (String) -> Void = { _ in }
    /// Actions whose carrying out fails.
    var failing: Set<String> = []
    let linkNow = LinkedNodeTests.linkNow
    var wallNow: Timestamp { LinkedNodeTests.now }

    init() {
        runner = NodeRunner(LinkedNode(TurnNode(), link: LinkedNodeTests.engine(role: .phone)), ports: self)
    }

    /// The events fed, in order.
    var fed: [String] { log.filter { $0.hasPrefix("feed") } }

    func read(_ needs: NeedsReads, link: LinkEngine) -> Reads {
        log.append("read \(needs.documents.count) documents")
        return Reads()
    }

    func beginWrite(_ number: UInt64, _ action: LinkedNode<TurnNode>.Action) {
        log.append("begin \(number) \(Self.describe(action))")
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String { "EIO" }
    }

    func carryOut(_ action: LinkedNode<TurnNode>.Action) throws {
        // Of the engine's own actions only the wake-up is logged (the heartbeats' test).
        if case .link(let link, _) = action {
            if case .scheduleWakeUp = link { log.append("carry \(Self.describe(action))") }
            return
        }
        let description = Self.describe(action)
        log.append("carry \(description)")
        if failing.contains(description) { throw Failed() }
        onCarryOut(description)
    }

    func scheduleTurn() { log.append("turn asked") }
    func setReadingPaused(_ paused: Bool) { log.append(paused ? "pause reading" : "resume reading") }
    func diagnose(_ diagnostic: TurnDiagnostic) { log.append("diagnose \(diagnostic)") }

    func feeding(_ event: LinkedNode<TurnNode>.Event) {
        switch event {
        case .inner(let event): log.append("feed \(event)")
        case .link(.bytesReceived(_, let bytes, _)): log.append("feed link \(bytes.count) bytes")
        case .link(.tick): log.append("feed link tick")
        case .link(.connectionOpened): log.append("feed link connectionOpened")
        case .link(let event): log.append("feed link \(event)")
        default: log.append("feed \(event)")
        }
    }

    static func describe(_ action: LinkedNode<TurnNode>.Action) -> String {
        switch action {
        case .inner(let action): "\(action)"
        case .link(let action, _): "link \(action)"
        default: "\(action)"
        }
    }
}
