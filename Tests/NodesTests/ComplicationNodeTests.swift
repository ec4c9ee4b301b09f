import AdminCommands
import Foundation
import LinkProtocol
import Nodes
import Testing
import WorkoutModel

/// `complication push` on the phone node and what the watch node keeps, back to back (`NodePair`).
@Suite("Complications between the nodes")
struct ComplicationNodeTests {
    private func pushed(_ response: AdminResponse) throws -> AdminReply.ComplicationPushed {
        try JSONDecoder().decode(AdminReply.ComplicationPushed.self, from: Data((response.json ?? "").utf8))
    }

    @Test(
        "the day's budget goes through the complication queue; past it they go as userInfo; the watch shows the newest")
    func budget() throws {
        var pair = NodePair(complicationsPerDay: 2)
        pair.connect()
        let replies = try ["a", "b", "c"].map { try pushed(pair.phonectl(.pushComplication(text: $0))) }
        #expect(replies.map(\.sentAs) == ["complication", "complication", "userInfo"])
        #expect(replies.map(\.remaining) == [1, 0, 0])
        #expect(pair.phone.complicationBudget.used == 2)
        #expect(pair.watch.complication?.text == "c" && pair.watch.complicationsReceived == 3)
        let status = try #require(pair.watchctl(.status).json)
        #expect(status.contains("\"complication\":\"c\""), "\(status)")
    }

    @Test("an older complication arriving after a newer one (one went as userInfo) does not replace it")
    func newestSentWins() throws {
        var pair = NodePair()
        pair.connect()
        let newer = ComplicationPayload(text: "newer", sentAt: pair.now.advanced(by: .seconds(1)))
        let older = ComplicationPayload(text: "older", sentAt: pair.now)
        for (sequence, payload) in [(UInt64(1), newer), (2, older)] {
            let key = TransferKey(queue: NodePair.phoneInstance, sequence: sequence)
            pair.deliver(.watch(.link(.userInfoReceived(key, payload: payload.encoded()))))
        }
        #expect(pair.watch.complication == newer)
        #expect(pair.watch.complicationsReceived == 2)
        #expect(
            pair.watchActions.filter { if case .store(.persistComplication) = $0 { true } else { false } }.count == 1)
    }

    @Test("after the phone's clock steps back an hour, its next complication still replaces the one shown")
    func clockStepsBack() throws {
        var pair = NodePair(complicationsPerDay: 1)
        pair.connect()
        _ = try pushed(pair.phonectl(.pushComplication(text: "before")))
        pair.advance(by: .seconds(-3600))
        // The budget is spent, so this one goes as ordinary userInfo: another queue, same order.
        #expect(try pushed(pair.phonectl(.pushComplication(text: "after"))).sentAs == "userInfo")
        #expect(pair.watch.complication?.text == "after")
        let shown = try #require(pair.watch.complication)
        #expect(shown.order > shown.sentAt, "the order moved on past the stepped-back clock")
    }

    @Test("a payload without an order (written before there was one) is ordered by when it was sent")
    func legacyPayloadOrder() throws {
        let json = #"{"kind":"complication","schemaVersion":1,"sentAt":"2026-12-01T04:00:00.000000Z","text":"old"}"#
        let payload = try DocumentCoder.decode(ComplicationPayload.self, from: Array(json.utf8))
        #expect(payload.order == payload.sentAt)
    }

    @Test("the budget counts a UTC day: spent today, zero remaining; tomorrow starts afresh; disabled reads 0")
    func budgetDays() {
        let day1 = Timestamp(secondsSinceEpoch: 1_780_000_000)
        var budget = ComplicationBudget()
        for _ in 0..<3 { budget.spend(at: day1) }
        #expect(budget.remaining(at: day1, perDay: 3, complicationEnabled: true) == 0)
        let day2 = day1.advanced(by: .seconds(86_400))
        #expect(budget.remaining(at: day2, perDay: 3, complicationEnabled: true) == 3)
        #expect(budget.remaining(at: day2, perDay: 3, complicationEnabled: false) == 0)
        budget.spend(at: day2)
        #expect(budget.day == String(day2.iso8601.prefix(10)) && budget.used == 1)
        budget.refund(at: day2)
        #expect(budget.used == 0)
    }
}
