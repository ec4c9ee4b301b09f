import AdminCommands
import LinkProtocol
import Nodes
import Testing

/// `data send` / `data received` on both nodes, back to back in memory (`NodePair`).
@Suite("Data messages between the nodes")
struct DataMessageNodeTests {
    @Test("the phone's data message reaches the watch; the reply is the echo, and the watch lists what arrived")
    func phoneToWatch() throws {
        var pair = NodePair()
        pair.connect()
        let reply = pair.phonectl(.data(.send(bytes: [0x00, 0xFF, 0x10], wantsReply: true, count: 1)))
        #expect(reply.status == .ok, "\(reply)")
        #expect(
            reply.json
                == AdminOutcome.json(
                    AdminReply.DataSent(outcome: "replied", bytes: 3, reply: "00ff10", roundTripMilliseconds: 0)))
        #expect(pair.watch.dataMessages.receivedCount == 1)
        let listed = pair.watchctl(.data(.received))
        #expect(listed.json?.contains("\"hex\":\"00ff10\"") == true, "\(listed)")
        #expect(listed.json?.contains("\"wantsReply\":true") == true, "\(listed)")
        #expect(pair.phone.dataMessages.receivedCount == 0, "a reply is not a received message")
    }

    @Test("the watch's data message without a reply is delivered; unreachable, it is refused with notReachable")
    func watchToPhone() throws {
        var pair = NodePair()
        pair.connect()
        let delivered = pair.watchctl(.data(.send(bytes: Array("hi".utf8), wantsReply: false, count: 1)))
        #expect(
            delivered.json
                == AdminOutcome.json(
                    AdminReply.DataSent(outcome: "delivered", bytes: 2, reply: nil, roundTripMilliseconds: 0)))
        #expect(pair.phone.dataMessages.received.map(\.hex) == ["6869"])
        pair.disconnect()
        let refused = pair.watchctl(.data(.send(bytes: [1], wantsReply: true, count: 1)))
        #expect(refused.status == .refused)
        #expect(refused.message?.hasPrefix("notReachable") == true, "\(refused)")
        #expect(pair.phone.dataMessages.receivedCount == 1, "never queued")
    }

    @Test("--count sends one after another and reports every round trip; a failure on the way refuses")
    func counted() throws {
        var pair = NodePair()
        pair.connect()
        let reply = pair.watchctl(.data(.send(bytes: [7], wantsReply: true, count: 5)))
        #expect(reply.json?.contains("\"roundTripsMilliseconds\":[0,0,0,0,0]") == true, "\(reply)")
        #expect(pair.phone.dataMessages.receivedCount == 5)
        pair.disconnect()
        #expect(pair.watchctl(.data(.send(bytes: [7], wantsReply: true, count: 5))).status == .refused)
    }

    @Test("data received keeps the newest 32, oldest first")
    func keepsTheNewest() throws {
        var pair = NodePair()
        pair.connect()
        for index in 0..<40 { pair.phonectl(.data(.send(bytes: [UInt8(index)], wantsReply: false, count: 1))) }
        #expect(pair.watch.dataMessages.receivedCount == 40)
        #expect(pair.watch.dataMessages.received.map(\.hex) == (8..<40).map { DataCommand.hex([UInt8($0)]) })
    }
}
