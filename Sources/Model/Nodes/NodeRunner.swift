import LinkProtocol
import WorkoutModel

/// What a host gives the runner: the clocks, the reads, the write queue and the hands that carry
/// out actions. The daemons' shell (`NodeShell`) and the simulator's host (`SimHost`) are the two
/// hosts; they differ here only (docs/ARCHITECTURE.md, "One scheduler").
package protocol RunnerPorts<Node>: AnyObject {
    associatedtype Node: ShelledNode
    /// The wall clock, and the link's monotonic clock, now.
    var wallNow: Timestamp { get }
    var linkNow: LinkInstant { get }
    /// Reads what the node asked for, once every durable write begun so far is on disk (the host
    /// waits for them; their `landed` reports still come as usual). What it leaves out the runner
    /// answers as unreadable.
    func read(_ needs: NeedsReads, link: LinkEngine) -> Reads
    /// Begins durable write `number` (numbered from 1), after those before it; the host answers with
    /// `NodeRunner.landed(through:failure:)` once it is on disk or has failed.
    func beginWrite(_ number: UInt64, _ action: LinkedNode<Node>.Action)
    /// Carries out an action that is not a durable write, now; throws when it failed.
    func carryOut(_ action: LinkedNode<Node>.Action) throws
    /// Calls `NodeRunner.turn()` once the loop has handled what it has in hand now.
    func scheduleTurn()
    /// Stops or resumes reading the link (TCP then slows the peer).
    func setReadingPaused(_ paused: Bool)
    /// A turn cut short, and why.
    func diagnose(_ diagnostic: TurnDiagnostic)
    /// Told of each event just before the node takes it, and once it has.
    func feeding(_ event: LinkedNode<Node>.Event)
    func fed(_ event: LinkedNode<Node>.Event)
}

extension RunnerPorts {
    package func feeding(_ event: LinkedNode<Node>.Event) {}
    package func fed(_ event: LinkedNode<Node>.Event) {}
}

/// Why a turn ended before the work in hand did (the rest goes on in the next turn).
package enum TurnDiagnostic: Equatable, Sendable, CustomStringConvertible {
    /// The turn fed its budget of events.
    case budgetSpent(events: Int)
    /// The node asked again for reads it had just been given, with nothing changed: the event is
    /// fed again next turn, and the events after it, and the loop's other work, go on meanwhile.
    case readsRepeated(NeedsReads)

    package var description: String {
        switch self {
        case .budgetSpent(let events): "turn budget spent: \(events) events fed"
        case .readsRepeated(let needs): "the node asked again for the reads it was given: \(needs)"
        }
    }
}

/// How much one turn may do.
package struct RunnerBudget: Sendable {
    /// Events fed per turn before the rest waits for the next (a drain of thousands of transfers
    /// leaves room for admin requests, heartbeats and other connections).
    package var events = 32
    /// Bytes are fed at most this many at a time (the engine takes a frame split anywhere): the
    /// transfers one slice carries are merged in one step.
    package var sliceBytes = 16 << 10
    /// How many link events may wait, and how many actions may wait for writes, before the
    /// link stops reading.
    package var backlog = 64
    package var waitingActions = 4096

    package init() {}
}

/// The one scheduler of a node (docs/ARCHITECTURE.md, "One scheduler"): it decides in what order the
/// node takes its events and in what order, and when, the host carries out its actions. Events are
/// fed one at a time (nothing re-enters the node): a failed durable action first, then a `.resume`,
/// then the events in the order they came, then the link's, bytes a slice at a time, `budget` events
/// per turn; once all is handled and every write has landed, a waiting end of turn. Durable writes go
/// to the host's write queue, never waited for; an action after a write waits until it has landed,
/// except a query's reply and a heartbeat (docs/PROTOCOL.md, "The order of writes"). The link's
/// events that arrive while the intake's writes are in flight are held (`LinkEventHold`). A failed
/// durable action stops everything after it and is reported to the node, which exits. When too much
/// waits, the host stops reading the link.
package final class NodeRunner<Node: ShelledNode> {
    package typealias Event = LinkedNode<Node>.Event
    package typealias Action = LinkedNode<Node>.Action

    package private(set) var node: LinkedNode<Node>
    private unowned let ports: any RunnerPorts<Node>
    /// The events waiting, `queue[head...]`, and the link's, `linkBacklog[linkHead...]`, fed after them.
    private var queue: [Event] = []
    private var head = 0
    private var linkBacklog: [LinkEngine.Event] = []
    private var linkHead = 0
    /// The node left steps waiting for reads: `.resume` is its next event.
    private var resumeNext = false
    /// A failed durable action, fed to the node before any other waiting event.
    private var failure: Node.Event?
    /// The node asked for the end of its turn (`callAtEndOfTurn`), and it waits for the writes.
    private var turnEndAsked = false
    private var turnEndWaiting = false
    private var turnScheduled = false
    /// Events whose reads repeated, fed again at the next turn.
    private var deferred: [Event] = []
    private var draining = false
    private var stopped = false
    private var readingPaused = false
    /// The host holds the link's events (`holdLink`): they wait, unread, until it lets go.
    private var linkHeld = false
    /// The outboxes' outcomes that came while the link was held, each after the link events that
    /// had come before it (`linkBacklog[..<through]`).
    private var outcomesHeld: [(through: Int, event: Event)] = []
    /// Durable writes begun and landed so far; the actions waiting for the writes begun before them.
    package private(set) var writesBegun: UInt64 = 0
    package private(set) var writesLanded: UInt64 = 0
    private var waiting: [(after: UInt64, action: Action)] = []
    /// Set at the first failed durable action: only the way out is left.
    package private(set) var hasFailed = false
    private var hold = LinkEventHold()
    private var busySince = LinkInstant(.zero)
    /// Events fed since the runner last ran out of work (the simulator's check of endless work), and
    /// the most one turn has fed (its check that the loop's other work is never held up longer).
    package private(set) var fedSinceIdle = 0
    package private(set) var longestTurn = 0
    package let budget: RunnerBudget

    package init(_ node: LinkedNode<Node>, ports: any RunnerPorts<Node>, budget: RunnerBudget = RunnerBudget()) {
        self.node = node
        self.ports = ports
        self.budget = budget
    }

    /// Whether events wait to be fed.
    package var hasWork: Bool {
        !stopped
            && (failure != nil || resumeNext || head < queue.count || (!linkHeld && linkHead < linkBacklog.count)
                || turnEndAsked || !deferred.isEmpty)
    }

    /// Whether durable writes are in flight.
    package var isWriting: Bool { writesLanded < writesBegun }

    // MARK: Events in

    /// Feeds `event`, after the ones already waiting.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    package func post(_ event: Event) {
        queue.append(event)
        drain()
    }

    /// A link event: fed after the others, or held while the intake's writes are in flight.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    package func linkArrived(_ event: LinkEngine.Event) {
        #if SIMULATION_MUTATION_NO_HOLD
            linkBacklog.append(event)
        #else
            let busy = isWriting && !hasFailed ? ports.linkNow.sinceOrigin - busySince.sinceOrigin : nil
            linkBacklog += hold.arrived(event, writesBusyFor: busy)
        #endif
        drain()
    }

    /// An outbox's outcome, after the link events held before it.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    package func postAfterHeld(_ event: Event) {
        linkBacklog += hold.release()
        guard !linkHeld else { return outcomesHeld.append((linkBacklog.count, event)) }
        queue += linkBacklog[linkHead...].map { .link($0) }
        linkBacklog = []
        linkHead = 0
        post(event)
    }

    /// The host's turn, asked for with `scheduleTurn`: a waiting end of turn is reported once the
    /// writes have landed; the work the last turn left goes on.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    package func turn() {
        turnScheduled = false
        queue.insert(contentsOf: deferred, at: head)
        deferred = []
        if turnEndAsked {
            turnEndAsked = false
            turnEndWaiting = true
        }
        drain()
    }

    /// Writes through `number` are on disk, or `failure` says why the last of them is not: the
    /// actions that waited for them are carried out, and the link events they held are fed.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    package func landed(through number: UInt64, failure: String? = nil) {
        guard !hasFailed, !stopped else { return }
        writesLanded = number
        if let failure {
            failed(failure)
            return drain()
        }
        // As in `drain`: what these actions raise waits until they are all carried out.
        let wasDraining = draining
        draining = true
        while let first = waiting.first, first.after <= writesLanded {
            waiting.removeFirst()
            guard carryOut(first.action) else { break }
        }
        draining = wasDraining
        linkBacklog += hold.landed(through: writesLanded)
        drain()
    }

    /// Holds the link's events, or lets them go (the host found a directory that what the link brings
    /// must be written to read-only, then writable again): while held, none is fed, the host stops
    /// reading the link, and everything else (admin requests, timers) goes on. The peer sees no
    /// answer, not even to its heartbeats, so it drops the link; nothing is acknowledged meanwhile.
    package func holdLink(_ held: Bool) {
        guard held != linkHeld else { return }
        linkHeld = held
        guard !held else { return pauseReadingIfBehind() }
        for (through, event) in outcomesHeld {
            queue += linkBacklog[linkHead..<max(linkHead, through)].map { .link($0) }
            queue.append(event)
            linkHead = max(linkHead, through)
        }
        outcomesHeld = []
        drain()
    }

    /// The process is gone (the simulator's crash): nothing more is fed or carried out.
    package func stop() { stopped = true }

    // MARK: The turn

    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    private func drain() {
        guard !draining, !stopped else { return }
        draining = true
        defer { draining = false }
        var fed = 0
        while !stopped {
            let event: Event
            if let failed = failure {
                failure = nil
                event = .inner(failed)
            } else if resumeNext || head < queue.count || (!linkHeld && linkHead < linkBacklog.count) {
                #if !SIMULATION_MUTATION_NO_BUDGET
                    guard fed < budget.events else {
                        ports.diagnose(.budgetSpent(events: fed))
                        scheduleTurn()
                        break
                    }
                #endif
                if resumeNext {
                    resumeNext = false
                    event = .resume
                } else if head < queue.count {
                    event = queue[head]
                    head += 1
                } else {
                    event = .link(nextLinkSlice())
                }
            } else if turnEndWaiting, !isWriting, hold.isEmpty {
                turnEndWaiting = false
                event = .inner(Node.reported(.turnEnded))
            } else {
                fedSinceIdle = 0
                break
            }
            fed += 1
            fedSinceIdle += 1
            longestTurn = max(longestTurn, fed)
            run(event)
            if head > 1024 {
                queue.removeFirst(head)
                head = 0
            }
        }
        queue.removeFirst(head)
        head = 0
        linkBacklog.removeFirst(linkHead)
        linkHead = 0
        pauseReadingIfBehind()
    }

    /// The backlog's next event, bytes a slice at a time (the rest stays first in the backlog).
    private func nextLinkSlice() -> LinkEngine.Event {
        let event = linkBacklog[linkHead]
        guard case .bytesReceived(let connection, let bytes, let now) = event, bytes.count > budget.sliceBytes else {
            linkHead += 1
            return event
        }
        linkBacklog[linkHead] = .bytesReceived(connection, Array(bytes[budget.sliceBytes...]), now: now)
        return .bytesReceived(connection, Array(bytes[..<budget.sliceBytes]), now: now)
    }

    private func scheduleTurn() {
        guard !turnScheduled else { return }
        turnScheduled = true
        ports.scheduleTurn()
    }

    private func pauseReadingIfBehind() {
        let behind =
            linkHeld || waiting.count > budget.waitingActions || hold.isFull
            || linkBacklog.count - linkHead > budget.backlog
        guard behind != readingPaused, !stopped else { return }
        readingPaused = behind
        ports.setReadingPaused(behind)
    }

    /// Feeds one event: reads what the node asks for (every write begun before is on disk by then)
    /// until it can take the event, then hands its actions to the write queue or the host.
    @_specialize(exported:true,where Node == PhoneNode)
    @_specialize(exported:true,where Node == WatchNode)
    private func run(_ event: Event) {
        hold.feeding(event)
        ports.feeding(event)
        var reads = Reads()
        var actions: [Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try node.handle(event, now: ports.wallNow, linkNow: ports.linkNow, reads: reads)
                break
            } catch {
                guard !reads.answers(error) else {
                    // Nothing changed since it was given these: asking again would never end. The
                    // event is fed again next turn; the ones after it, and the loop's other work,
                    // go on meanwhile.
                    ports.diagnose(.readsRepeated(error))
                    deferred.append(event)
                    return scheduleTurn()
                }
                reads.add(ports.read(error, link: node.link), answering: error, link: node.link)
            }
        }
        ports.fed(event)
        let query = if case .inner(let inner) = event { Node.isQuery(inner) } else { false }
        for action in actions {
            if Self.isDurableWrite(action) {
                guard !hasFailed else { continue }
                if !isWriting { busySince = ports.linkNow }
                writesBegun += 1
                hold.sent(writesBegun)
                ports.beginWrite(writesBegun, action)
            } else if case .resume = action {
                resumeNext = true
            } else if hasFailed {
                // After a failed write only the way out is left: at once.
                carryOut(action)
            } else if passesWrites(action, query: query) {
                guard carryOut(action) else { return }
            } else {
                waiting.append((after: writesBegun, action))
            }
        }
    }

    /// Whether `action` goes now rather than after the writes begun before it: when none is in
    /// flight and nothing waits; a query's reply (it may show what is not on disk yet: it
    /// acknowledges no edit); a heartbeat, unless a seal waits (the latest wake-up supersedes any
    /// waiting).
    private func passesWrites(_ action: Action, query: Bool) -> Bool {
        #if SIMULATION_MUTATION_NO_BARRIER
            return true
        #else
            if waiting.isEmpty && !isWriting { return true }
            #if SIMULATION_MUTATION_QUERY_BYPASS
                // The mutant: any request's reply goes ahead, a command's (an edit) too.
                if action.answersWithoutWaiting { return true }
            #else
                if query && action.answersWithoutWaiting { return true }
            #endif
            // A closure, not `\.action`: a key path in this generic class is built anew at each call.
            guard action.passesWrites(waiting: waiting.lazy.map { $0.action }) else { return false }
            if action.isWakeUp { waiting.removeAll { $0.action.isWakeUp } }
            return true
        #endif
    }

    /// Carries out one action now; false (and the failure fed next) when it failed. The end of a turn
    /// is the runner's own: it comes in a later turn, once every write has landed.
    @discardableResult
    private func carryOut(_ action: Action) -> Bool {
        if case .inner(let inner) = action, case .callAtEndOfTurn? = Node.nodeAction(inner) {
            turnEndAsked = true
            scheduleTurn()
            return true
        }
        do {
            try ports.carryOut(action)
            return true
        } catch {
            failed("\(error)")
            return false
        }
    }

    /// Nothing after a failed durable action may run (an acknowledgement least of all): what waits is
    /// dropped, writes not begun yet are skipped, and the node hears of it next, before anything else.
    private func failed(_ reason: String) {
        hasFailed = true
        waiting.removeAll()
        failure = Node.reported(.durableWriteFailed(reason: reason))
    }

    /// Whether `action` goes to the write queue: the node's durable writes (its store's, the clock,
    /// the live version, a received file kept) and the link's state writes.
    package static func isDurableWrite(_ action: Action) -> Bool {
        switch action {
        case .inner(let inner): Node.nodeAction(inner)?.isDurableWrite ?? Node.isStoreWrite(inner)
        case .link(let action, _): action.isStateWrite
        case .messageAttempt, .appendsRenumbered, .resume: false
        }
    }
}

extension Reads {
    /// Whether these already answer everything `needs` asks for.
    func answers(_ needs: NeedsReads) -> Bool {
        needs.documents.keys.allSatisfy { documents[$0] != nil } && needs.samples.keys.allSatisfy { samples[$0] != nil }
            && (!needs.outstandingTransfers || outstandingTransfers != nil)
            && (!needs.outstandingFiles || outstandingFiles != nil)
    }

    /// Adds what the host read for `needs`; what it did not answer is unreadable (a document), absent
    /// (a sample), or the engine's (the files outstanding), so the node never asks forever.
    mutating func add(_ more: Reads, answering needs: NeedsReads, link: LinkEngine) {
        documents.merge(more.documents) { _, new in new }
        samples.merge(more.samples) { _, new in new }
        for id in needs.documents.keys where documents[id] == nil {
            documents[id] = .failure(ReadFailure("not readable"))
        }
        for id in needs.samples.keys where samples[id] == nil { samples[id] = .some(nil) }
        if needs.outstandingTransfers { outstandingTransfers = more.outstandingTransfers ?? outstandingTransfers ?? [] }
        if needs.outstandingFiles { outstandingFiles = link.outstandingFiles }
    }
}
