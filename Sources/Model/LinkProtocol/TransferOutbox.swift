/// The sender side of transferUserInfo: the outbox's pending transfers, in order, and which are on
/// the wire. The durable copy lives in the shell's log; this mirrors it.
///
/// A drain acknowledges transfers from the front of a queue that may hold 100,000, so nothing per
/// acknowledgement or send may cost the queue's depth: the acknowledged front is dropped by moving
/// `head` (the array compacts once the dropped half outweighs the rest), and the transfers in flight
/// are counted, not searched for. They are always a prefix of `pending`: a send takes the first ones
/// not in flight, and only an acknowledgement, a cancel or a lost connection ends one.
struct TransferOutbox: Sendable {
    let queue: InstanceID
    /// `storage[head...]` is `pending`; what lies before `head` is finished, its payload freed.
    private var storage: [OutboundTransfer]
    private var head = 0
    /// How many transfers at the front of `pending` are on the wire.
    private(set) var inFlightCount = 0
    /// The next sequence to join `pending`; later ones reported early wait in `early`.
    private var nextSequence: UInt64
    private var early: [UInt64: [UInt8]] = [:]
    /// The sequence the next transfer asked for gets: the transfer's identity is decided here, and
    /// the log only checks that it is the one it expects next.
    private var nextIssued: UInt64

    init(queue: InstanceID, pending: [(sequence: UInt64, payload: [UInt8])], nextSequence: UInt64) {
        self.queue = queue
        storage = pending.map {
            OutboundTransfer(sequence: $0.sequence, payload: $0.payload, everSent: true, inFlight: false)
        }
        self.nextSequence = nextSequence
        nextIssued = nextSequence
    }

    /// The transfers not yet acknowledged or cancelled, oldest first.
    var pending: ArraySlice<OutboundTransfer> { storage[head...] }

    /// Numbers a transfer asked for (in call order, which is the order of its append).
    mutating func issue() -> UInt64 {
        defer { nextIssued += 1 }
        return nextIssued
    }

    /// The appends from `sequence` on failed, so none of them is on disk: those numbers are issued
    /// again (a persisted transfer is never taken back).
    mutating func notPersisted(from sequence: UInt64) {
        guard sequence >= nextSequence else { return }
        nextIssued = min(nextIssued, sequence)
        early = early.filter { $0.key < sequence }
    }

    /// Adds a persisted transfer. Concurrent producers finish their fsyncs in any order, so a
    /// sequence reported before an earlier one waits until the gap is filled: the wire order is
    /// always the sequence order the receiver's queue mark relies on.
    mutating func append(sequence: UInt64, payload: [UInt8]) {
        guard sequence >= nextSequence else { return }
        nextIssued = max(nextIssued, sequence + 1)
        early[sequence] = payload
        while let ready = early.removeValue(forKey: nextSequence) {
            storage.append(OutboundTransfer(sequence: nextSequence, payload: ready, everSent: false, inFlight: false))
            nextSequence += 1
        }
    }

    /// The next transfers to put on the wire, marking them in flight, up to `window` in flight.
    mutating func takeSendable(window: Int) -> [OutboundTransfer] {
        let first = head + inFlightCount
        let end = min(storage.count, first + max(0, window - inFlightCount))
        guard first < end else { return [] }
        for index in first..<end {
            storage[index].inFlight = true
            storage[index].everSent = true
        }
        inFlightCount += end - first
        return Array(storage[first..<end])
    }

    /// Removes the transfer; returns it if it was pending. The oldest (an in-order acknowledgement)
    /// costs O(1); any other a search and a shift.
    mutating func remove(sequence: UInt64) -> OutboundTransfer? {
        guard head < storage.count else { return nil }
        if storage[head].sequence == sequence {
            let removed = storage[head]
            storage[head].payload = []
            head += 1
            if removed.inFlight { inFlightCount -= 1 }
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1_024, head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
            return removed
        }
        guard let index = storage[head...].firstIndex(where: { $0.sequence == sequence }) else { return nil }
        let removed = storage.remove(at: index)
        if removed.inFlight { inFlightCount -= 1 }
        return removed
    }

    mutating func connectionLost() {
        for index in head..<(head + inFlightCount) { storage[index].inFlight = false }
        inFlightCount = 0
    }
}
