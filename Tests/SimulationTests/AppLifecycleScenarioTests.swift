import AdminCommands
import Nodes
import Simulation
import Testing
import WorkoutModel

/// The app apart from its device, scripted on both real nodes: what the link brings while the app
/// is not running waits, unapplied and unacknowledged, and the launch delivers it once.
@Suite("Scripted scenarios: the app not running")
struct AppLifecycleScenarioTests {
    @Test("the watch app terminated: the phone's edits wait (content pending); the launch applies the newest, once")
    func watchAppHeld() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        #expect(pair.watch(.app(.terminate))?.status == .ok)
        let applied = try #require(pair.watchNode?.appliedContexts)
        for set in [1, 2] {
            #expect(pair.phone(.set(ScriptedScenarioTests.complete(run, 1, set)))?.status == .ok)
        }
        pair.advance(by: .seconds(3))
        // Nothing reached the app; the device holds what came, and says so.
        #expect(pair.watchNode?.appliedContexts == applied)
        #expect(pair.watchRuns[run]?.logs[0].sets.allSatisfy { !$0.isDone } == true)
        #expect(pair.watchFacts?.link.hasContentPending == true)
        #expect(pair.watch(.set(ScriptedScenarioTests.complete(run, 2, 1)))?.status == .refused)

        #expect(pair.watch(.app(.launch))?.status == .ok)
        pair.advance(by: .seconds(3))
        // The newest context only: one context applied for the two pushes that waited.
        #expect(pair.watchNode?.appliedContexts == applied + 1)
        #expect(pair.watchRuns[run] == pair.phoneRuns[run])
        #expect(pair.watchFacts?.link.hasContentPending == false)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("the phone app terminated: the watch's message wakes it in the background and the edit lands")
    func phoneAppWoken() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        #expect(pair.phone(.app(.terminate))?.status == .ok)
        #expect(pair.phone(.set(ScriptedScenarioTests.complete(run, 1, 1)))?.status == .refused)
        #expect(pair.watch(.set(ScriptedScenarioTests.complete(run, 1, 2)))?.status == .ok)
        pair.advance(by: .seconds(3))
        #expect(pair.phoneNode?.app.state == "background")
        #expect(pair.phoneRuns[run]?.logs[0].sets[1].isDone == true)
        #expect(pair.invariants().isEmpty, "\(pair.invariants())")
    }

    @Test("a launch request brings a backgrounded watch app to the foreground, and its status says so")
    func launchBringsToForeground() throws {
        let (pair, run) = try ScriptedScenarioTests.started()
        #expect(pair.watch(.wrist(up: false))?.status == .ok)
        #expect(pair.watchNode?.app.state == "background")
        let split = try #require(pair.phoneRuns[run]?.splitID)
        #expect(pair.phone(.start(split: split, endingOthers: false))?.status == .ok)
        pair.advance(by: .seconds(2))
        #expect(pair.watchNode?.app.state == "foreground")
        #expect(pair.watchFacts?.link.watchAppForeground == true)
    }
}
