import Foundation
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

@Suite("Frames after the handshake are sealed, over real sockets")
struct FrameIntegrityTests {
    @Test("a bit flipped on the way is refused: the link drops and comes back, and every transfer arrives once, intact")
    func flippedBit() async throws {
        let directory = try TemporaryDirectory("link")
        let key = freshPairingKey()
        let phone = try await TestEndpoint(
            role: .phone, state: directory.appending("phone"), key: key, address: .listen(host: "127.0.0.1", port: 0))
        defer { phone.shutdown() }
        let proxy = try await FaultProxy(upstreamPort: phone.port!)
        defer { proxy.stop() }
        // One bit of the seventh transfer's payload, watch to phone, on the first connection only.
        try await proxy.setToxics([.corrupt(pattern: Array("edit-7!".utf8))], on: [.upstream])
        let watch = try await TestEndpoint(
            role: .watch, state: directory.appending("watch"), key: key,
            address: .dial(host: "127.0.0.1", port: proxy.port))
        defer { watch.shutdown() }
        try await phone.on { link in
            let previous = link.onNotification
            link.onNotification = { notification in
                previous(notification)
                if case .userInfoReceived(let key, _) = notification { link.transferProcessed(key) }
            }
        }
        try await watch.waitUntil(linked: true)
        let sent = (1...20).map { "edit-\($0)!" }
        for payload in sent {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UInt64, any Error>) in
                watch.loop.execute {
                    watch.endpoint.transferUserInfo(Array(payload.utf8)) { continuation.resume(with: $0) }
                }
            }
        }
        let received = try await phone.notifications.wait(for: "20 transfers") {
            $0.filter { if case .userInfoReceived = $0 { true } else { false } }.count >= 20
        }
        let payloads = received.compactMap { notification -> String? in
            if case .userInfoReceived(_, let payload) = notification { return String(decoding: payload, as: UTF8.self) }
            return nil
        }
        #expect(payloads == sent)
        #expect(try await proxy.statistics().corruptions == 1)
        #expect(
            received.contains {
                if case .linkLost(let reason) = $0 { reason.contains("failed authentication") } else { false }
            })
        try await watch.notifications.wait(for: "the last transfer finished") {
            $0.contains(.transferFinished(sequence: 20, payload: Array("edit-20!".utf8)))
        }
        #expect(try await proxy.statistics().connectionsAccepted >= 2, "the watch dialled again")
    }
}
