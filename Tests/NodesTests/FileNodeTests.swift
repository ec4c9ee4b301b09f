import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import Testing
import WatchEngine
import WorkoutModel

/// `watchctl export` and what the phone node does with the file. Files are not simulated
/// (docs/SIMULATION.md), so these tests wire the two nodes by hand for that one channel (`FileNodes`).
@Suite("Files between the nodes")
struct FileNodeTests {
    @Test("export: the phone keeps the run's samples next to it and show reports them; discard removes them")
    func export() throws {
        var pair = try FileNodes()
        let run = pair.run.id
        let reply = try #require(try pair.watchctl(.export(run: run)))
        #expect(reply.status == .ok, "\(reply)")
        #expect(pair.phoneSamples[run] == WorkoutSamples.series(for: run))
        #expect(pair.inbox.isEmpty, "processed: nothing left in the inbox")
        let received = pair.phone.fileTransfers.received
        #expect(received.count == 1 && received.first?.storedAs?.hasSuffix("/\(run.rawValue).samples") == true)
        #expect(pair.watch.fileTransfers.finished == 1)
        try pair.phonectl(.discard(run: run))
        #expect(pair.phoneSamples[run] == nil)
    }

    @Test("export of a run the watch does not have is refused; samples of a run the phone does not have are dropped")
    func unknownRuns() throws {
        var pair = try FileNodes()
        let unknown = DocumentID(bytes: [UInt8](repeating: 0x42, count: 16))
        #expect(try pair.watchctl(.export(run: unknown))?.status == .refused)
        let metadata = String(
            decoding: DocumentCoder.encodeCompact(WorkoutSamplesMetadata(runID: unknown, samples: 1)), as: UTF8.self)
        let key = TransferKey(queue: FileNodes.watchInstance, sequence: 99)
        try pair.phoneReceives(ReceivedFile(key: key, size: 1, metadata: metadata))
        #expect(pair.phoneSamples[unknown] == nil)
        #expect(pair.phone.fileTransfers.received.last?.storedAs == nil)
    }
}

/// A phone node and a watch node that both hold one started run, linked, and between them only the
/// file channel: a file the watch sends lands in the phone's inbox, the phone keeps a run's samples
/// (`writeSamples`) or drops them, and the file finishes at the watch once the phone processed it.
struct FileNodes {
    static let now = Timestamp(secondsSinceEpoch: 1_780_000_000)
    static let phoneInstance = InstanceID(bytes: Array(repeating: 1, count: 16))!
    static let watchInstance = InstanceID(bytes: Array(repeating: 2, count: 16))!

    var phone: PhoneNode
    var watch: WatchNode
    let run: WorkoutDocument
    /// The phone's inbox, and the samples it kept next to each run.
    private(set) var inbox: [TransferKey: [UInt8]] = [:]
    private(set) var phoneSamples: [DocumentID: [UInt8]] = [:]
    private var replies: [AdminRequestID: AdminResponse] = [:]
    private var lastRequest: UInt64 = 0
    private var lastFile: UInt64 = 0

    init() throws {
        let split = SplitDocument(
            id: DocumentID(bytes: Array(repeating: 0xB2, count: 16)), name: "Push",
            exercises: [
                ExerciseTemplate(name: "Press", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 40)
            ],
            updatedAt: Self.now)
        run = try WorkoutDocument.start(
            from: split, id: DocumentID(bytes: Array(repeating: 0xA1, count: 16)),
            at: Stamp(time: Self.now, origin: .phone))
        phone = PhoneNode(engine: SyncEngine(settings: nil), live: LiveDriver(now: Self.now, persistedVersion: nil))
        watch = WatchNode(
            engine: WatchEngine(cache: WatchCache(restoringWorkouts: [run], splits: [split])),
            live: LiveDriver(now: Self.now, persistedVersion: nil))
        for event: PhoneNode.Event in [
            .started(lastContext: nil), .documentScanned(.split(split)), .documentScanned(.workout(run)),
            .gatherFinished("1 run", skipped: []),
        ] {
            try carry(phone: handlePhone(event))
        }
        try carry(watch: watch.handle(.started(lastContext: nil, skippedCacheFiles: []), now: Self.now))
    }

    /// phonectl: the reply phoned gives.
    @discardableResult
    mutating func phonectl(_ command: PhoneCommand) throws -> AdminResponse? {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        let fresh = DocumentID(bytes: Array(repeating: 0xA0, count: 15) + [UInt8(truncatingIfNeeded: lastRequest)])
        try carry(phone: handlePhone(.admin(request, command, freshID: fresh, facts: Self.facts(.phone))))
        return replies.removeValue(forKey: request)
    }

    /// watchctl: the reply watchd gives.
    mutating func watchctl(_ command: WatchCommand) throws -> AdminResponse? {
        lastRequest += 1
        let request = AdminRequestID(lastRequest)
        try carry(watch: watch.handle(.admin(request, command, facts: Self.facts(.watch)), now: Self.now))
        return replies.removeValue(forKey: request)
    }

    /// The phone's link delivers `file` from the watch.
    mutating func phoneReceives(_ file: ReceivedFile) throws {
        try carry(phone: handlePhone(.link(.fileReceived(file))))
    }

    static func facts(_ role: LinkRole) -> ShellFacts {
        let (instance, peer) = role == .phone ? (phoneInstance, watchInstance) : (watchInstance, phoneInstance)
        let link = LinkStatus(
            role: role, instance: instance, activated: true, reachable: true, linked: true, peer: peer,
            watchAppForeground: true, contextGenerationSent: nil, contextGenerationAcknowledged: nil,
            contextGenerationReceived: nil, contextSender: nil, outboxDepth: 0, handshakingConnections: 0)
        return ShellFacts(link: link, uptimeSeconds: 0, journalCounts: [:])
    }

    /// Feeds the phone `event`, reading the run when it asks (the one document on its disk).
    private mutating func handlePhone(_ event: PhoneNode.Event) throws -> [PhoneNode.Action] {
        do throws(NeedsReads) {
            return try phone.handle(event, now: Self.now)
        } catch {
            var reads = Reads()
            for id in error.documents.keys {
                reads.documents[id] = id == run.id ? .success(run) : .failure(ReadFailure("no such file"))
            }
            return try phone.handle(event, now: Self.now, reads: reads)
        }
    }

    private mutating func carry(phone actions: [PhoneNode.Action]) throws {
        for action in actions {
            switch action {
            case .node(.reply(let request, let response)): replies[request] = response
            case .node(.callAtEndOfTurn): try carry(phone: handlePhone(.reported(.turnEnded)))
            case .store(.writeSamples(let key, let runID, _)): phoneSamples[runID] = inbox[key]
            case .store(.removeSamples(let id, _)): phoneSamples[id] = nil
            case .node(.link(.fileProcessed(let key))):
                inbox[key] = nil
                try carry(watch: watch.handle(.link(.fileFinished(sequence: key.sequence, nil)), now: Self.now))
            default: break
            }
        }
    }

    private mutating func carry(watch actions: [WatchNode.Action]) throws {
        for action in actions {
            switch action {
            case .node(.reply(let request, let response)): replies[request] = response
            case .node(.link(.transferFile(.bytes(let bytes), let metadata, let request))):
                // Queued, then (linked) received whole by the phone.
                lastFile += 1
                let file = OutboundFile(sequence: lastFile, size: UInt64(bytes.count), digest: [], metadata: metadata)
                try carry(watch: watch.handle(.reported(.fileQueued(request, .success(file))), now: Self.now))
                let key = TransferKey(queue: Self.watchInstance, sequence: lastFile)
                inbox[key] = bytes
                try phoneReceives(ReceivedFile(key: key, size: file.size, metadata: metadata))
            default: break
            }
        }
    }
}
