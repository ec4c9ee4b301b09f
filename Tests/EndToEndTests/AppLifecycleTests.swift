import AdminCommands
import Foundation
import Nodes
import TestSupport
import Testing
import WorkoutModel

/// The watch app apart from its device, through the CLIs: `watchctl app terminate` leaves watchd
/// linked with its queues, and what the phone sends meanwhile waits on the watch, undelivered
/// (`hasContentPending`), until the app launches again — by `watchctl app launch` or by the
/// phone's launch request (`startWatchApp`).
@Suite("The watch app not running")
struct AppLifecycleTests {
    private func watchStatus(_ system: SyncSystem) async throws -> WatchStatus {
        try await system.watchctl("status", "--json").decode()
    }

    @Test("a context, a transfer and a file wait for a terminated app, then are delivered at its launch, once")
    func heldUntilLaunch() async throws {
        let system = try SyncSystem("app-terminated")
        let (_, run) = try await system.startBothWithRun()

        let terminated: AdminReply.App = try await system.watchctl("app", "terminate", "--json").decode()
        #expect(terminated.appState == "notRunning")
        var status = try await watchStatus(system)
        #expect(status.appState == "notRunning" && status.activation == "notActivated" && status.linked)
        #expect(!status.hasContentPending)

        // The phone edits (a context), pushes a complication (a transfer) and sends a file.
        try await system.phonectl("complete", run, "1", "1", "--reps", "5", "--weight", "100").succeeded()
        try await system.phonectl("complication", "push", "2 sets left").succeeded()
        let source = system.directory.appending("note.txt")
        try Data("for the watch".utf8).write(to: URL(fileURLWithPath: source))
        try await system.phonectl("file", "send", source).succeeded()
        try await system.eventually("all three are on the watch, waiting") {
            let trace = try await system.watchctl("trace").succeeded().standardOutput
            let files: [AdminReply.FileProgress] = try await system.phonectl("file", "list", "--json").decode()
            // A file's bytes are all acknowledged by the watch, and the file still outstanding: the
            // watch has it and has not handed it to the app.
            return trace.contains("transfer.receive") && files.count == 1 && files[0].acknowledged == files[0].bytes
        }
        // Nothing reached the app: the run is as it was, no complication, no file kept.
        status = try await watchStatus(system)
        #expect(status.hasContentPending && status.complicationsReceived == 0)
        #expect(try await system.watchRun(run)?.logs[0].sets[0].isDone == false)
        let none: [AdminReply.FileReceived] = try await system.watchctl("file", "received", "--json").decode()
        #expect(none.isEmpty)
        // The phone cannot reach the app; the app's own verbs are refused; the device's answer.
        let message = try await system.phonectl("data", "send", "hello")
        #expect(message.exitCode == 1 && message.standardError.contains("notReachable"))
        let edit = try await system.watchctl("complete", run, "1", "2")
        #expect(
            edit.exitCode == 1
                && edit.standardError.contains("the watch app is not running: launch it first (watchctl app launch)"))
        try await system.watchctl("queue", "list").succeeded()

        let launched: AdminReply.App = try await system.watchctl("app", "launch", "--json").decode()
        #expect(launched.appState == "foreground")
        try await system.eventually("the app got all three and nothing waits") {
            let status = try await watchStatus(system)
            let files: [AdminReply.FileReceived] = try await system.watchctl("file", "received", "--json").decode()
            let done = try await system.watchRun(run)?.logs[0].sets[0].isDone == true
            return !status.hasContentPending && status.complicationsReceived == 1 && files.count == 1 && done
        }
        status = try await watchStatus(system)
        #expect(status.activation == "activated" && status.appState == "foreground")
        try await system.watchctl("complete", run, "1", "2", "--reps", "6", "--weight", "90").succeeded()
        try await system.eventually("the watch's edit reaches the phone") {
            try await system.phoneRun(run).logs[0].sets[1].isDone
        }
        let trace = try await system.watchctl("trace").succeeded().standardOutput
        #expect(trace.contains("terminated") && trace.contains("activationDidComplete"))
    }

    @Test("a file from the watch waits for a terminated phone app; its verbs are refused; a launch delivers it")
    func phoneAppHeldUntilLaunch() async throws {
        let system = try SyncSystem("phone-app-terminated")
        let (_, run) = try await system.startBothWithRun()
        let terminated: AdminReply.App = try await system.phonectl("app", "terminate", "--json").decode()
        #expect(terminated.appState == "notRunning")
        var status: PhoneStatus = try await system.phonectl("status", "--json").decode()
        #expect(status.phoneAppState == "notRunning" && status.activation == "notActivated")

        try await system.watchctl("export", run).succeeded()
        try await system.eventually("the watch's file is on the phone, waiting") {
            let files: [AdminReply.FileProgress] = try await system.watchctl("file", "list", "--json").decode()
            return files.count == 1 && files[0].acknowledged == files[0].bytes
        }
        status = try await system.phonectl("status", "--json").decode()
        #expect(status.hasContentPending)
        let none: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json").decode()
        #expect(none.isEmpty)
        let edit = try await system.phonectl("complete", run, "1", "1")
        #expect(edit.exitCode == 1)
        #expect(edit.standardError.contains("the phone app is not running: launch it first (phonectl app launch)"))
        #expect(try await system.phonectl("show", run).exitCode == 0)

        try await system.phonectl("app", "launch").succeeded()
        try await system.eventually("the phone app got the file and nothing waits") {
            let status: PhoneStatus = try await system.phonectl("status", "--json").decode()
            let files: [AdminReply.FileReceived] = try await system.phonectl("file", "received", "--json").decode()
            return !status.hasContentPending && files.count == 1
        }
        try await system.phonectl("complete", run, "1", "1").succeeded()
    }

    @Test("a message from the watch launches a terminated phone app in the background, and the edit lands")
    func watchMessageWakesThePhoneApp() async throws {
        let system = try SyncSystem("phone-app-woken")
        let (_, run) = try await system.startBothWithRun()
        try await system.phonectl("app", "terminate").succeeded()
        try await system.watchctl("complete", run, "1", "1", "--reps", "4", "--weight", "80").succeeded()
        try await system.eventually("the phone has the watch's edit") {
            try await system.phoneRun(run).logs[0].sets[0].isDone
        }
        let status: PhoneStatus = try await system.phonectl("status", "--json").decode()
        #expect(status.phoneAppState == "background" && status.activation == "activated")
        #expect(system.phonedLog.contains("phone app launched: session activated"))
    }

    @Test("the phone's launch request launches a terminated app, which then gets what waited")
    func launchedByThePhone() async throws {
        let system = try SyncSystem("app-launch-request")
        let (split, _) = try await system.startBothWithRun()
        try await system.watchctl("app", "terminate").succeeded()
        // `phonectl start` pushes the new run and asks the watch app to launch for it.
        let second = try await system.startRun(split)
        try await system.waitForWatchRun(second)
        let status = try await watchStatus(system)
        #expect(status.appState == "foreground" && !status.hasContentPending)
        #expect(system.watchdLog.contains("watch app launched: session activated"))
    }
}
