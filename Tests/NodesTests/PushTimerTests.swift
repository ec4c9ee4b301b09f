import AdminCommands
import Nodes
import Testing
import WorkoutModel

/// The phone's push timer (`PhoneNode.finish`): kept at the engine's next deadline, and, with none,
/// still armed so that a wall clock stepped back is noticed.
@Suite("The phone's push timer")
struct PushTimerTests {
    private func lastPushTimer(_ actions: [PhoneNode.Action]) -> PhoneNode.Action? {
        actions.last {
            switch $0 {
            case .node(.armTimer(.push, _)), .node(.cancelTimer(.push)): true
            default: false
            }
        }
    }

    /// Found by the simulator (seed 23498): every ended run had left the recent window after the
    /// phone's clock stepped forward, so the timer was cancelled; when the clock stepped back, the
    /// runs were recent again and nothing told the engine.
    @Test("with no deadline the timer stays armed; a clock stepped back brings ended runs back into the push")
    func clockStepsBackWithNoDeadline() throws {
        var (pair, run) = try BackToBackTests.started()
        _ = pair.phonectl(.end(run: run))
        #expect(pair.phone.engine.lastPushed?.workouts.map(\.id) == [run])
        // A day and a half later (the window is a day) the run leaves the push.
        pair.advance(by: .seconds(36 * 3_600))
        pair.deliver(.phone(.reported(.timerFired(.push))))
        #expect(pair.phone.engine.lastPushed?.workouts.isEmpty == true)
        #expect(pair.phone.engine.nextDeadline == nil)
        let timer = try #require(lastPushTimer(pair.phoneActions))
        guard case .node(.armTimer(.push, let at)) = timer else {
            Issue.record("the push timer was cancelled: \(timer)")
            return
        }
        #expect(at == NodeTimer.noDeadline)
        // The clock steps back a day: the run is recent again, and the timer (which fires on a step) pushes it.
        pair.advance(by: .seconds(-24 * 3_600))
        pair.deliver(.phone(.reported(.timerFired(.push))))
        #expect(pair.phone.engine.lastPushed?.workouts.map(\.id) == [run])
    }
}
