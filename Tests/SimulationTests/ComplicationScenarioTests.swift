import AdminCommands
import Foundation
import Nodes
import Simulation
import Testing
import WorkoutModel

/// `complication push` on phoned and what watchd keeps, both daemons under the simulator.
@Suite("Complications between the daemons")
struct ComplicationScenarioTests {
    /// `phonectl complication push TEXT`: its reply once the transfer is on the phone's disk.
    private func push(_ text: String, on pair: Simulator) throws -> AdminReply.ComplicationPushed {
        let request = try #require(pair.phoneRequest(.pushComplication(text: text)))
        pair.advance(by: .milliseconds(100))
        let response = try #require(pair.reply(to: request), "no reply to the push of \(text)")
        return try JSONDecoder().decode(AdminReply.ComplicationPushed.self, from: Data((response.json ?? "").utf8))
    }

    @Test(
        "the day's budget goes through the complication queue; past it they go as userInfo; the watch shows the newest")
    func budget() throws {
        let pair = Simulator.scripted(complicationsPerDay: 2)
        let replies = try ["a", "b", "c"].map { try push($0, on: pair) }
        #expect(replies.map(\.sentAs) == ["complication", "complication", "userInfo"])
        #expect(replies.map(\.remaining) == [1, 0, 0])
        #expect(pair.phoneNode?.complicationBudget.used == 2)
        pair.advance(by: .seconds(1))
        let watch = try #require(pair.watchNode)
        #expect(watch.complication?.text == "c" && watch.complicationsReceived == 3)
        let status = try #require(pair.watch(.status)?.json)
        #expect(status.contains("\"complication\":\"c\""), "\(status)")
    }

    @Test("an older complication arriving after a newer one (one went as userInfo) does not replace it")
    func newestSentWins() throws {
        let pair = Simulator.scripted()
        let newer = ComplicationPayload(text: "newer", sentAt: pair.phoneClock.advanced(by: .seconds(1)))
        let older = ComplicationPayload(text: "older", sentAt: pair.phoneClock)
        for payload in [newer, older] { pair.transferFromPhone(payload.encoded()) }
        pair.advance(by: .seconds(1))
        let watch = try #require(pair.watchNode)
        #expect(watch.complication == newer)
        #expect(watch.complicationsReceived == 2)
        #expect(pair.watchComplicationWrites == 1)
    }

    @Test("after the phone's clock steps back an hour, its next complication still replaces the one shown")
    func clockStepsBack() throws {
        let pair = Simulator.scripted(complicationsPerDay: 1)
        _ = try push("before", on: pair)
        pair.stepPhoneClock(by: .seconds(-3600))
        // The budget is spent, so this one goes as ordinary userInfo: another queue, same order.
        #expect(try push("after", on: pair).sentAs == "userInfo")
        pair.advance(by: .seconds(1))
        let shown = try #require(pair.watchNode?.complication)
        #expect(shown.text == "after")
        #expect(shown.order > shown.sentAt, "the order moved on past the stepped-back clock")
    }
}
