import Foundation
import TestSupport
import Testing

/// isPaired / isWatchAppInstalled between the real daemons: `watchctl unpair`, `watchctl app
/// uninstall` and back, seen by phoned, surviving restarts of either side.
@Suite("Session states: paired and app installed")
struct SessionStateTests {
    @Test(
        "unpaired: phoned reports it, its sends fail with deviceNotPaired and its push waits; pairing again delivers it"
    )
    func unpaired() async throws {
        let system = try SyncSystem("unpair")
        let (split, _) = try await system.startBothWithRun()
        _ = try await system.watch("unpair")
        try await system.waitForPhoneStatus("phoned sees the watch unpaired") { !$0.paired && !$0.reachable }
        let data = try await system.phonectl("data", "send", "hello")
        #expect(data.exitCode == 1 && data.standardError.contains("deviceNotPaired"), "\(data)")
        // A run started now cannot reach the watch: the push is refused (and retried), the launch dropped.
        let run = try await system.startRun(split)
        try await system.waitForPhoneStatus("the push waits with deviceNotPaired") {
            $0.pushError?.contains("deviceNotPaired") == true
        }
        #expect(try await system.watchRun(run) == nil)
        // The watch still reaches the phone.
        #expect(try await system.watch("data", "send", "from the watch").hasPrefix("delivered"))

        _ = try await system.watch("pair")
        try await system.waitForPhoneStatus("phoned sees the watch paired, the push went") {
            $0.paired && $0.reachable && $0.pushError == nil
        }
        try await system.waitForWatchRun(run)
    }

    @Test("app uninstalled: watchAppNotInstalled on the phone, kept by both across kill -9; reinstalling resumes")
    func uninstalled() async throws {
        let system = try SyncSystem("uninstall")
        try await system.startBoth()
        _ = try await system.watch("app", "uninstall")
        try await system.waitForPhoneStatus("phoned sees the app uninstalled") { !$0.watchAppInstalled && $0.paired }
        let refused = try await system.phonectl("data", "send", "hello", "--reply")
        #expect(refused.exitCode == 1 && refused.standardError.contains("watchAppNotInstalled"), "\(refused)")

        try await system.killPhoned()
        _ = try await system.startPhoned()
        try await system.waitUntilLinked()
        #expect(try await system.phoneStatus().watchAppInstalled == false)
        try await system.killWatchd()
        _ = try await system.startWatchd()
        try await system.waitUntilLinked()
        let watch = try await system.watchStatus()
        #expect(!watch.appInstalled && watch.paired)
        #expect(try await system.phonectl("data", "send", "hello").exitCode == 1)

        _ = try await system.watch("app", "install")
        try await system.waitForPhoneStatus("phoned sees the app installed") { $0.watchAppInstalled && $0.reachable }
        #expect(try await system.phone("data", "send", "hello").hasPrefix("delivered"))
    }
}
