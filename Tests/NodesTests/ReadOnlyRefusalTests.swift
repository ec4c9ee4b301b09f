import AdminCommands
import LinkProtocol
import Nodes
import SyncEngine
import Testing
import WatchEngine
import WorkoutModel

/// A daemon's directory on a read-only file system (a remount, a failing disk the kernel
/// protects): every command that would write is refused, naming the directory, and changes
/// nothing; status and reads are served as ever.
@Suite("Read-only file systems: changes refused with the reason, reads served")
struct ReadOnlyRefusalTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    static let request = AdminRequestID(3)

    static func facts(_ role: LinkRole, readOnly: [String]) -> ShellFacts {
        ShellFacts(
            link: LinkStatus(
                role: role, instance: InstanceID(bytes: Array(repeating: 1, count: 16))!, activated: false,
                reachable: false, linked: false, peer: nil, watchAppForeground: false, contextGenerationSent: nil,
                contextGenerationAcknowledged: nil, contextGenerationReceived: nil, contextSender: nil, outboxDepth: 0,
                handshakingConnections: 0),
            uptimeSeconds: 1, journalCounts: [:], readOnlyDirectories: readOnly)
    }

    static func reply(_ actions: [PhoneNode.Action]) -> AdminResponse? {
        actions.lazy.compactMap { action -> AdminResponse? in
            guard case .node(.reply(request, let response)) = action else { return nil }
            return response
        }.first
    }

    @Test("phoned: a split, a run, an edit are refused naming the documents directory; status and reads answer")
    func phone() throws {
        var phone = PhoneNode(engine: SyncEngine(settings: nil), live: LiveDriver(now: Self.now, persistedVersion: nil))
        _ = try phone.handle(.gatherFinished("", skipped: []), now: Self.now)
        let readOnly = Self.facts(.phone, readOnly: ["the documents directory /srv/docs"])
        let create = PhoneCommand.createSplit(
            name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 1, targetReps: 5, targetWeight: 100)
            ])
        let fresh = DocumentID(bytes: Array(repeating: 0x42, count: 16))
        let refused = try phone.handle(.admin(Self.request, create, freshID: fresh, facts: readOnly), now: Self.now)
        let response = try #require(Self.reply(refused))
        #expect(response.status == .refused)
        #expect(
            response.message?.contains("the documents directory /srv/docs is on a read-only file system") == true,
            "\(response.message ?? "nil")")
        #expect(!refused.contains { NodeRunner<PhoneNode>.isDurableWrite(.inner($0)) })
        #expect(phone.engine.splits.isEmpty)

        let status = try phone.handle(.admin(Self.request, .status, freshID: fresh, facts: readOnly), now: Self.now)
        let statusReply = try #require(Self.reply(status))
        #expect(statusReply.status == .ok)
        #expect(statusReply.text?.contains("READ-ONLY: the documents directory /srv/docs") == true)
        #expect(
            try #require(
                Self.reply(phone.handle(.admin(Self.request, .splits, freshID: fresh, facts: readOnly), now: Self.now))
            )
            .status == .ok)

        // Writable again: the same command goes through, with nothing to restart.
        let writable = Self.facts(.phone, readOnly: [])
        let created = try phone.handle(.admin(Self.request, create, freshID: fresh, facts: writable), now: Self.now)
        #expect(try #require(Self.reply(created)).status == .ok)
        #expect(phone.engine.splits.count == 1)
    }

    @Test("watchd: an edit is refused naming both directories; waiting for sync and status answer")
    func watch() throws {
        var watch = WatchNode(engine: WatchEngine(), live: LiveDriver(now: Self.now, persistedVersion: nil))
        let readOnly = Self.facts(
            .watch, readOnly: ["the state directory /var/lib/watchd", "the cache directory /var/cache/watchd"])
        let run = DocumentID(bytes: Array(repeating: 0x24, count: 16))
        let actions = try watch.handle(.admin(Self.request, .pause(run: run), facts: readOnly), now: Self.now)
        let reply = try #require(
            actions.lazy.compactMap { action -> AdminResponse? in
                guard case .node(.reply(Self.request, let response)) = action else { return nil }
                return response
            }.first)
        #expect(reply.status == .refused)
        #expect(
            reply.message?.contains(
                "the state directory /var/lib/watchd and the cache directory /var/cache/watchd are on a read-only file system"
            )
                == true, "\(reply.message ?? "nil")")
        #expect(!WatchCommand.waitSynced(milliseconds: 0).writes)
        #expect(!WatchCommand.status.writes && WatchCommand.pause(run: run).writes)
        #expect(!PhoneCommand.data(.send(bytes: [1], wantsReply: false, count: 1)).writes)
        #expect(PhoneCommand.file(.send(path: "/x", metadata: "{}")).writes && !PhoneCommand.file(.list).writes)
    }
}
