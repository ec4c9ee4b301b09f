import Foundation
import LinkProtocol
import LinkRuntime
import Synchronization
import TestSupport
import Testing

@Suite("TransferLog group commit")
struct TransferLogGroupCommitTests {
    @Test("16 threads appending 200 each get 3,200 distinct contiguous sequences that all survive reopening")
    func concurrentAppends() throws {
        let dir = try TemporaryDirectory("groupcommit")
        let log = try TransferLog(directory: dir.path)
        let threads = 16
        let perThread = 200
        // Written by the appending threads, read after they have all finished.
        let results = Mutex<[(thread: Int, index: Int, sequence: UInt64)]>([])
        let failures = Mutex<[String]>([])
        let finished = DispatchGroup()
        for thread in 0..<threads {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                for index in 0..<perThread {
                    do {
                        let sequence = try log.append(
                            [UInt8(thread), UInt8(index % 256)], enqueuedAtMicros: Int64(index))
                        results.withLock { $0.append((thread, index, sequence)) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        finished.wait()
        #expect(failures.withLock { $0 } == [])
        let appended = results.withLock { $0 }
        #expect(appended.map(\.sequence).sorted() == Array(1...UInt64(threads * perThread)))
        // Each thread saw its own appends in increasing sequence order.
        for thread in 0..<threads {
            let mine = appended.filter { $0.thread == thread }.sorted { $0.index < $1.index }.map(\.sequence)
            #expect(mine == mine.sorted())
        }

        let reopened = try TransferLog(directory: dir.path)
        let pending = reopened.pending()
        #expect(pending.map(\.sequence) == Array(1...UInt64(threads * perThread)))
        let bySequence = Dictionary(uniqueKeysWithValues: appended.map { ($0.sequence, $0) })
        for record in pending {
            let origin = try #require(bySequence[record.sequence])
            #expect(record.payload == [UInt8(origin.thread), UInt8(origin.index % 256)])
        }
    }

    @Test(
        "a numbered batch is written in order; a refused record refuses the rest (no gap); renumbered, they go in; all survive reopening"
    )
    func batchAppend() throws {
        let dir = try TemporaryDirectory("groupcommit")
        let log = try TransferLog(directory: dir.path, configuration: .init(maximumPayloadBytes: 16))
        #expect(try log.append([9], enqueuedAtMicros: 1) == 1)
        let batch: [(sequence: UInt64, payload: [UInt8], enqueuedAtMicros: Int64)] = [
            (2, [1], 10), (3, [2, 2], 11), (4, [UInt8](repeating: 3, count: 17), 12), (5, [4], 13),
        ]
        let results = log.append(numbered: batch)
        #expect(results.count == 4)
        try results[0].get()
        try results[1].get()
        #expect(throws: TransferLogError.payloadTooLarge(size: 17, maximum: 16)) { try results[2].get() }
        #expect(throws: TransferLogError.sequenceOutOfOrder(expected: 4, got: 5)) { try results[3].get() }
        #expect(log.append(numbered: []).isEmpty)
        #expect(log.nextSequence == 4)
        // Numbered past the log's next, or again below it: refused, nothing written.
        for sequence: UInt64 in [3, 5] {
            #expect(throws: TransferLogError.sequenceOutOfOrder(expected: 4, got: sequence)) {
                try log.append(numbered: [(sequence, [7], 14)])[0].get()
            }
        }
        try log.append(numbered: [(4, [4], 13)])[0].get()
        #expect(log.pending().map(\.sequence) == [1, 2, 3, 4])

        let reopened = try TransferLog(directory: dir.path)
        #expect(
            reopened.pending() == [
                TransferRecord(sequence: 1, payload: [9], enqueuedAtMicros: 1),
                TransferRecord(sequence: 2, payload: [1], enqueuedAtMicros: 10),
                TransferRecord(sequence: 3, payload: [2, 2], enqueuedAtMicros: 11),
                TransferRecord(sequence: 4, payload: [4], enqueuedAtMicros: 13),
            ])
    }
}
