import AdminCommands
import Foundation
import Nodes
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
    static func editedApart() throws -> NodePair {
        var (pair, run) = try BackToBackTests.started()
        pair.disconnect()
        pair.watchctl(.set(.complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)))
        #expect(pair.watch.engine.cache.undeliveredEdits.count == 1)
        return pair
    }

    @Test("with nothing undelivered the wait is answered at once")
    func atOnce() throws {
        var (pair, _) = try BackToBackTests.started()
        let reply = pair.watchctl(.waitSynced(milliseconds: 5_000))
        #expect(reply.status == .ok && reply.text == "synced", "\(reply)")
        #expect(try Self.waited(reply) == 0)
        #expect(pair.watch.syncWaits.count == 0)
    }

    @Test("an edit queued across a partition: the wait is answered when the phone's context brings it back")
    func answeredOnContext() throws {
        var pair = try Self.editedApart()
        let request = pair.watchctlRequest(.waitSynced(milliseconds: 10_000))
        #expect(pair.reply(to: request) == nil)
        #expect(pair.watch.syncWaits.count == 1)
        #expect(pair.watchActions.contains(.node(.armTimer(.syncWait, at: pair.now.advanced(by: .seconds(10))))))

        pair.advance(by: .milliseconds(1_500))
        pair.connect()
        let answer = pair.reply(to: request)
        let reply = try #require(answer)
        #expect(reply.status == .ok && reply.text == "synced", "\(reply)")
        #expect(try Self.waited(reply) == 1_500)
        #expect(pair.watch.engine.cache.undeliveredEdits.isEmpty)
        #expect(pair.watch.syncWaits.count == 0)
        #expect(pair.watchActions.last { $0 == .node(.cancelTimer(.syncWait)) } != nil)
    }

    @Test("no context in time: the wait is refused at its deadline; a longer one keeps waiting")
    func refusedAtDeadline() throws {
        var pair = try Self.editedApart()
        let short = pair.watchctlRequest(.waitSynced(milliseconds: 2_000))
        let long = pair.watchctlRequest(.waitSynced(milliseconds: 20_000))
        let deadline = pair.now.advanced(by: .seconds(2))
        #expect(
            pair.watchActions.last { if case .node(.armTimer(.syncWait, _)) = $0 { true } else { false } }
                == .node(.armTimer(.syncWait, at: deadline)))

        pair.advance(by: .seconds(2))
        pair.deliver(.watch(.reported(.timerFired(.syncWait))))
        let shortAnswer = pair.reply(to: short)
        let refused = try #require(shortAnswer)
        #expect(refused.status == .refused)
        #expect(refused.message == "1 edit not yet back from the phone after 2.0 s", "\(refused)")
        #expect(pair.reply(to: long) == nil)
        #expect(pair.watchActions.last == .node(.armTimer(.syncWait, at: deadline.advanced(by: .seconds(18)))))

        pair.connect()
        let longAnswer = pair.reply(to: long)
        let reply = try #require(longAnswer)
        #expect(reply.status == .ok, "\(reply)")
    }
}
