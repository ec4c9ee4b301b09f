import Nodes
import Testing
import WorkoutModel

/// A timer's deadline is on the wall clock, which steps; the shells (`NodeShell.arm`, the simulator's
/// host) fire it by these rules.
@Suite("Node timers on a wall clock that steps")
struct NodeTimerTests {
    let t0 = Timestamp(iso8601: "2026-12-07T05:00:00Z")!

    @Test("due when the wall clock reaches the deadline, or the wait passes, or the wall clock stepped")
    func due() {
        let at = t0.advanced(by: .seconds(60))
        let armed = Duration.seconds(60)
        // No step: due only at the deadline.
        #expect(!NodeTimer.isDue(at: at, now: t0.advanced(by: .seconds(30)), waited: .seconds(30), armedFor: armed))
        #expect(NodeTimer.isDue(at: at, now: at, waited: .seconds(60), armedFor: armed))
        // A step forward of an hour: the wall clock is past the deadline.
        #expect(NodeTimer.isDue(at: at, now: t0.advanced(by: .seconds(3_610)), waited: .seconds(10), armedFor: armed))
        // A step back of an hour: not the deadline, but the clock stepped: the node looks again.
        #expect(NodeTimer.isDue(at: at, now: t0.advanced(by: .seconds(-3_590)), waited: .seconds(10), armedFor: armed))
        // Under a second of drift is not a step.
        #expect(
            !NodeTimer.isDue(at: at, now: t0.advanced(by: .milliseconds(10_500)), waited: .seconds(10), armedFor: armed)
        )
    }

    @Test("the shell looks again at least every ten seconds, and never later than the deadline or the wait")
    func wait() {
        #expect(NodeTimer.wait(until: t0.advanced(by: .seconds(3)), now: t0) == .seconds(3))
        #expect(NodeTimer.wait(until: t0.advanced(by: .seconds(600)), now: t0) == NodeTimer.wallClockCheck)
        #expect(NodeTimer.wait(until: t0.advanced(by: .seconds(-5)), now: t0) == .zero)
        #expect(
            NodeTimer.wait(until: t0.advanced(by: .seconds(600)), now: t0, waited: .seconds(58), armedFor: .seconds(60))
                == .seconds(2))
    }
}
