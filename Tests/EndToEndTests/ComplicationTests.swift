import AdminCommands
import Foundation
import LinkProtocol
import Nodes
import TestSupport
import Testing

/// transferCurrentComplicationUserInfo between the real daemons: `phonectl complication push` and
/// `show`, what `watchctl status` shows, the daily budget and the one current item.
@Suite("Complications between the daemons")
struct ComplicationTests {
    private func push(_ system: SyncSystem, _ text: String) async throws -> AdminReply.ComplicationPushed {
        try await system.phonectl("complication", "push", text, "--json").decode()
    }

    private func show(_ system: SyncSystem) async throws -> ComplicationStatus {
        try await system.phonectl("complication", "show", "--json").decode()
    }

    @Test("budget 50: fifty go as complications, the 51st as userInfo; the watch shows the newest")
    func budgetOfFifty() async throws {
        let system = try SyncSystem("budget")
        try await system.startBoth()
        #expect(try await show(system).remaining == 50)
        for index in 1...50 {
            let pushed = try await push(system, "\(index)")
            #expect(pushed.sentAs == "complication" && pushed.remaining == 50 - index, "\(pushed)")
        }
        let last = try await push(system, "51")
        #expect(last.sentAs == "userInfo" && last.remaining == 0, "\(last)")
        try await system.waitForWatchStatus("all 51 arrived, the newest shown") {
            $0.complicationsReceived == 51 && $0.complication == "51"
        }
        // Spent stays spent across a restart of phoned (the budget is on disk).
        try await system.killPhoned()
        _ = try await system.startPhoned()
        #expect(try await show(system).remaining == 0)
    }

    @Test("only the newest outstanding complication is current; the others stay queued and all arrive in order")
    func oneCurrent() async throws {
        let system = try SyncSystem("current")
        try await system.startBoth()
        try await system.killWatchd()
        var sequences: [UInt64] = []
        for text in ["first", "second", "third"] { sequences.append(try await push(system, text).sequence) }
        let outstanding = try await show(system).outstanding
        #expect(outstanding.map(\.sequence) == sequences)
        #expect(outstanding.map(\.isCurrentComplicationInfo) == [false, false, true])

        _ = try await system.startWatchd()
        try await system.waitForWatchStatus("the three arrived; the current one is shown") {
            $0.complicationsReceived == 3 && $0.complication == "third"
        }
        try await system.eventually("phoned's outbox is empty") { try await self.show(system).outstanding.isEmpty }
        // What arrived survives a restart of watchd.
        try await system.killWatchd()
        _ = try await system.startWatchd()
        #expect(try await system.watchStatus().complication == "third")
    }

    @Test("a watch whose complication is off the face reads a budget of 0: pushes go as userInfo and still arrive")
    func disabled() async throws {
        let system = try SyncSystem("compoff")
        try await system.startBoth()
        _ = try await system.watch("complication", "disable")
        try await system.waitForPhoneStatus("phoned sees the complication disabled") { !$0.complicationEnabled }
        #expect(try await show(system).remaining == 0)
        let pushed = try await push(system, "hidden")
        #expect(pushed.sentAs == "userInfo")
        try await system.waitForWatchStatus("it arrived") { $0.complication == "hidden" }
        _ = try await system.watch("complication", "enable")
        try await system.waitForPhoneStatus("phoned sees it enabled") { $0.complicationEnabled }
        #expect(try await push(system, "shown").sentAs == "complication")
    }

    @Test(
        "complication cancel: a queued complication or userInfo one leaves its outbox and never arrives; twice is refused"
    )
    func cancel() async throws {
        let system = try SyncSystem("complication-cancel")
        try await system.startBoth()
        try await system.stopWatchd()
        let first = try await push(system, "first")
        let second = try await push(system, "second")
        #expect(first.sentAs == "complication" && second.sentAs == "complication")
        let cancelled: AdminReply.Cancelled = try await system.phonectl(
            "complication", "cancel", "\(first.sequence)", "--json"
        ).decode()
        #expect(cancelled == AdminReply.Cancelled(cancelled: first.sequence, wasSent: false))
        let again = try await system.phonectl("complication", "cancel", "\(first.sequence)")
        #expect(again.exitCode == 1 && again.standardError.contains("no outstanding transfer \(first.sequence)"))
        #expect(try await show(system).outstanding.map(\.sequence) == [second.sequence])

        try await system.startWatchd()
        try await system.eventually("the second arrives, alone") {
            let status: WatchStatus = try await system.watchctl("status", "--json").decode()
            let outstanding = try await show(system).outstanding
            return status.complication == "second" && status.complicationsReceived == 1 && outstanding.isEmpty
        }

        // Off the face the budget reads 0: a push goes as ordinary userInfo, cancelled with --userinfo.
        try await system.watchctl("complication", "disable").succeeded()
        try await system.eventually("the phone reads a budget of 0") { try await show(system).remaining == 0 }
        try await system.stopWatchd()
        let plain = try await push(system, "third")
        #expect(plain.sentAs == "userInfo")
        let wrongQueue = try await system.phonectl("complication", "cancel", "\(plain.sequence + 100)")
        #expect(wrongQueue.exitCode == 1)
        try await system.phonectl("complication", "cancel", "\(plain.sequence)", "--userinfo").succeeded()
        #expect(try await show(system).outstanding.isEmpty)
        try await system.startWatchd()
        try await system.waitUntilLinked()
        let status: WatchStatus = try await system.watchctl("status", "--json").decode()
        #expect(status.complication == "second" && status.complicationsReceived == 0)
        #expect(system.phonedLog.contains("complication transfer cancelled"))
    }
}
