import ArgumentParsing

/// What `watchctl app` and `phonectl app` do to the app's life, apart from its device
/// (WatchConnectivity's app states; docs/PROTOCOL.md, "The app apart from its device").
package enum AppLifecycle: String, Codable, Equatable, Sendable {
    /// Launched into the foreground: its session activates and it gets what waited.
    case launch
    /// Not running: what arrives waits on the device.
    case terminate
    /// Running, in the background or the foreground.
    case background, foreground
}

extension AppLifecycle {
    /// `app …`'s four leaves, for phonectl and watchctl; `device` names the other side.
    static func specs(waitsFor device: String, launchedBy launcher: String) -> [CommandSpec] {
        [
            CommandSpec(
                name: "terminate",
                abstract: "Quit the app: what the \(device) sends waits undelivered until it launches again.",
                discussion: """
                    The device stays linked and keeps its queues; the app is not running, so contexts,
                    transfers and files from the \(device) wait undelivered (status: content pending),
                    and the app's own verbs are refused. \(launcher)
                    """),
            CommandSpec(
                name: "launch", abstract: "Launch the app (foreground): it activates and gets what waited, in order."),
            CommandSpec(name: "background", abstract: "Move the running app to the background."),
            CommandSpec(name: "foreground", abstract: "Bring the running app to the foreground."),
        ]
    }
}

/// `app launch|terminate|background|foreground`'s JSON: the app's state now (`notRunning`,
/// `background`, `foreground`).
extension AdminReply {
    package struct App: Codable, Equatable, Sendable {
        package var appState: String
        package init(appState: String) { self.appState = appState }
    }
}
