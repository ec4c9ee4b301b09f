import AdminCommands
import LinkProtocol
import Nodes
import Simulation
import Testing
import WorkoutModel

/// The node numbers its own messages and keeps why each was sent, so no shell keeps a ledger. Each
/// node is the one the simulator's daemon holds after a started run, fed here by the test.
@Suite("Messages: numbered by the node, their outcomes routed back by id")
struct MessageLedgerTests {
    /// The edit message among `actions`: its id, as the shell is handed it.
    static func editMessageID(_ actions: [WatchNode.Action]) -> UInt64? {
        for case .node(.link(.sendMessage(_, _, _, .edit, let id))) in actions { return id }
        return nil
    }

    static func complete(_ run: DocumentID, set: Int) -> WatchCommand {
        .set(.complete(run: run, exercise: 1, set: set, reps: nil, weight: nil))
    }

    @Test("each message goes out numbered; its outcome, by id alone, ends that message and no other")
    func numberedAndRouted() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        var watch = try #require(pair.watchNode)
        let facts = try #require(pair.watchFacts)
        let now = pair.watchClock
        let first = try watch.handle(.admin(AdminRequestID(901), Self.complete(run, set: 1), facts: facts), now: now)
        let second = try watch.handle(.admin(AdminRequestID(902), Self.complete(run, set: 2), facts: facts), now: now)
        let firstID = try #require(Self.editMessageID(first), "\(first)")
        let secondID = try #require(Self.editMessageID(second), "\(second)")
        #expect(firstID != 0 && secondID == firstID + 1)
        #expect(watch.messages.inFlight == 2)
        #expect(watch.engine.messagesInFlight.count == 2)

        // Delivered: the engine hears of that edit only.
        _ = try watch.handle(.link(.messageCompleted(id: secondID, .delivered)), now: now)
        #expect(watch.messages.inFlight == 1)
        #expect(watch.engine.messagesInFlight.count == 1)

        // An id the node never issued (or already ended) changes nothing.
        _ = try watch.handle(.link(.messageCompleted(id: secondID, .delivered)), now: now)
        _ = try watch.handle(.link(.messageCompleted(id: 999, .delivered)), now: now)
        #expect(watch.messages.inFlight == 1)
        #expect(watch.engine.messagesInFlight.count == 1)

        // Failed: the edit falls back to the durable queue, as the engine decides.
        let failed = try watch.handle(
            .link(.messageCompleted(id: firstID, .failed(.deliveryFailed(reason: "link lost")))), now: now)
        #expect(watch.messages.inFlight == 0)
        #expect(failed.contains { if case .node(.link(.transferUserInfo)) = $0 { true } else { false } }, "\(failed)")
    }

    @Test("reachability is the link's last word: lost with the link, before the messages it fails")
    func reachability() throws {
        let (pair, _) = try ScriptedScenarioTests.started()
        var phone = try #require(pair.phoneNode)
        let now = pair.phoneClock
        #expect(phone.messages.reachable)
        _ = try phone.handle(.link(.linkLost(reason: "connection closed")), now: now)
        #expect(!phone.messages.reachable)
        _ = try phone.handle(.link(.reachabilityChanged(true)), now: now)
        #expect(phone.messages.reachable)
        _ = try phone.handle(.link(.reachabilityChanged(false)), now: now)
        #expect(!phone.messages.reachable)
    }
}
