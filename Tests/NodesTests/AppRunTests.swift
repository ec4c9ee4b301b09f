import AdminCommands
import Nodes
import Testing

/// One app's life apart from its device, rule by rule: the state each verb leaves and the link
/// commands it asks for.
@Suite("AppRun: an app's life apart from its device")
struct AppRunTests {
    static func links(_ actions: [NodeAction]) -> [LinkCommand] {
        actions.compactMap { if case .link(let command) = $0 { command } else { nil } }
    }

    @Test("terminate stops the app and its deliveries; launch starts it in the foreground and lets them go")
    func terminateThenLaunch() {
        var app = AppRun("watch", cli: "watchctl")
        #expect(app.state == "foreground")
        let terminated = app.serve(.terminate)
        #expect(app.state == "notRunning" && !app.isRunning)
        #expect(Self.links(terminated.actions) == [.setAppForeground(false), .setAppRunning(false)])
        #expect(terminated.actions.contains { if case .journal(let entry) = $0 { entry.kind == .app } else { false } })
        let launched = app.serve(.launch)
        #expect(app.state == "foreground")
        #expect(Self.links(launched.actions) == [.setAppRunning(true), .setAppForeground(true)])
    }

    @Test("launching a running app, or terminating a stopped one, changes nothing")
    func idempotent() {
        var app = AppRun("phone", cli: "phonectl")
        #expect(app.serve(.launch).actions.isEmpty)
        _ = app.serve(.terminate)
        #expect(app.serve(.terminate).actions.isEmpty && !app.isRunning)
    }

    @Test("a launch in the background (a message waking the phone app) leaves it running, not in front")
    func backgroundLaunch() {
        var app = AppRun("phone", cli: "phonectl")
        _ = app.serve(.terminate)
        let actions = app.launch(foreground: false, by: "a message from the watch")
        #expect(app.state == "background")
        #expect(Self.links(actions) == [.setAppRunning(true), .setAppForeground(false)])
        #expect(app.notRunning == "the phone app is not running: launch it first (phonectl app launch)")
    }
}
