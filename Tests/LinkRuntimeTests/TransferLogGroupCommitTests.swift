import Foundation
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
                        let sequence = try log.append([UInt8(thread), UInt8(index % 256)], enqueuedAtMicros: Int64(index))
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
}
