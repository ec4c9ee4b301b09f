import AdminCommands
import Foundation
import Nodes
import Simulation
import Testing

/// `data send` / `data received` on both daemons, under the simulator.
@Suite("Data messages between the daemons")
struct DataMessageTests {
    static func sent(_ response: AdminResponse) throws -> AdminReply.DataSent {
        try JSONDecoder().decode(AdminReply.DataSent.self, from: Data(try #require(response.json).utf8))
    }

    @Test("the phone's data message reaches the watch; the reply is the echo, and the watch lists what arrived")
    func phoneToWatch() throws {
        let pair = Simulator.scripted()
        let request = try #require(
            pair.phoneRequest(.data(.send(bytes: [0x00, 0xFF, 0x10], wantsReply: true, count: 1))))
        let (reply, elapsed) = try #require(pair.awaitReply(to: request))
        #expect(reply.status == .ok, "\(reply)")
        // The round trip is the simulated time from the send to the echo.
        let roundTrip = try #require(try Self.sent(reply).roundTripMilliseconds)
        #expect(inLastMillisecond(roundTrip, of: elapsed), "\(roundTrip) ms, answered in ms \(elapsed)")
        #expect(
            reply.json
                == AdminOutcome.json(
                    AdminReply.DataSent(outcome: "replied", bytes: 3, reply: "00ff10", roundTripMilliseconds: roundTrip)
                ))
        #expect(pair.watchNode?.dataMessages.receivedCount == 1)
        let listed = try #require(pair.watch(.data(.received)))
        #expect(listed.json?.contains("\"hex\":\"00ff10\"") == true, "\(listed)")
        #expect(listed.json?.contains("\"wantsReply\":true") == true, "\(listed)")
        #expect(pair.phoneNode?.dataMessages.receivedCount == 0, "a reply is not a received message")
    }

    @Test("the watch's data message without a reply is delivered; unreachable, it is refused with notReachable")
    func watchToPhone() throws {
        let pair = Simulator.scripted()
        let request = try #require(
            pair.watchRequest(.data(.send(bytes: Array("hi".utf8), wantsReply: false, count: 1))))
        let (delivered, elapsed) = try #require(pair.awaitReply(to: request))
        let roundTrip = try #require(try Self.sent(delivered).roundTripMilliseconds)
        #expect(inLastMillisecond(roundTrip, of: elapsed), "\(roundTrip) ms, answered in ms \(elapsed)")
        #expect(
            delivered.json
                == AdminOutcome.json(
                    AdminReply.DataSent(outcome: "delivered", bytes: 2, reply: nil, roundTripMilliseconds: roundTrip)))
        #expect(pair.phoneNode?.dataMessages.received.map(\.hex) == ["6869"])
        pair.partition()
        pair.advance(by: .seconds(5))  // the heartbeats notice: the phone is no longer reachable
        let refused = try #require(pair.watch(.data(.send(bytes: [1], wantsReply: true, count: 1))))
        #expect(refused.status == .refused)
        #expect(refused.message?.hasPrefix("notReachable") == true, "\(refused)")
        #expect(pair.phoneNode?.dataMessages.receivedCount == 1, "never queued")
    }

    @Test("--count sends one after another and reports every round trip; a failure on the way refuses")
    func counted() throws {
        let pair = Simulator.scripted()
        let request = try #require(pair.watchRequest(.data(.send(bytes: [7], wantsReply: true, count: 5))))
        let (reply, elapsed) = try #require(pair.awaitReply(to: request))
        let roundTrips = try #require(try Self.sent(reply).roundTripsMilliseconds, "\(reply)")
        // Each send goes as the one before is answered: the round trips fill the time that passed.
        #expect(roundTrips.count == 5 && roundTrips.allSatisfy { $0 > 0 }, "\(roundTrips)")
        #expect(inLastMillisecond(roundTrips.reduce(0, +), of: elapsed), "\(roundTrips), answered in ms \(elapsed)")
        #expect(pair.phoneNode?.dataMessages.receivedCount == 5)
        pair.partition()
        pair.advance(by: .seconds(5))
        #expect(pair.watch(.data(.send(bytes: [7], wantsReply: true, count: 5)))?.status == .refused)
    }

    @Test("data received keeps the newest 32, oldest first")
    func keepsTheNewest() throws {
        let pair = Simulator.scripted()
        for index in 0..<40 { pair.phone(.data(.send(bytes: [UInt8(index)], wantsReply: false, count: 1))) }
        let watch = try #require(pair.watchNode)
        #expect(watch.dataMessages.receivedCount == 40)
        #expect(watch.dataMessages.received.map(\.hex) == (8..<40).map { DataCommand.hex([UInt8($0)]) })
    }
}
