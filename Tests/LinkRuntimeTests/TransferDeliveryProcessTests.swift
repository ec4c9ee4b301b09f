import Foundation
import Glibc
import TestSupport
import Testing

/// The userInfo channel end to end: real `linkpeer` processes, real sockets and disks, SIGKILL.
///
/// The watch sends, the phone applies into an fsynced file that is the ground truth of what the
/// app saw. Every test links the pair once first (a never-linked watch refuses to enqueue).
@Suite("Transfer delivery across process crashes (linkpeer)")
struct TransferDeliveryProcessTests {
    /// Checks the applied file is exactly sequences 1...count of one queue, in order, each once,
    /// carrying the payload `transfer-N` for sequence N (unless `payload` says otherwise).
    private func expectExactlyOnceInOrder(
        _ applied: [AppliedTransfer], count: Int, payload: (UInt64) -> String = { "transfer-\($0)" },
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let sequences = applied.map(\.sequence)
        var seen: Set<UInt64> = []
        let duplicates = sequences.filter { !seen.insert($0).inserted }
        let missing = (1...UInt64(count)).filter { !seen.contains($0) }
        let unexpected = sequences.filter { !(1...UInt64(count)).contains($0) }
        let outOfOrder = zip(sequences, sequences.dropFirst()).first { $0.0 >= $0.1 }.map { "\($0.0) then \($0.1)" }
        #expect(duplicates.isEmpty, "applied twice: \(duplicates.prefix(10))", sourceLocation: sourceLocation)
        #expect(missing.isEmpty, "never applied: \(missing.prefix(10))", sourceLocation: sourceLocation)
        #expect(unexpected.isEmpty, "not expected at all: \(unexpected.prefix(10))", sourceLocation: sourceLocation)
        #expect(outOfOrder == nil, "out of order: \(outOfOrder ?? "")", sourceLocation: sourceLocation)
        #expect(Set(applied.map(\.queue)).count == 1, "one sender queue", sourceLocation: sourceLocation)
        let wrong = applied.filter { $0.payload != payload($0.sequence) }
        #expect(
            wrong.isEmpty, "payloads not matching their sequence: \(wrong.prefix(5))", sourceLocation: sourceLocation)
    }

    /// The `already-applied` lines: transfers the link handed to the app again.
    private func redeliveredToApp(_ phone: DaemonProcess) -> [Substring] {
        LinkPeerHarness.completeLines(phone.standardOutput).filter { $0.hasPrefix("already-applied") }
    }

    @Test("1,000 transfers queued while the receiver is down are all delivered in order and applied once")
    func queuedWhileReceiverDown() async throws {
        let harness = try LinkPeerHarness("lpt-down")
        var (phone, port) = try await harness.startPhone()
        try await harness.linkOnce(phone: phone, port: port)
        phone.send(SIGTERM)
        #expect(try await phone.waitForExit(timeout: hangGuard) == 0)

        let watch = try await harness.startWatch(port: port, enqueue: 1000)
        try await harness.waitUntil("the watch has enqueued 1000 transfers", watching: [watch]) {
            LinkPeerHarness.sequences(after: "enqueued seq=", in: watch.standardOutput).count == 1000
        }
        #expect(LinkPeerHarness.sequences(after: "enqueued seq=", in: watch.standardOutput) == Array(1...1000))
        #expect(try harness.applied().isEmpty, "nothing can be applied with the phone down")

        (phone, _) = try await harness.startPhone(port: port)
        try await harness.waitUntil("the phone has applied 1000 transfers", watching: [phone, watch]) {
            try harness.applied().count >= 1000
        }
        _ = try await watch.waitForLine(containing: "finished seq=1000", timeout: hangGuard)
        expectExactlyOnceInOrder(try harness.applied(), count: 1000)
        #expect(redeliveredToApp(phone).isEmpty, "nothing was offered to the app twice")
    }

    /// Three kill points, each from its seed; a failure names the seed.
    @Test(
        "the sender killed with SIGKILL mid-stream loses nothing and applies nothing twice",
        arguments: [UInt64(0x5EED_0001), 0x5EED_0002, 0x5EED_0003])
    func senderKilledMidStream(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        // Enqueued lines seen before the kill. The watch is asked for far more than the test can
        // see before it kills: a loaded machine once read the pipe late enough that all of 3,000
        // were enqueued first. The phone acknowledges as they come, so the outbox stays short.
        let killAfter = 50 + Int(random.next() % 300)
        let asked = 100_000
        let harness = try LinkPeerHarness("lpt-sender")
        let (phone, port) = try await harness.startPhone()
        try await harness.linkOnce(phone: phone, port: port)

        let doomed = try await harness.startWatch(port: port, enqueue: asked)
        try await harness.waitUntil("\(killAfter) transfers are enqueued (seed \(seed))", watching: [doomed, phone]) {
            LinkPeerHarness.sequences(after: "enqueued seq=", in: doomed.standardOutput).count >= killAfter
        }
        try await harness.kill9(doomed)
        let promised = LinkPeerHarness.sequences(after: "enqueued seq=", in: doomed.standardOutput)
        try #require(promised.count >= killAfter && promised.count < asked, "seed \(seed): killed mid-stream")
        #expect(promised == Array(1...UInt64(promised.count)), "seed \(seed): enqueue order")

        // The restarted watch drains its outbox from disk. It also queues one more transfer, which
        // FIFO delivery puts after everything recovered: once that one is applied, the drain is done.
        let restarted = try await harness.startWatch(port: port, enqueue: 1)
        try await harness.waitUntil("the restarted watch enqueued its sentinel", watching: [restarted]) {
            !LinkPeerHarness.sequences(after: "enqueued seq=", in: restarted.standardOutput).isEmpty
        }
        let sentinel = LinkPeerHarness.sequences(after: "enqueued seq=", in: restarted.standardOutput)[0]
        #expect(sentinel > promised.count, "seed \(seed): a sequence promised before the crash is never reused")
        _ = try await restarted.waitForLine(containing: "finished seq=\(sentinel)", timeout: hangGuard)
        try await harness.waitUntil("the sentinel \(sentinel) is applied", watching: [phone, restarted]) {
            try harness.applied().contains { $0.sequence == sentinel }
        }

        let applied = try harness.applied()
        let appliedSequences = Set(applied.map(\.sequence))
        let lost = promised.filter { !appliedSequences.contains($0) }
        #expect(
            lost.isEmpty, "seed \(seed): enqueued (acknowledged to the caller) but never applied: \(lost.prefix(10))")
        // Everything on disk at the kill — at least what was promised, perhaps one synced record
        // more — then the sentinel: one contiguous run, each applied once, in order.
        expectExactlyOnceInOrder(applied, count: Int(sentinel)) { $0 == sentinel ? "transfer-1" : "transfer-\($0)" }
        #expect(redeliveredToApp(phone).isEmpty, "seed \(seed): redeliveries stop at the receiver's mark")
    }

    @Test("the receiver killed between apply and ack gets the transfer again and does not apply it twice")
    func receiverKilledBetweenApplyAndAck() async throws {
        let harness = try LinkPeerHarness("lpt-apply-ack")
        let (crashing, port) = try await harness.startPhone(extra: ["--crash-after-apply", "5"])
        try await harness.linkOnce(phone: crashing, port: port)

        let watch = try await harness.startWatch(port: port, enqueue: 10)
        #expect(try await crashing.waitForExit(timeout: hangGuard) == SIGKILL)
        let beforeCrash = try harness.applied()
        #expect(beforeCrash.map(\.sequence) == [1, 2, 3, 4, 5], "the phone died right after applying 5")
        #expect(!watch.standardOutput.contains("finished seq=5"), "5 was never acknowledged")

        let (phone, _) = try await harness.startPhone(port: port)
        try await harness.waitUntil("the phone has applied 10 transfers", watching: [phone, watch]) {
            try harness.applied().count >= 10
        }
        _ = try await watch.waitForLine(containing: "finished seq=10", timeout: hangGuard)
        expectExactlyOnceInOrder(try harness.applied(), count: 10)
        // 5 reached the restarted app again (its ack was lost) and the app's record deduplicated it.
        #expect(LinkPeerHarness.count(ofLine: "already-applied seq=5", in: phone.standardOutput) == 1)
        #expect(LinkPeerHarness.count(ofLine: "applied seq=5", in: phone.standardOutput) == 0)
        for sequence in 6...10 {
            #expect(LinkPeerHarness.count(ofLine: "applied seq=\(sequence)", in: phone.standardOutput) == 1)
        }
    }

    @Test("a phone killed with SIGKILL while receiving, then restarted, converges")
    func receiverKilledWhileReceiving() async throws {
        let harness = try LinkPeerHarness("lpt-receiver")
        var (phone, port) = try await harness.startPhone()
        try await harness.linkOnce(phone: phone, port: port)

        // Enough that a loaded machine, reading the phone's file late, still kills it mid-stream.
        let count = 6_000
        let watch = try await harness.startWatch(port: port, enqueue: count)
        try await harness.waitUntil("the phone has applied 200 transfers", watching: [phone, watch]) {
            try harness.applied().count >= 200
        }
        try await harness.kill9(phone)
        let atKill = try harness.applied().count
        try #require(atKill < count, "the phone was killed while transfers were still coming")

        (phone, _) = try await harness.startPhone(port: port)
        _ = try await watch.waitForLine(containing: "finished seq=\(count)", timeout: hangGuard)
        #expect(LinkPeerHarness.sequences(after: "enqueued seq=", in: watch.standardOutput) == Array(1...UInt64(count)))
        expectExactlyOnceInOrder(try harness.applied(), count: count)
    }
}
