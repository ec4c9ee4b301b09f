import AdminCommands
import Foundation
import TestSupport
import Testing

/// sendMessageData between the real daemons, driven through `phonectl data` / `watchctl data`.
@Suite("Data messages between the daemons")
struct DataMessageTests {
    private struct Received: Decodable {
        var bytes: Int
        var hex: String
        var wantsReply: Bool
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    @Test("both ways: the bytes arrive as sent, a reply comes back byte for byte, and the receiver lists them")
    func bothWays() async throws {
        let system = try SyncSystem("data")
        try await system.startBoth()
        let sent = try decode(
            AdminReply.DataSent.self, try await system.phone("data", "send", "--hex", "00ff7f80", "--reply", "--json"))
        #expect(sent.outcome == "replied" && sent.bytes == 4 && sent.reply == "00ff7f80", "\(sent)")
        #expect((sent.roundTripMilliseconds ?? -1) >= 0)
        let onWatch = try decode([Received].self, try await system.watch("data", "received", "--json"))
        #expect(onWatch.map(\.hex) == ["00ff7f80"] && onWatch.first?.wantsReply == true)

        let text = try await system.watch("data", "send", "héllo ⌚️")
        #expect(text.hasPrefix("delivered"), "\(text)")
        let onPhone = try decode([Received].self, try await system.phone("data", "received", "--json"))
        #expect(onPhone.map(\.hex) == [DataCommand.hex(Array("héllo ⌚️".utf8))])
        #expect(onPhone.first?.wantsReply == false)
    }

    @Test("refusals exit 1 and name the WCError: notReachable while wrist-down, payloadTooLarge over 65,536 bytes")
    func refusals() async throws {
        let system = try SyncSystem("datano")
        try await system.startBoth()
        let tooLarge = try await system.phonectl("data", "send", String(repeating: "x", count: 65_537))
        #expect(tooLarge.exitCode == 1 && tooLarge.standardError.contains("payloadTooLarge"), "\(tooLarge)")
        let notHex = try await system.phonectl("data", "send", "--hex", "0g")
        #expect(notHex.exitCode == 64 && notHex.standardError.contains("not hex"), "\(notHex)")

        _ = try await system.watch("wrist", "down")
        try await system.waitForPhoneStatus("the watch app is in the background") { !$0.reachable }
        let unreachable = try await system.phonectl("data", "send", "ping", "--reply")
        #expect(unreachable.exitCode == 1 && unreachable.standardError.contains("notReachable"), "\(unreachable)")
        // The watch still reaches the phone (its app is the one in the background).
        #expect(try await system.watch("data", "send", "still here").hasPrefix("delivered"))
        let onWatch = try decode([Received].self, try await system.watch("data", "received", "--json"))
        #expect(onWatch.isEmpty, "nothing was queued for later")
    }
}
