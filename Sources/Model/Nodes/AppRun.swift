import AdminCommands

/// Whether a node's app runs, apart from its device (docs/PROTOCOL.md, "The app apart from its
/// device"), and what `app launch|terminate|background|foreground` does. The node starts with it
/// running in the foreground, as if the person had just opened it.
package struct AppRun: Sendable {
    package private(set) var isRunning = true
    package private(set) var isForeground = true
    /// `watch app` or `phone app`, in logs and replies.
    private let name: String
    /// What a refused verb says.
    package let notRunning: String

    package init(_ device: String, cli: String) {
        name = "\(device) app"
        notRunning = "the \(device) app is not running: launch it first (\(cli) app launch)"
    }

    package var state: String { !isRunning ? "notRunning" : isForeground ? "foreground" : "background" }

    /// The app launches (`app launch`, the phone's launch request, a message that wakes the phone
    /// app): its session activates, and the link hands it what waited (`setAppRunning`).
    package mutating func launch(foreground: Bool, by cause: String) -> [NodeAction] {
        isRunning = true
        isForeground = foreground
        return [
            .log(LogLine(.notice, "app", "\(name) launched: session activated", [("by", cause)])),
            .journal(
                JournalEntry(.app, detail: "launched\(foreground ? "" : " in the background"); activationDidComplete")),
            .link(.setAppRunning(true)), .link(.setAppForeground(foreground)),
        ]
    }

    /// Serves `app …`: the actions, and the reply.
    package mutating func serve(_ change: AppLifecycle) -> (actions: [NodeAction], outcome: AdminOutcome) {
        var actions: [NodeAction] = []
        let what: String
        switch change {
        case .launch where isRunning, .terminate where !isRunning:
            what = isRunning ? "already running" : "not running"
        case .launch:
            actions = launch(foreground: true, by: "the admin socket")
            what = "launched (foreground), session activated"
        case .terminate:
            isRunning = false
            isForeground = false
            actions = [
                .log(LogLine(.notice, "app", "\(name) terminated: what the other side sends waits until it launches")),
                .journal(JournalEntry(.app, detail: "terminated")), .link(.setAppForeground(false)),
                .link(.setAppRunning(false)),
            ]
            what = "terminated"
        case .background, .foreground:
            isForeground = change == .foreground
            actions = [.link(.setAppForeground(isForeground))]
            what = state
        }
        let json = AdminOutcome.json(AdminReply.App(appState: state))
        return (actions, .output(text: "\(name) \(what)", json: json))
    }
}
