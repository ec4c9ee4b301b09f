import AdminCommands
import Foundation
import LinkProtocol
import Nodes
import SyncEngine
import Synchronization
import Testing
import WorkoutModel

/// `workouts --all` as the phone node answers it: a chunk at a time to a client that takes chunks,
/// whole (and bounded) to one that does not.
@Suite("History listing: workouts --all in chunks, each once the client took the last")
struct HistoryListingTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    static let request = AdminRequestID(9)
    static let phoneInstance = InstanceID(bytes: Array(repeating: 1, count: 16))!
    static let facts = ShellFacts(
        link: LinkStatus(
            role: .phone, instance: Self.phoneInstance, activated: false, reachable: false, linked: false,
            peer: nil, watchAppForeground: false, contextGenerationSent: nil, contextGenerationAcknowledged: nil,
            contextGenerationReceived: nil, contextSender: nil, outboxDepth: 0, handshakingConnections: 0),
        uptimeSeconds: 1, journalCounts: [:])

    /// A gathered phone whose history is `count` runs completed a day apart, the newest 10 days ago
    /// (none in a push), known by summary only; and each run's document, as its file would read.
    static func phone(
        runs count: Int, store: ([UInt8]) -> any RunTableStorage = { RunTableBuffer($0) }
    ) throws -> (PhoneNode, [DocumentID: WorkoutDocument]) {
        let split = SplitDocument(
            id: DocumentID(bytes: Array(repeating: 0xAA, count: 16)), name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 1, targetReps: 5, targetWeight: 100)
            ],
            updatedAt: now.advanced(by: .seconds(-1_000_000_000)))
        var summaries: [RunIndex.RunSummary] = []
        var documents: [DocumentID: WorkoutDocument] = [:]
        for index in 0..<count {
            // IDs descend while starts ascend, so an order by ID would show.
            let id = DocumentID(
                bytes: [0x10] + Array(repeating: 0, count: 11)
                    + withUnsafeBytes(of: UInt32(count - index).bigEndian, Array.init))
            let start = now.advanced(by: .seconds(-86_400 * (10 + count - index)))
            let summary = RunIndex.RunSummary(
                id: id, status: .completed, startedAt: start, endedAt: start.advanced(by: .seconds(3_600)),
                updatedAt: start.advanced(by: .seconds(3_600)),
                version: Stamp(time: start.advanced(by: .seconds(3_600)), counter: 0, origin: .phone))
            summaries.append(summary)
            documents[id] = try WorkoutDocument.start(
                from: split, id: id, at: Stamp(time: start, counter: 0, origin: .phone))
        }
        var phone = PhoneNode(engine: SyncEngine(settings: nil), live: LiveDriver(now: now, persistedVersion: nil))
        _ = try phone.handle(.runTableScanned(.recording(summaries, store: store)), now: now)
        _ = try phone.handle(.gatherFinished("", skipped: []), now: now)
        return (phone, documents)
    }

    /// Feeds `event` until it stops asking for documents (each read from `files`); returns the
    /// replies it gave and how many documents it asked for in all.
    static func replies(
        _ phone: inout PhoneNode, _ event: PhoneNode.Event, files: [DocumentID: WorkoutDocument]
    ) throws -> (responses: [AdminResponse], asked: Int) {
        var reads = Reads()
        var asked = 0
        while true {
            do throws(NeedsReads) {
                let actions = try phone.handle(event, now: now, reads: reads)
                let responses = actions.compactMap { action -> AdminResponse? in
                    guard case .node(.reply(let replied, let response)) = action, replied == request else { return nil }
                    return response
                }
                return (responses, asked)
            } catch {
                asked += error.documents.count
                for id in error.documents.keys { reads.documents[id] = files[id].map { .success($0) } }
            }
        }
    }

    static func workouts(json: Bool, since: String? = nil, streamed: Bool? = true, limit: Int? = nil) -> PhoneNode.Event
    {
        .admin(
            request, .workouts(all: true, limit: limit, after: nil, since: since, json: json, streamed: streamed),
            freshID: DocumentID(bytes: Array(repeating: 1, count: 16)), facts: facts)
    }

    @Test("300 runs: a chunk of 32, one of 256, then the last 12; each reads only its own runs; in start order")
    func chunksInStartOrder() throws {
        var (phone, files) = try Self.phone(runs: 300)
        let ordered = files.values.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }

        let first = try Self.replies(&phone, Self.workouts(json: false), files: files)
        #expect(first.asked == 32)
        #expect(first.responses.count == 1 && first.responses.first?.more == true)
        let second = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
        #expect(second.asked == 256)
        #expect(second.responses.first?.more == true)
        let last = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
        #expect(last.asked == 12)
        #expect(last.responses.count == 1 && last.responses.first?.more == nil)
        #expect(last.responses.first?.status == .ok)

        let text = (first.responses + second.responses + last.responses).compactMap(\.text).joined()
        let ids = text.split(separator: "\n").map { String($0.prefix(36)) }
        #expect(ids == ordered.map(\.id.rawValue))
        // The reply is over: a late report finds nothing to send.
        let late = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
        #expect(late.responses.isEmpty && late.asked == 0)
    }

    @Test("each chunk lets go of the table's pages its lookups read: a listing leaves a mapped index unread")
    func chunksReleaseTablePages() throws {
        let storage = Mutex<CountingStorage?>(nil)
        var (phone, files) = try Self.phone(runs: 300) { bytes in
            let made = CountingStorage(bytes)
            storage.withLock { $0 = made }
            return made
        }
        let table = try #require(storage.withLock { $0 })
        var releases = table.releases.withLock { $0 }
        for event in [Self.workouts(json: false)]
            + Array(repeating: .reported(.replyTaken(Self.request, clientGone: false)), count: 2)
        {
            _ = try Self.replies(&phone, event, files: files)
            let now = table.releases.withLock { $0 }
            // Found by the bench: after a 1M listing cut short, phoned kept the whole 80 MB table resident.
            #expect(now > releases, "a chunk's lookups left the table's pages resident")
            releases = now
        }
    }

    /// An owned table that counts the times it was asked to let its pages go.
    final class CountingStorage: RunTableStorage {
        let buffer: RunTableBuffer
        let releases = Mutex(0)
        init(_ bytes: [UInt8]) { buffer = RunTableBuffer(bytes) }
        var bytes: UnsafeRawBufferPointer { buffer.bytes }
        func releaseResidentPages() { releases.withLock { $0 += 1 } }
    }

    @Test("--limit cuts the page in start order: 40 of 300 in a chunk of 32 and a last one of 8")
    func limitedPage() throws {
        var (phone, files) = try Self.phone(runs: 300)
        let ordered = files.values.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        let first = try Self.replies(&phone, Self.workouts(json: false, limit: 40), files: files)
        let last = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
        #expect(first.asked == 32 && last.asked == 8)
        #expect(last.responses.first?.more == nil)
        let text = (first.responses + last.responses).compactMap(\.text).joined()
        #expect(text.split(separator: "\n").map { String($0.prefix(36)) } == ordered.prefix(40).map(\.id.rawValue))
    }

    @Test("--json: the chunks' pieces make one JSON array of the documents, in start order")
    func jsonPiecesMakeOneArray() throws {
        var (phone, files) = try Self.phone(runs: 40)
        var responses = try Self.replies(&phone, Self.workouts(json: true), files: files).responses
        while responses.last?.more == true {
            responses += try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
                .responses
        }
        #expect(responses.count == 2)
        let json = responses.compactMap(\.json).joined()
        let decoded = try JSONDecoder().decode([WorkoutDocument].self, from: Data(json.utf8))
        #expect(decoded == files.values.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) })
    }

    @Test("a client gone mid-reply: the reply is dropped, nothing more is read or sent")
    func clientGone() throws {
        var (phone, files) = try Self.phone(runs: 100)
        _ = try Self.replies(&phone, Self.workouts(json: false), files: files)
        let gone = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: true)), files: files)
        #expect(gone.responses.isEmpty && gone.asked == 0)
        let after = try Self.replies(&phone, .reported(.replyTaken(Self.request, clientGone: false)), files: files)
        #expect(after.responses.isEmpty && after.asked == 0)
    }

    @Test("--since keeps runs started at or after it; an empty page says so in one response")
    func since() throws {
        var (phone, files) = try Self.phone(runs: 30)
        // Runs start 11 to 40 days ago: 15d keeps the 5 started 11–15 days ago.
        let recent = try Self.replies(&phone, Self.workouts(json: false, since: "15d"), files: files).responses
        #expect(recent.count == 1 && recent.first?.more == nil)
        #expect(recent.first?.text?.split(separator: "\n").count == 5)
        let none = try Self.replies(&phone, Self.workouts(json: true, since: "1d"), files: files).responses
        #expect(none == [.ok(text: "", json: "[]")])
    }

    @Test("a client that takes no chunks gets the page whole, and a refusal past 10,000 runs that says how to page")
    func wholeReplyIsBounded() throws {
        var (phone, files) = try Self.phone(runs: 10_001)
        let refused = try Self.replies(&phone, Self.workouts(json: false, streamed: nil), files: files)
        #expect(refused.asked == 0)
        #expect(refused.responses.first?.status == .refused)
        #expect(refused.responses.first?.message?.contains("--limit") == true, "\(refused.responses)")
        let page = try Self.replies(&phone, Self.workouts(json: false, streamed: nil, limit: 3), files: files)
        #expect(page.responses.first?.more == nil)
        #expect(page.responses.first?.text?.split(separator: "\n").count == 3)
    }
}
