import Testing

@testable import LinkProtocol

/// The outbox drops its acknowledged front and counts what is in flight instead of scanning a queue
/// that a long partition leaves 100,000 deep. Held here to the plain array it replaced, operation
/// for operation, under seeded random sends, acknowledgements (in order and not), cancels and lost
/// connections.
@Suite("The transfer outbox")
struct TransferOutboxTests {
    /// The plain array the outbox was before: every acknowledgement a search and a shift, every send
    /// a scan of the whole queue.
    struct Reference {
        var pending: [OutboundTransfer] = []

        mutating func takeSendable(window: Int) -> [OutboundTransfer] {
            var budget = window - pending.lazy.filter(\.inFlight).count
            var taken: [OutboundTransfer] = []
            for index in pending.indices where budget > 0 && !pending[index].inFlight {
                pending[index].inFlight = true
                pending[index].everSent = true
                taken.append(pending[index])
                budget -= 1
            }
            return taken
        }

        mutating func remove(sequence: UInt64) -> OutboundTransfer? {
            guard let index = pending.firstIndex(where: { $0.sequence == sequence }) else { return nil }
            return pending.remove(at: index)
        }

        mutating func connectionLost() {
            for index in pending.indices { pending[index].inFlight = false }
        }
    }

    static let queue = InstanceID(bytes: [UInt8](repeating: 0xA5, count: 16))!

    @Test("matches the plain array under random sends, acknowledgements, cancels and lost links")
    func matchesTheReference() {
        for seed in UInt64(1)...8 {
            var generator = SplitMix64(seed: seed)
            var outbox = TransferOutbox(queue: Self.queue, pending: [], nextSequence: 1)
            var reference = Reference()
            var next: UInt64 = 1
            for step in 0..<3_000 {
                let roll = Int.random(in: 0..<100, using: &generator)
                switch roll {
                case 0..<40:
                    let payload = [UInt8(truncatingIfNeeded: next)]
                    outbox.append(sequence: next, payload: payload)
                    reference.pending.append(
                        OutboundTransfer(sequence: next, payload: payload, everSent: false, inFlight: false))
                    next += 1
                case 40..<60:
                    let window = Int.random(in: 1...8, using: &generator)
                    #expect(outbox.takeSendable(window: window) == reference.takeSendable(window: window))
                case 60..<90:
                    // Mostly the oldest in flight, as a live link acknowledges.
                    let sequence = reference.pending.first?.sequence ?? next
                    #expect(outbox.remove(sequence: sequence) == reference.remove(sequence: sequence))
                case 90..<97:
                    // Out of order, a cancel, or one no longer there.
                    let sequence = UInt64.random(in: 1...max(1, next), using: &generator)
                    #expect(outbox.remove(sequence: sequence) == reference.remove(sequence: sequence))
                default:
                    outbox.connectionLost()
                    reference.connectionLost()
                }
                #expect(Array(outbox.pending) == reference.pending, "seed \(seed), step \(step)")
                #expect(outbox.inFlightCount == reference.pending.filter(\.inFlight).count)
            }
        }
    }

    @Test("a queue thousands deep drains from the front with its payloads freed")
    func drainsADeepQueue() {
        let restored = (1...5_000).map { (sequence: UInt64($0), payload: [UInt8](repeating: 7, count: 64)) }
        var outbox = TransferOutbox(queue: Self.queue, pending: restored, nextSequence: 5_001)
        var acknowledged: UInt64 = 0
        while !outbox.pending.isEmpty {
            let sent = outbox.takeSendable(window: 16)
            // The new sends follow those still in flight.
            if let first = sent.first {
                #expect(first.sequence == acknowledged + UInt64(outbox.inFlightCount - sent.count) + 1)
            }
            #expect(outbox.inFlightCount <= 16)
            let oldest = outbox.pending.first!.sequence
            #expect(outbox.remove(sequence: oldest)?.sequence == acknowledged + 1)
            acknowledged += 1
            #expect(outbox.pending.first.map { $0.sequence == acknowledged + 1 } ?? (acknowledged == 5_000))
        }
        #expect(acknowledged == 5_000 && outbox.inFlightCount == 0)
        #expect(outbox.takeSendable(window: 16).isEmpty)
        outbox.append(sequence: 5_001, payload: [1])
        #expect(outbox.takeSendable(window: 16).map(\.sequence) == [5_001])
    }
}
