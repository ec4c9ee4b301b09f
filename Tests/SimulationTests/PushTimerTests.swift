import AdminCommands
import Nodes
import Simulation
import Testing
import WorkoutModel

/// The phone's push timer (`PhoneNode.finish`): kept at the engine's next deadline, and, with none,
/// still armed so that a wall clock stepped back is noticed.
@Suite("The phone's push timer")
struct PushTimerTests {
    /// Found by the simulator (seed 23498): every ended run had left the recent window after the
    /// phone's clock stepped forward, so the timer was cancelled; when the clock stepped back, the
    /// runs were recent again and nothing told the engine.
    @Test("with no deadline the timer stays armed; a clock stepped back brings ended runs back into the push")
    func clockStepsBackWithNoDeadline() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        pair.phone(.end(run: run))
        #expect(pair.phoneNode?.engine.lastPushed?.workouts.map(\.id) == [run])
        // A day and a half later (the window is a day) the run leaves the push: the clock steps, and
        // the timer, which looks at the clock every `NodeTimer.wallClockCheck`, fires.
        pair.stepPhoneClock(by: .seconds(36 * 3_600))
        pair.advance(by: NodeTimer.wallClockCheck + .seconds(1))
        #expect(pair.phoneNode?.engine.lastPushed?.workouts.isEmpty == true)
        #expect(pair.phoneNode?.engine.nextDeadline == nil)
        let at = try #require(pair.phoneTimer(.push), "the push timer was cancelled")
        #expect(at == NodeTimer.noDeadline)
        // The clock steps back a day: the run is recent again, and the timer (which fires on a step) pushes it.
        pair.stepPhoneClock(by: .seconds(-24 * 3_600))
        pair.advance(by: NodeTimer.wallClockCheck + .seconds(1))
        #expect(pair.phoneNode?.engine.lastPushed?.workouts.map(\.id) == [run])
    }
}
