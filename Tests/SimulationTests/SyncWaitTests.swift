import AdminCommands
import Foundation
import Nodes
import Simulation
import Testing
import WorkoutModel

/// `watchctl wait`: answered once no edit made on the watch is undelivered, refused at its deadline.
@Suite("watchctl wait: answered when the watch's edits are back from the phone")
struct SyncWaitTests {
    static func waited(_ response: AdminResponse) throws -> Double {
        let json = try #require(response.json)
        let reply = try JSONDecoder().decode(AdminReply.Synced.self, from: Data(json.utf8))
        #expect(reply.synced)
        // Written by hand: byte for byte what the encoder writes for the same value.
        #expect(json == AdminOutcome.json(reply))
        return reply.waitedMilliseconds
    }

    /// A started run, the link down, and one edit made on the watch meanwhile (queued).
    static func editedApart() throws -> Simulator {
        let (pair, run) = try ScriptedScenarioTests.started()
        pair.partition()
        pair.advance(by: .seconds(5))  // the heartbeats notice: the phone is no longer reachable
        pair.watch(.set(ScriptedScenarioTests.complete(run, 1, 1)))
        #expect(pair.watchNode?.engine.cache.undeliveredEdits.count == 1)
        return pair
    }

    @Test("with nothing undelivered the wait is answered at once")
    func atOnce() throws {
        let (pair, _) = try ScriptedScenarioTests.started()
        let reply = try #require(pair.watch(.waitSynced(milliseconds: 5_000)))
        #expect(reply.status == .ok && reply.text == "synced", "\(reply)")
        #expect(try Self.waited(reply) == 0)
        #expect(pair.watchNode?.syncWaits.count == 0)
    }

    @Test("an edit queued across a partition: the wait is answered when the phone's context brings it back")
    func answeredOnContext() throws {
        let pair = try Self.editedApart()
        let request = try #require(pair.watchRequest(.waitSynced(milliseconds: 10_000)))
        #expect(pair.reply(to: request) == nil)
        #expect(pair.watchNode?.syncWaits.count == 1)
        #expect(pair.watchTimer(.syncWait) == pair.watchClock.advanced(by: .seconds(10)))

        pair.advance(by: .milliseconds(1_500))
        pair.heal()
        let (reply, elapsed) = try #require(pair.awaitReply(to: request, within: .seconds(8)))
        #expect(reply.status == .ok && reply.text == "synced", "\(reply)")
        // Measured from the request to the step that cleared the edit; the reply goes out once that
        // step's writes have landed, each within 3 ms.
        let (waited, answered) = (try Self.waited(reply), 1_500 + elapsed)
        #expect(waited <= answered && waited > answered - 10, "waited \(waited) ms, answered in ms \(answered)")
        #expect(pair.watchNode?.engine.cache.undeliveredEdits.isEmpty == true)
        #expect(pair.watchNode?.syncWaits.count == 0)
        #expect(pair.watchTimer(.syncWait) == nil, "the timer is cancelled")
    }

    @Test("no context in time: the wait is refused at its deadline; a longer one keeps waiting")
    func refusedAtDeadline() throws {
        let pair = try Self.editedApart()
        let short = try #require(pair.watchRequest(.waitSynced(milliseconds: 2_000)))
        let long = try #require(pair.watchRequest(.waitSynced(milliseconds: 20_000)))
        let deadline = pair.watchClock.advanced(by: .seconds(2))
        #expect(pair.watchTimer(.syncWait) == deadline)

        pair.advance(by: .seconds(2))
        let refused = try #require(pair.reply(to: short))
        #expect(refused.status == .refused)
        #expect(refused.message == "1 edit not yet back from the phone after 2.0 s", "\(refused)")
        #expect(pair.reply(to: long) == nil)
        #expect(pair.watchTimer(.syncWait) == deadline.advanced(by: .seconds(18)))

        pair.heal()
        let (reply, _) = try #require(pair.awaitReply(to: long, within: .seconds(17)))
        #expect(reply.status == .ok, "\(reply)")
    }
}
