import Testing
import WorkoutModel

/// A complication's order and the phone's daily budget (what the two daemons do with them:
/// SimulationTests' `ComplicationScenarioTests`).
@Suite("Complications: their order and the daily budget")
struct ComplicationTests {
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
