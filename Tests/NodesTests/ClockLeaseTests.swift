import Nodes
import Testing
import WorkoutModel

@Suite("Clock lease: the clock file is written once a stamp reaches its mark")
struct ClockLeaseTests {
    static let start = Timestamp(secondsSinceEpoch: 1_780_000_000)

    @Test("the first stamp is covered by a mark a lease ahead; stamps below it write nothing; reaching it renews")
    func renewsOnlyWhenReached() throws {
        var clock = HybridLogicalClock(origin: .watch)
        var lease = ClockLease()
        let first = clock.stamp(at: Self.start)
        let renewed = lease.renew(covering: clock.last)
        let mark = try #require(renewed)
        #expect(mark == Stamp(time: Self.start.advanced(by: ClockLease.lease), counter: 0, origin: .watch))
        #expect(mark > first)
        // A thousand edits within the lease: no write.
        for step in 1...1_000 {
            _ = clock.stamp(at: Self.start.advanced(by: .microseconds(step * 900)))
            #expect(lease.renew(covering: clock.last) == nil)
        }
        // The wall clock passes the mark: the next mark is a lease past the stamp.
        let late = clock.stamp(at: Self.start.advanced(by: ClockLease.lease))
        #expect(
            lease.renew(covering: clock.last) == Stamp(time: late.time.advanced(by: ClockLease.lease), origin: .watch))
    }

    @Test("a restart from the mark never stamps at or below a stamp made before it, even with the wall clock behind")
    func restartStaysAbove() throws {
        var clock = HybridLogicalClock(origin: .phone)
        var lease = ClockLease()
        var persisted: Stamp?
        var issued: [Stamp] = []
        for step in 0..<500 {
            issued.append(clock.stamp(at: Self.start.advanced(by: .milliseconds(step * 7))))
            if let mark = lease.renew(covering: clock.last) { persisted = mark }
        }
        // The counter moves too when the wall clock stalls.
        for _ in 0..<50 { issued.append(clock.stamp(at: Self.start)) }
        if let mark = lease.renew(covering: clock.last) { persisted = mark }
        let mark = try #require(persisted)
        var restarted = HybridLogicalClock(origin: .phone, highWater: mark)
        let next = restarted.stamp(at: Self.start.advanced(by: .seconds(-60)))
        #expect(issued.allSatisfy { $0 < next })
    }

    @Test("a stamp seen from the other side at or past the mark renews it")
    func observedStampRenews() throws {
        var clock = HybridLogicalClock(origin: .phone)
        var lease = ClockLease()
        _ = clock.stamp(at: Self.start)
        _ = lease.renew(covering: clock.last)
        clock.observe(Stamp(time: Self.start.advanced(by: .seconds(5)), counter: 3, origin: .watch))
        let renewed = lease.renew(covering: clock.last)
        #expect(renewed?.time == Self.start.advanced(by: .seconds(6)))
    }
}
