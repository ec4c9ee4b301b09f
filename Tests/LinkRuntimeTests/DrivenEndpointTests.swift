import LinkProtocol
import LinkRuntime
import POSIX
import TestSupport
import Testing

/// The endpoint driven by a node that holds the engine (`LinkEndpoint.drive`): the outboxes'
/// outcomes go to the driver, and a refused append voids the ones after it until they are numbered
/// again.
@Suite("Driven endpoint: the outbox's outcomes go to the node")
struct DrivenEndpointTests {
    enum Heard: Equatable, Sendable {
        case persisted(UInt64, [UInt8])
        case refused(UInt64)
    }

    @Test("a refused append is reported; the appends after it are dropped until the node numbers them again")
    func refusedAppend() async throws {
        let directory = try TemporaryDirectory("driven-endpoint")
        let state = directory.appending("watch")
        let loop = try EventLoop(name: uniqueLoopName("driven"))
        defer { loop.shutdown() }
        let endpoint = try LinkEndpoint(
            configuration: LinkConfiguration(role: .watch),
            state: try LinkStateDirectory(root: state) { [UInt8](repeating: 5, count: 16) },
            pairingKey: freshPairingKey(),
            address: .dial(host: "127.0.0.1", port: 9), loop: loop, seed: 1)
        let heard = Recorder<Heard>()
        try await loop.submit {
            endpoint.drive(
                LinkDriver(
                    event: { event in
                        if case .transferPersisted(let sequence, let payload) = event {
                            heard.record(.persisted(sequence, payload))
                        }
                    },
                    appendRefused: { sequence, _, _ in heard.record(.refused(sequence)) },
                    fileNotQueued: { _, _ in }))
            // One commit for "a" (the first starts at once); "big" and "c" wait and go together.
            for (sequence, payload) in [(UInt64(1), [UInt8(1)]), (2, [UInt8](repeating: 2, count: 70_000)), (3, [3])] {
                endpoint.carryOut(driven: .appendTransfer(sequence: sequence, payload: payload, complication: false))
            }
        }
        _ = try await heard.wait(for: "a and the refusal") { $0.count == 2 }
        // Numbered before the node heard of the refusal: void.
        try await loop.submit {
            endpoint.carryOut(driven: .appendTransfer(sequence: 3, payload: [9], complication: false))
            endpoint.appendsRenumbered(complication: false)
            endpoint.carryOut(driven: .appendTransfer(sequence: 2, payload: [3], complication: false))
        }
        let all = try await heard.wait(for: "c, numbered again") { $0.count == 3 }
        #expect(all == [.persisted(1, [1]), .refused(2), .persisted(2, [3])])
        let reopened = try LinkStateDirectory(root: state) { [UInt8](repeating: 5, count: 16) }
        #expect(reopened.outbox.pending().map(\.payload) == [[1], [3]])
    }
}
