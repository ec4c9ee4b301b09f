import LiveMirror
import Testing
import WorkoutModel

@Suite("Run flow phase math")
struct RunFlowTests {
    func flow(_ phase: LivePhase, set: Int = 0, anchor: Timestamp = t0, sets: Int = 3) -> RunFlow {
        RunFlow(setCount: sets, timings: timings, position: LivePosition(phase: phase, setIndex: set, anchor: anchor))
    }

    @Test("crossing ready → work anchors work at the countdown's computed end, not at the tick")
    func crossingAnchoredAtComputedEnd() {
        var late = flow(.ready)
        #expect(late.advance(to: atMs(7_300)) == 1)
        #expect(late.position == LivePosition(phase: .work, setIndex: 0, anchor: at(5)))
        #expect(late.remaining(at: atMs(7_300)) == nil)
    }

    @Test("a boundary is crossed exactly at its end, not a microsecond before")
    func boundaryInstant() {
        var flow = flow(.ready)
        #expect(flow.advance(to: at(5).advanced(by: .microseconds(-1))) == 0)
        #expect(flow.remaining(at: at(5).advanced(by: .microseconds(-1))) == .microseconds(1))
        #expect(flow.advance(to: at(5)) == 1)
        #expect(flow.position.phase == .work)
    }

    @Test("rest → ready → work fast-forwards in one call, each hop anchored at the previous end")
    func fastForward() {
        var flow = flow(.rest, set: 0)
        #expect(flow.advance(to: at(200)) == 2)
        #expect(flow.position == LivePosition(phase: .work, setIndex: 1, anchor: at(95)))
    }

    @Test("one advance after two boundaries equals advancing every 100 ms")
    func oneCallEqualsManySmallSteps() {
        var stepped = flow(.rest, set: 0, anchor: atMs(123))
        var instant = atMs(123)
        while instant < at(120) {
            instant = instant.advanced(by: .milliseconds(100))
            stepped.advance(to: instant)
        }
        let once = flow(.rest, set: 0, anchor: atMs(123)).advanced(to: instant)
        #expect(once == stepped)
        #expect(once.position == LivePosition(phase: .work, setIndex: 1, anchor: atMs(95_123)))
    }

    @Test("the remaining time is computed at the moment asked, to the microsecond")
    func remaining() {
        let rest = flow(.rest, anchor: atMs(20_000))
        #expect(rest.remaining(at: atMs(62_500)) == .milliseconds(47_500))
        // Past the rest: the next countdown's remaining time.
        #expect(rest.remaining(at: atMs(111_000)) == .seconds(4))
    }

    @Test("the full cycle: ready, work, rest per set; finish after the last set with no rest")
    func fullCycle() {
        var flow = RunFlow.opening(setCount: 2, timings: timings, at: 0, now: t0)
        #expect(flow.position == LivePosition(phase: .ready, setIndex: 0, anchor: t0))
        #expect(flow.advance(to: at(6)) == 1)
        #expect(flow.completeSet(at: at(30)) == true)
        #expect(flow.position == LivePosition(phase: .rest, setIndex: 0, anchor: at(30)))
        #expect(flow.advance(to: at(120)) == 1)
        #expect(flow.position == LivePosition(phase: .ready, setIndex: 1, anchor: at(120)))
        #expect(flow.skipCountdown(at: at(122)) == true)
        #expect(flow.completeSet(at: at(150)) == true)
        #expect(flow.position == LivePosition(phase: .finish, setIndex: 1, anchor: at(150)))
        #expect(flow.advance(to: at(10_000)) == 0)
    }

    @Test("human actions are refused outside their phase and change nothing")
    func actionsOutsidePhase() {
        var rest = flow(.rest, anchor: at(10))
        #expect(rest.completeSet(at: at(20)) == false)
        #expect(rest.skipCountdown(at: at(20)) == false)
        #expect(rest.position == LivePosition(phase: .rest, setIndex: 0, anchor: at(10)))
        #expect(rest.skipRest(at: at(20)) == true)
        #expect(rest.position == LivePosition(phase: .ready, setIndex: 1, anchor: at(20)))
        var finish = flow(.finish, set: 2)
        #expect(finish.completeSet(at: at(20)) == false)
        #expect(finish.skipRest(at: at(20)) == false)
    }

    @Test("durable repair jumps forward to the first unfinished set's work page, never backward")
    func jumpForward() {
        var behind = flow(.ready, set: 0)
        #expect(behind.jumpForward(toFirstUnfinishedSet: 2, at: at(3)) == true)
        #expect(behind.position == LivePosition(phase: .work, setIndex: 2, anchor: at(3)))
        // A resting flow has already counted its set: the document showing it done is not ahead.
        var resting = flow(.rest, set: 1, anchor: at(1))
        #expect(resting.jumpForward(toFirstUnfinishedSet: 2, at: at(3)) == false)
        #expect(resting.jumpForward(toFirstUnfinishedSet: 0, at: at(3)) == false)
        #expect(resting.position == LivePosition(phase: .rest, setIndex: 1, anchor: at(1)))
        var done = flow(.work, set: 1)
        #expect(done.jumpForward(toFirstUnfinishedSet: nil, at: at(4)) == true)
        #expect(done.position == LivePosition(phase: .finish, setIndex: 2, anchor: at(4)))
        #expect(done.jumpForward(toFirstUnfinishedSet: nil, at: at(5)) == false)
    }
}
