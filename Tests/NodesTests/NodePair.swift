import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import WatchEngine
import WorkoutModel

/// A `PhoneNode` and a `WatchNode` wired back to back in memory: one FIFO of events, the
/// WatchConnectivity channels as the link endpoint gives them to the nodes (the context slot,
/// latest wins and acknowledged; messages with exactly one outcome; the durable FIFO of transfers,
/// acknowledged after the phone processed them; launch), files as maps, and a manual clock. No
/// sockets, no processes, no real time.
struct NodePair {
    enum Delivery {
        case phone(PhoneNode.Event)
        case watch(WatchNode.Event)
    }

    var phone: PhoneNode
    var watch: WatchNode
    var now = Timestamp(secondsSinceEpoch: 1_780_000_000)
    private(set) var linked = false
    private var activated = false

    // The phone's document directory and state files.
    private(set) var phoneRuns: [DocumentID: WorkoutDocument] = [:]
    private(set) var phoneSplits: [DocumentID: SplitDocument] = [:]
    private(set) var tombstones: [DocumentID: Tombstone] = [:]
    // The watch's cache directory.
    private(set) var watchRuns: [DocumentID: WorkoutDocument] = [:]
    private(set) var watchSession: SessionRecord?

    // The link.
    static let phoneInstance = InstanceID(bytes: Array(repeating: 1, count: 16))!
    static let watchInstance = InstanceID(bytes: Array(repeating: 2, count: 16))!
    private let phoneID = phoneInstance
    private let watchID = watchInstance
    private var generation: UInt64 = 0
    private var slot: (generation: UInt64, payload: [UInt8])?
    private var slotAcknowledged: UInt64 = 0
    private(set) var outbox: [(sequence: UInt64, payload: [UInt8])] = []
    /// The phone's transfers (complications), in one queue here: the link's ordering between its two
    /// outboxes is the link engine's, tested in LinkProtocolTests.
    private(set) var phoneOutbox: [(sequence: UInt64, payload: [UInt8])] = []
    private var lastPhoneSequence: UInt64 = 0
    private var lastSequence: UInt64 = 0
    private var lastMessage: UInt64 = 0
    /// Each message on the wire (numbered here), with its sender and the id its node gave it.
    private var waitingMessages: [UInt64: (toWatch: Bool, id: UInt64)] = [:]
    private(set) var launchesDelivered = 0
    /// Files: what each side's inbox holds, and the samples the phone kept per run.
    private(set) var inbox: [TransferKey: [UInt8]] = [:]
    private(set) var phoneSamples: [DocumentID: [UInt8]] = [:]
    private var lastFile: UInt64 = 0

    private var queue: [Delivery] = []
    private(set) var phoneActions: [PhoneNode.Action] = []
    private(set) var watchActions: [WatchNode.Action] = []
    private var replies: [AdminRequestID: AdminResponse] = [:]
    private var lastRequest: UInt64 = 0
    private var lastFreshID: UInt8 = 0
    private(set) var exited: (phone: Int32?, watch: Int32?) = (nil, nil)

    init(complicationsPerDay: Int = 50) {
        phone = PhoneNode(
            engine: SyncEngine(settings: nil), live: LiveDriver(now: now, persistedVersion: nil),
            complicationsPerDay: complicationsPerDay)
        watch = WatchNode(engine: WatchEngine(), live: LiveDriver(now: now, persistedVersion: nil))
        deliver(.phone(.started(lastContext: nil)))
        deliver(.phone(.gatherFinished("0 documents", skipped: [])))
        deliver(.phone(.linkStarted(activated: false)))
        deliver(.watch(.started(lastContext: nil, skippedCacheFiles: [])))
    }

    // MARK: Driving it

    /// Feeds one event and everything it leads to, until both nodes are quiet.
    mutating func deliver(_ delivery: Delivery) {
        queue.append(delivery)
        drain()
    }

    /// Runs what waits, until both nodes are quiet.
    mutating func drain() {
        while !queue.isEmpty {
            let next = queue.removeFirst()
            switch next {
            case .phone(let event): runPhone(event)
            case .watch(let event): runWatch(event)
            }
        }
    }

    mutating func advance(by duration: Duration) { now = now.advanced(by: duration) }

    /// The link comes up: activation (the first time), the link and reachability on both sides; the
    /// context slot if unacknowledged, then the watch's queue in order.
    mutating func connect() {
        linked = true
        if !activated {
            activated = true
            queue.append(.phone(.link(.activated(peer: watchID))))
            queue.append(.watch(.link(.activated(peer: phoneID))))
        }
        queue.append(.phone(.link(.linkEstablished(peer: watchID))))
        queue.append(.watch(.link(.linkEstablished(peer: phoneID))))
        queue.append(.phone(.link(.reachabilityChanged(true))))
        queue.append(.watch(.link(.reachabilityChanged(true))))
        if let slot, slot.generation > slotAcknowledged { sendContext(slot) }
        for transfer in outbox { sendTransfer(transfer) }
        for transfer in phoneOutbox { sendPhoneTransfer(transfer) }
        drain()
    }

    /// The link goes down (a partition, or the peer stopped).
    mutating func disconnect() {
        linked = false
        queue.append(.phone(.link(.reachabilityChanged(false))))
        queue.append(.watch(.link(.reachabilityChanged(false))))
        for (id, waiting) in waitingMessages {
            let ended = LinkNotification.messageCompleted(id: waiting.id, .failed(.notReachable))
            queue.append(waiting.toWatch ? .phone(.link(ended)) : .watch(.link(ended)))
            waitingMessages[id] = nil
        }
        queue.append(.phone(.link(.linkLost(reason: "partition"))))
        queue.append(.watch(.link(.linkLost(reason: "partition"))))
        drain()
    }

    /// phonectl: the reply phoned gives.
    @discardableResult
    mutating func phonectl(_ command: PhoneCommand) -> AdminResponse {
        lastRequest += 1
        lastFreshID += 1
        let request = AdminRequestID(lastRequest)
        let fresh = DocumentID(bytes: Array(repeating: 0xA0, count: 15) + [lastFreshID])
        deliver(.phone(.admin(request, command, freshID: fresh, facts: facts(.phone))))
        return replies.removeValue(forKey: request) ?? AdminResponse.error("no reply")
    }

    /// watchctl: the reply watchd gives.
    @discardableResult
    mutating func watchctl(_ command: WatchCommand) -> AdminResponse {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        deliver(.watch(.admin(request, command, facts: facts(.watch))))
        return replies.removeValue(forKey: request) ?? AdminResponse.error("no reply")
    }

    /// watchctl, for a request answered later (`wait`): its number, the reply to be taken with `reply(to:)`.
    mutating func watchctlRequest(_ command: WatchCommand) -> AdminRequestID {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        deliver(.watch(.admin(request, command, facts: facts(.watch))))
        return request
    }

    /// The reply to `request`, once given.
    mutating func reply(to request: AdminRequestID) -> AdminResponse? { replies.removeValue(forKey: request) }

    /// A `Created` reply's ID (split create, start).
    func createdID(_ response: AdminResponse) -> DocumentID? {
        response.text.flatMap { DocumentID(codedText: $0) }
    }

    func facts(_ role: LinkRole) -> ShellFacts {
        let link = LinkStatus(
            role: role, instance: role == .phone ? phoneID : watchID, activated: activated, reachable: linked,
            linked: linked, peer: activated ? (role == .phone ? watchID : phoneID) : nil, watchAppForeground: true,
            contextGenerationSent: role == .phone ? slot?.generation : nil,
            contextGenerationAcknowledged: role == .phone ? slotAcknowledged : nil, contextGenerationReceived: nil,
            contextSender: nil, outboxDepth: role == .watch ? outbox.count : 0, handshakingConnections: 0)
        return ShellFacts(link: link, uptimeSeconds: 0, journalCounts: [:])
    }

    // MARK: The phone's shell

    private mutating func runPhone(_ event: PhoneNode.Event) {
        var reads = Reads()
        var actions: [PhoneNode.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try phone.handle(event, now: now, reads: reads)
                break
            } catch {
                for (id, _) in error.documents { reads.documents[id] = readPhone(id) }
            }
        }
        phoneActions += actions
        for action in actions {
            switch action {
            case .store(let write): store(write)
            case .loadRuns(let wanted):
                var loaded = Reads()
                for id in wanted.keys { loaded.documents[id] = readPhone(id) }
                queue.append(.phone(.runsLoaded(loaded)))
            case .rescan:
                queue.append(.phone(.rescanFinished(.success([]))))
            case .node(let shared):
                perform(shared, fromPhone: true)
            }
        }
    }

    private func readPhone(_ id: DocumentID) -> Result<WorkoutDocument, ReadFailure> {
        phoneRuns[id].map { .success($0) } ?? .failure(ReadFailure("no such file"))
    }

    private mutating func store(_ write: PhoneNode.StoreWrite) {
        switch write {
        case .writeSplit(let split): phoneSplits[split.id] = split
        case .removeSplitFile(let id): phoneSplits[id] = nil
        case .writeWorkout(let run): phoneRuns[run.id] = run
        case .removeWorkoutFile(let id, _): phoneRuns[id] = nil
        case .writeTombstone(let stub): tombstones[stub.id] = stub
        case .persistSettings, .persistEpoch, .persistComplicationBudget, .publishWorkout: break
        case .writeSamples(let key, let runID, _): phoneSamples[runID] = inbox[key]
        case .removeSamples(let id, _): phoneSamples[id] = nil
        case .moveSamples: break
        }
    }

    // MARK: The watch's shell

    private mutating func runWatch(_ event: WatchNode.Event) {
        var reads = Reads()
        var actions: [WatchNode.Action] = []
        while true {
            do throws(NeedsReads) {
                actions = try watch.handle(event, now: now, reads: reads)
                break
            } catch {
                reads.outstandingTransfers = outbox.map {
                    OutstandingTransfer(sequence: $0.sequence, bytes: $0.payload.count, ageSeconds: 0, sent: linked)
                }
            }
        }
        watchActions += actions
        for action in actions {
            switch action {
            case .store(.persistWorkout(let run)): watchRuns[run.id] = run
            case .store(.deleteWorkout(let id)): watchRuns[id] = nil
            case .store(.persistSession(let record)): watchSession = record
            case .store(.persistSplit), .store(.deleteSplit), .store(.persistPhoneEpoch), .store(.persistComplication),
                .store(.publishWorkout):
                break
            case .node(let shared): perform(shared, fromPhone: false)
            }
        }
    }

    // MARK: The shared actions and the link

    private mutating func perform(_ action: NodeAction, fromPhone: Bool) {
        switch action {
        case .link(let command):
            link(command, fromPhone: fromPhone)
        case .reply(let request, let response):
            replies[request] = response
        case .replyTrace(let request, _):
            replies[request] = .ok(text: "no events", json: "")
        case .callAtEndOfTurn:
            queue.append(.phone(.reported(.turnEnded)))
        case .exit(let code):
            if fromPhone { exited.phone = code } else { exited.watch = code }
        case .log, .journal, .armTimer, .cancelTimer, .persistLiveVersion, .persistClock, .markStoppedCleanly,
            .notifyStopping,
            .closeServices:
            break
        }
    }

    private mutating func link(_ command: LinkCommand, fromPhone: Bool) {
        switch command {
        case .updateContext(let payload, _):
            generation += 1
            slot = (generation, payload)
            queue.append(.phone(.link(.contextQueued(generation: generation))))
            if linked, let slot { sendContext(slot) }
        case .sendMessage(let payload, let wantsReply, _, _, let id):
            send(payload, wantsReply: wantsReply, id: id, asData: false, fromPhone: fromPhone)
        case .sendMessageData(let payload, let wantsReply, _, let id):
            send(payload, wantsReply: wantsReply, id: id, asData: true, fromPhone: fromPhone)
        case .answerMessage(let id, let answer):
            guard let waiting = waitingMessages.removeValue(forKey: id) else { return }
            let outcome: MessageOutcome
            switch answer {
            case .handled: outcome = .delivered
            case .reply(let bytes): outcome = .replied(bytes)
            case .failed(_, let reason): outcome = .failed(.deliveryFailed(reason: reason))
            }
            let ended = LinkNotification.messageCompleted(id: waiting.id, outcome)
            queue.append(waiting.toWatch ? .phone(.link(ended)) : .watch(.link(ended)))
        case .transferUserInfo(let payload, _):
            lastSequence += 1
            outbox.append((lastSequence, payload))
            if linked { sendTransfer((lastSequence, payload)) }
        case .transferFile(let source, let metadata, let request):
            guard case .bytes(let bytes) = source else {
                let refused = ShellReport.fileQueued(request, .failure(ReadFailure("NodePair sends bytes only")))
                queue.append(fromPhone ? .phone(.reported(refused)) : .watch(.reported(refused)))
                return
            }
            lastFile += 1
            let file = OutboundFile(sequence: lastFile, size: UInt64(bytes.count), digest: [], metadata: metadata)
            let queued = ShellReport.fileQueued(request, .success(file))
            queue.append(fromPhone ? .phone(.reported(queued)) : .watch(.reported(queued)))
            // Linked or not, the file arrives (the link's resuming is tested in LinkProtocolTests).
            let key = TransferKey(queue: fromPhone ? phoneID : watchID, sequence: lastFile)
            inbox[key] = bytes
            let received = LinkNotification.fileReceived(ReceivedFile(key: key, size: file.size, metadata: metadata))
            queue.append(fromPhone ? .watch(.link(received)) : .phone(.link(received)))
        case .cancelFile(let sequence, let request):
            let ended = ShellReport.fileCancelEnded(request, sequence: sequence, ReadFailure("already delivered"))
            queue.append(fromPhone ? .phone(.reported(ended)) : .watch(.reported(ended)))
        case .fileProcessed(let key):
            inbox[key] = nil
            let finished = LinkNotification.fileFinished(sequence: key.sequence, nil)
            queue.append(key.queue == phoneID ? .phone(.link(finished)) : .watch(.link(finished)))
        case .keepReceivedFile:
            break
        case .transfersProcessed(let keys):
            for key in keys {
                if fromPhone {
                    let payload = outbox.first { $0.sequence == key.sequence }?.payload ?? []
                    outbox.removeAll { $0.sequence == key.sequence }
                    queue.append(.watch(.link(.transferFinished(sequence: key.sequence, payload: payload))))
                } else {
                    phoneOutbox.removeAll { $0.sequence == key.sequence }
                }
            }
        case .cancelTransfer(let sequence):
            let payload = outbox.first { $0.sequence == sequence }?.payload
            outbox.removeAll { $0.sequence == sequence }
            queue.append(
                .watch(
                    .link(
                        payload.map { .transferCancelled(sequence: sequence, payload: $0, wasSent: false) }
                            ?? .transferCancelRefused(sequence: sequence, .unknownTransfer(sequence: sequence)))))
        case .launch(let payload):
            if linked {
                launchesDelivered += 1
                queue.append(.watch(.link(.launchReceived(payload: payload))))
            } else {
                queue.append(.phone(.link(.launchDropped)))
            }
        case .setAppForeground, .setWatchState:
            break
        case .transferComplication(let payload, let asCurrent, let request):
            lastPhoneSequence += 1
            phoneOutbox.append((lastPhoneSequence, payload))
            let queued = ShellReport.complicationQueued(request, asCurrent: asCurrent, .success(lastPhoneSequence))
            queue.append(.phone(.reported(queued)))
            if linked { sendPhoneTransfer((lastPhoneSequence, payload)) }
        }
    }

    /// A message or data message: delivered when linked, else it fails with `notReachable`.
    private mutating func send(
        _ payload: [UInt8], wantsReply: Bool, id: UInt64, asData: Bool, fromPhone: Bool
    ) {
        guard linked else {
            let ended = LinkNotification.messageCompleted(id: id, .failed(.notReachable))
            queue.append(fromPhone ? .phone(.link(ended)) : .watch(.link(ended)))
            return
        }
        lastMessage += 1
        waitingMessages[lastMessage] = (fromPhone, id)
        let received =
            asData
            ? LinkNotification.messageDataReceived(id: lastMessage, payload: payload, wantsReply: wantsReply)
            : LinkNotification.messageReceived(id: lastMessage, payload: payload, wantsReply: wantsReply)
        queue.append(fromPhone ? .watch(.link(received)) : .phone(.link(received)))
    }

    private mutating func sendContext(_ slot: (generation: UInt64, payload: [UInt8])) {
        queue.append(
            .watch(
                .link(
                    .contextReceived(
                        ReceivedContext(sender: phoneID, generation: slot.generation, payload: slot.payload)))))
        slotAcknowledged = max(slotAcknowledged, slot.generation)
        queue.append(.phone(.link(.contextAcknowledged(generation: slot.generation))))
    }

    private mutating func sendPhoneTransfer(_ transfer: (sequence: UInt64, payload: [UInt8])) {
        let key = TransferKey(queue: phoneID, sequence: transfer.sequence)
        queue.append(.watch(.link(.userInfoReceived(key, payload: transfer.payload))))
    }

    private mutating func sendTransfer(_ transfer: (sequence: UInt64, payload: [UInt8])) {
        let key = TransferKey(queue: watchID, sequence: transfer.sequence)
        queue.append(.phone(.link(.userInfoReceived(key, payload: transfer.payload))))
    }
}
