import DurableFiles
import Foundation
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

/// The segment file names in `directory`, sorted.
func segmentNames(in directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("segment-") }.sorted()
}

/// A distinct, recognisable payload for the `index`th test transfer.
func payload(_ index: Int, length: Int = 8) -> [UInt8] {
    (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
}

@Suite("TransferLog")
struct TransferLogTests {
    @Test("appends get sequences from 1 and come back pending in order until acknowledged or cancelled")
    func roundTrip() throws {
        let dir = try TemporaryDirectory("outbox")
        let log = try TransferLog(directory: dir.path)
        #expect(log.queueID.count == 16)
        for index in 1...5 {
            #expect(try log.append(payload(index), enqueuedAtMicros: Int64(index) * 1_000) == UInt64(index))
        }
        #expect(log.pending().map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(log.pending()[2] == TransferRecord(sequence: 3, payload: payload(3), enqueuedAtMicros: 3_000))
        #expect(log.depth == 5)
        #expect(log.pendingBytes == 40)

        try log.acknowledge(sequence: 1)
        #expect(try log.cancel(sequence: 3))
        try log.acknowledge(sequence: 1)
        #expect(try !log.cancel(sequence: 3))
        #expect(try !log.cancel(sequence: 1))
        #expect(try !log.cancel(sequence: 99))
        #expect(log.pending().map(\.sequence) == [2, 4, 5])
        #expect(log.depth == 3)
        #expect(log.pendingBytes == 24)
        #expect(throws: TransferLogError.unknownSequence(6)) { try log.acknowledge(sequence: 6) }
        #expect(throws: TransferLogError.unknownSequence(0)) { try log.acknowledge(sequence: 0) }
    }

    @Test("acknowledgements from the front of a deep log, a batch at a time, with holes, then a reopen")
    func drainsADeepLog() throws {
        let dir = try TemporaryDirectory("outbox")
        let log = try TransferLog(directory: dir.path)
        for index in 1...2_000 { _ = try log.append(payload(index), enqueuedAtMicros: Int64(index)) }
        var expected = Array(UInt64(1)...2_000)
        // Batches of 7 from the front, every fifth batch also acknowledging one further on.
        var batch = 0
        while expected.count > 100 {
            var sequences = Array(expected.prefix(7))
            if batch % 5 == 0 { sequences.append(expected[50]) }
            try log.acknowledge(sequences: sequences)
            expected.removeAll { sequences.contains($0) }
            batch += 1
            #expect(log.depth == expected.count)
        }
        #expect(log.pending().map(\.sequence) == expected)
        #expect(log.pendingBytes == 8 * expected.count)
        #expect(try log.append(payload(2_001), enqueuedAtMicros: 0) == 2_001)
        let reopened = try TransferLog(directory: dir.path)
        #expect(reopened.pending().map(\.sequence) == expected + [2_001])
        #expect(
            reopened.pending().first
                == TransferRecord(
                    sequence: expected[0], payload: payload(Int(expected[0])), enqueuedAtMicros: Int64(expected[0])))
    }

    @Test("reopening keeps pending order, keeps acked and cancelled ones gone, and never reuses a sequence")
    func reopen() throws {
        let dir = try TemporaryDirectory("outbox")
        let queueID: [UInt8]
        do {
            let log = try TransferLog(directory: dir.path)
            queueID = log.queueID
            for index in 1...6 { _ = try log.append(payload(index), enqueuedAtMicros: -Int64(index)) }
            try log.acknowledge(sequence: 1)
            try log.acknowledge(sequence: 2)
            #expect(try log.cancel(sequence: 4))
            try log.acknowledge(sequence: 6)
        }
        let log = try TransferLog(directory: dir.path)
        #expect(log.queueID == queueID)
        #expect(
            log.pending()
                == [3, 5].map { TransferRecord(sequence: $0, payload: payload(Int($0)), enqueuedAtMicros: -Int64($0)) })
        #expect(try log.append(payload(7), enqueuedAtMicros: 7) == 7)
        try log.acknowledge(sequence: 3)
        try log.acknowledge(sequence: 5)
        try log.acknowledge(sequence: 7)
        #expect(log.pending().isEmpty)

        let reopened = try TransferLog(directory: dir.path)
        #expect(reopened.pending().isEmpty)
        #expect(try reopened.append(payload(8), enqueuedAtMicros: 8) == 8)
    }

    @Test("a cancel in the middle leaves the rest in order, also after reopening")
    func cancelInMiddle() throws {
        let dir = try TemporaryDirectory("outbox")
        do {
            let log = try TransferLog(directory: dir.path)
            for index in 1...9 { _ = try log.append(payload(index), enqueuedAtMicros: 0) }
            #expect(try log.cancel(sequence: 5))
            #expect(log.pending().map(\.sequence) == [1, 2, 3, 4, 6, 7, 8, 9])
            for sequence in 1...4 { try log.acknowledge(sequence: UInt64(sequence)) }
            #expect(log.pending().map(\.sequence) == [6, 7, 8, 9])
        }
        #expect(try TransferLog(directory: dir.path).pending().map(\.sequence) == [6, 7, 8, 9])
    }

    @Test("segments roll at the configured size and fully resolved ones are deleted, never the active one")
    func segmentsRollAndAreDeleted() throws {
        let dir = try TemporaryDirectory("outbox")
        // 24-byte header + 26-byte payload = 50 bytes: four records per 200-byte segment.
        let configuration = TransferLog.Configuration(segmentRolloverBytes: 200)
        do {
            let log = try TransferLog(directory: dir.path, configuration: configuration)
            for index in 1...10 { _ = try log.append(payload(index, length: 26), enqueuedAtMicros: 0) }
            #expect(
                try segmentNames(in: dir.path) == [
                    "segment-00000000000000000001.log", "segment-00000000000000000005.log",
                    "segment-00000000000000000009.log",
                ])
            for sequence in [1, 2, 3] { try log.acknowledge(sequence: UInt64(sequence)) }
            #expect(try segmentNames(in: dir.path).count == 3)
            #expect(try log.cancel(sequence: 4))
            #expect(try segmentNames(in: dir.path).first == "segment-00000000000000000005.log")
            // A fully resolved middle segment goes even while an older one is still pending.
            for sequence in 9...10 { try log.acknowledge(sequence: UInt64(sequence)) }
            #expect(try segmentNames(in: dir.path).count == 2)
            for sequence in 5...8 { try log.acknowledge(sequence: UInt64(sequence)) }
            #expect(try segmentNames(in: dir.path) == ["segment-00000000000000000009.log"])
        }
        let log = try TransferLog(directory: dir.path, configuration: configuration)
        #expect(log.pending().isEmpty)
        #expect(try log.append(payload(11), enqueuedAtMicros: 0) == 11)
    }

    @Test("a hole left by a deleted middle segment is accepted on reopen")
    func deletedMiddleSegmentReopens() throws {
        let dir = try TemporaryDirectory("outbox")
        let configuration = TransferLog.Configuration(segmentRolloverBytes: 200)
        do {
            let log = try TransferLog(directory: dir.path, configuration: configuration)
            for index in 1...10 { _ = try log.append(payload(index, length: 26), enqueuedAtMicros: 0) }
            for sequence in 5...8 { #expect(try log.cancel(sequence: UInt64(sequence))) }
            #expect(try segmentNames(in: dir.path).count == 2)
        }
        let log = try TransferLog(directory: dir.path, configuration: configuration)
        #expect(log.pending().map(\.sequence) == [1, 2, 3, 4, 9, 10])
    }

    @Test("a payload over the maximum is refused and nothing is written")
    func payloadTooLarge() throws {
        let dir = try TemporaryDirectory("outbox")
        let log = try TransferLog(directory: dir.path)
        #expect(throws: TransferLogError.payloadTooLarge(size: 65_537, maximum: 65_536)) {
            try log.append([UInt8](repeating: 1, count: 65_537), enqueuedAtMicros: 0)
        }
        #expect(try log.append([UInt8](repeating: 1, count: 65_536), enqueuedAtMicros: 0) == 1)
        let small = try TransferLog(
            directory: dir.appending("small"), configuration: TransferLog.Configuration(maximumPayloadBytes: 4))
        #expect(throws: TransferLogError.payloadTooLarge(size: 5, maximum: 4)) {
            try small.append([1, 2, 3, 4, 5], enqueuedAtMicros: 0)
        }
        #expect(small.depth == 0)
    }

    @Test("a wiped directory gets a new queue ID and starts again at sequence 1")
    func wipedDirectoryGetsNewQueueID() throws {
        let dir = try TemporaryDirectory("outbox")
        let path = dir.appending("outbox")
        let first = try TransferLog(directory: path)
        _ = try first.append([1], enqueuedAtMicros: 0)
        #expect(try TransferLog(directory: path).queueID == first.queueID)
        try FileManager.default.removeItem(atPath: path)
        let wiped = try TransferLog(directory: path)
        #expect(wiped.queueID != first.queueID)
        #expect(try wiped.append([2], enqueuedAtMicros: 0) == 1)
    }

    @Test("segments without a queue ID file refuse to open")
    func missingQueueID() throws {
        let dir = try TemporaryDirectory("outbox")
        _ = try TransferLog(directory: dir.path).append([1], enqueuedAtMicros: 0)
        try FileManager.default.removeItem(atPath: dir.appending("queue-id"))
        #expect(throws: TransferLogError.missingQueueID(file: dir.appending("queue-id"))) {
            try TransferLog(directory: dir.path)
        }
    }

    @Test("when a lost tail held only resolved transfers, sequences still continue past them")
    func lostResolvedTail() throws {
        let dir = try TemporaryDirectory("outbox")
        do {
            let log = try TransferLog(directory: dir.path)
            for index in 1...3 { _ = try log.append(payload(index), enqueuedAtMicros: 0) }
            for sequence in 1...3 { try log.acknowledge(sequence: UInt64(sequence)) }
        }
        try AtomicFile.write([], to: dir.appending("segment-00000000000000000001.log"))
        let log = try TransferLog(directory: dir.path)
        #expect(log.pending().isEmpty)
        #expect(try log.append([4], enqueuedAtMicros: 0) == 4)
        #expect(try TransferLog(directory: dir.path).pending().map(\.sequence) == [4])
    }

    @Test("a lost tail that held a pending transfer refuses to open")
    func lostPendingTail() throws {
        let dir = try TemporaryDirectory("outbox")
        do {
            let log = try TransferLog(directory: dir.path)
            for index in 1...3 { _ = try log.append(payload(index), enqueuedAtMicros: 0) }
            try log.acknowledge(sequence: 1)
            try log.acknowledge(sequence: 3)
        }
        try AtomicFile.write([], to: dir.appending("segment-00000000000000000001.log"))
        #expect(throws: TransferLogError.missingRecords(directory: dir.path, sequences: 1...3)) {
            try TransferLog(directory: dir.path)
        }
    }

    @Test("a refused open leaves the files as they were, torn tail included")
    func refusedOpenChangesNothing() throws {
        let dir = try TemporaryDirectory("outbox")
        do {
            let log = try TransferLog(directory: dir.path)
            for index in 1...3 { _ = try log.append(payload(index), enqueuedAtMicros: 0) }
            try log.acknowledge(sequence: 3)
        }
        // Record 1 survives, then a torn tail; pending 2 and acknowledged 3 are lost (found by scripts/fuzz).
        let segment = dir.appending("segment-00000000000000000001.log")
        let whole = try #require(try AtomicFile.read(segment))
        let damaged = Array(whole.prefix(24 + payload(1).count)) + [0xAB, 0xCD]
        try AtomicFile.write(damaged, to: segment)
        #expect(throws: TransferLogError.missingRecords(directory: dir.path, sequences: 2...3)) {
            try TransferLog(directory: dir.path)
        }
        #expect(try AtomicFile.read(segment) == damaged)
    }
}
