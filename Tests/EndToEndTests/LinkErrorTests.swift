import Foundation
import Glibc
import LinkProtocol
import Nodes
import TestSupport
import Testing

/// The link errors docs/PROTOCOL.md names, as the real daemons report them: a bare `linkpeer`
/// plays the other device, so it can send what neither daemon would.
@Suite("Link errors reported by the real daemons")
struct LinkErrorTests {
    private func linkpeer(_ system: SyncSystem, role: String, _ extra: [String]) throws -> DaemonProcess {
        let address = [role == "watch" ? "--connect" : "--listen", "127.0.0.1:\(system.port)"]
        return try DaemonProcess(
            executable: BuildProducts.executable("linkpeer"),
            arguments: ["--role", role, "--state", system.directory.appending("peer"), "--key", system.keyPath]
                + address + extra)
    }

    @Test("phoned answers a message it cannot decode with payloadUnsupportedTypes, not deliveryFailed")
    func undecodableMessage() async throws {
        let system = try SyncSystem("msgcode")
        try await system.startPhoned()
        let watch = try linkpeer(
            system, role: "watch", ["--message", "not JSON", "--message", #"{"kind":"requestSync","schemaVersion":1}"#])
        let refused = try await watch.waitForLine(containing: "message-outcome failed", timeout: hangGuard)
        #expect(refused.contains("payloadUnsupportedTypes: phoned cannot decode it"), "\(refused)")
        let answered = try await watch.waitForLine(containing: "message-outcome replied", timeout: hangGuard)
        #expect(answered.contains(#"{"outcome":"pushed","phoneTime":""#), "\(answered)")
    }

    @Test("a transfer phoned cannot decode fails at its sender with payloadUnsupportedTypes; the queue goes on")
    func undecodableTransfer() async throws {
        let system = try SyncSystem("xfercode")
        try await system.startPhoned()
        // Activated first (a transfer is refused before the first handshake), then linkpeer's
        // transfers ("transfer-1", …), which are no watch update phoned can read.
        let first = try linkpeer(system, role: "watch", [])
        _ = try await first.waitForLine(containing: "linked peer=", timeout: hangGuard)
        first.send(SIGTERM)
        _ = try await first.waitForExit()
        let watch = try linkpeer(system, role: "watch", ["--enqueue", "2"])
        for sequence in 1...2 {
            let failed = try await watch.waitForLine(containing: "failed seq=\(sequence)", timeout: hangGuard)
            #expect(failed.contains("payloadUnsupportedTypes"), "\(failed)")
        }
        #expect(!watch.standardOutput.contains("finished seq="))
        #expect(system.phonedLog.contains("refused a watch update"))
        let trace = try await system.phonectl("trace").succeeded().standardOutput
        #expect(trace.contains("transfer.ack.send") && trace.contains("refused"))
    }

    @Test("watchd answers a message it has no handler for with deliveryFailed")
    func noHandler() async throws {
        let system = try SyncSystem("msgnone")
        let phone = try linkpeer(system, role: "phone", ["--message", #"{"kind":"unknown","schemaVersion":1}"#])
        _ = try await phone.waitForLine(containing: "ready role=phone", timeout: hangGuard)
        try await system.startWatchd()
        let outcome = try await phone.waitForLine(containing: "message-outcome", timeout: hangGuard)
        #expect(outcome.contains("failed deliveryFailed: watchd has no handler"), "\(outcome)")
    }

    @Test("a cancelled transfer is reported to watchd as transferCancelled")
    func cancelledTransfer() async throws {
        let system = try SyncSystem("cancel")
        let (_, run) = try await system.startBothWithRun()
        try await system.stopPhoned()
        try await system.waitForWatchStatus("unlinked") { !$0.linked }
        _ = try await system.watch("complete", run, "1", "1")
        let queued = try await system.waitForQueue(1)
        _ = try await system.watch("queue", "cancel", "\(queued[0].sequence)")
        try await system.eventually("watchd logged the cancelled transfer") {
            system.watchdLog.contains("transfer not delivered") && system.watchdLog.contains("transferCancelled")
        }
    }
}
