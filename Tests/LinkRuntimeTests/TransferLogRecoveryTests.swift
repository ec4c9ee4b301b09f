import DurableFiles
import Foundation
import LinkProtocol
import LinkRuntime
import TestSupport
import Testing

/// Crash recovery: torn tails are cut back to the last whole record, damage anywhere else refuses
/// to open with the file and byte offset.
@Suite("TransferLog recovery")
struct TransferLogRecoveryTests {
    static let firstSegment = "segment-00000000000000000001.log"

    /// A closed single-segment log of `count` records with payloads of 0...6 bytes.
    struct Template {
        let dir: TemporaryDirectory
        let queueID: [UInt8]
        let segment: [UInt8]
        let records: [TransferRecord]
        /// `recordEnds[k]` is the segment length holding exactly the first `k` records.
        let recordEnds: [Int]

        init(count: Int) throws {
            dir = try TemporaryDirectory("template")
            let log = try TransferLog(directory: dir.path)
            var records: [TransferRecord] = []
            var ends = [0]
            for index in 1...count {
                let body = payload(index, length: index % 7)
                let sequence = try log.append(body, enqueuedAtMicros: 1_700_000_000_000_000 + Int64(index))
                records.append(
                    TransferRecord(
                        sequence: sequence, payload: body, enqueuedAtMicros: 1_700_000_000_000_000 + Int64(index)))
                ends.append(ends.last! + 24 + body.count)
            }
            queueID = log.queueID
            // The log writes zeros ahead of its records: the records come first.
            let file = try #require(try AtomicFile.read(dir.appending(TransferLogRecoveryTests.firstSegment)))
            #expect(file.count == ends[1] + TransferLog.Configuration().writeAheadBytes, "ahead of the first record")
            #expect(file[ends.last!...].allSatisfy { $0 == 0 })
            segment = Array(file[..<ends.last!])
            self.records = records
            recordEnds = ends
        }

        /// Writes the queue ID and `segmentBytes` as the only segment into `directory` (no fsync: test data).
        func install(_ segmentBytes: [UInt8], into directory: String) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: "\(directory)/queue-id", contents: Data(queueID)))
            #expect(
                FileManager.default.createFile(
                    atPath: "\(directory)/\(TransferLogRecoveryTests.firstSegment)", contents: Data(segmentBytes)))
        }
    }

    @Test("a log cut at every byte length recovers exactly the whole records and appends after them")
    func truncatedAtEveryLength() throws {
        let template = try Template(count: 100)
        #expect(template.segment.count == template.recordEnds.last)
        let scratch = try TemporaryDirectory("truncated")
        for length in 0...template.segment.count {
            let directory = scratch.appending("\(length)")
            try template.install(Array(template.segment[..<length]), into: directory)
            let whole = template.recordEnds.lastIndex { $0 <= length }!
            let expected = Array(template.records[..<whole])

            // A short write-ahead: the append leaves zeros after it, which the reopen reads as the end.
            let configuration = TransferLog.Configuration(writeAheadBytes: 64)
            let log = try TransferLog(directory: directory, configuration: configuration)
            #expect(log.pending() == expected, "cut at \(length)")
            let next = try log.append([0xEE], enqueuedAtMicros: 42)
            #expect(next == UInt64(whole + 1), "cut at \(length)")

            let reopened = try TransferLog(directory: directory, configuration: configuration)
            #expect(reopened.queueID == template.queueID)
            #expect(
                reopened.pending() == expected + [
                    TransferRecord(sequence: next, payload: [0xEE], enqueuedAtMicros: 42)
                ],
                "cut at \(length)")
            try FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test("zeros after the records are their end: nothing cut or noted, and appends overwrite them")
    func zeroFilledTail() throws {
        let template = try Template(count: 100)
        let dir = try TemporaryDirectory("zeros")
        try template.install(template.segment + [UInt8](repeating: 0, count: 4096), into: dir.path)
        let log = try TransferLog(directory: dir.path)
        #expect(log.pending() == template.records)
        #expect(log.recoveryNotes.isEmpty, "a zero tail is not a torn record")
        let path = dir.appending(Self.firstSegment)
        #expect(try log.append([1], enqueuedAtMicros: 0) == 101)
        let after = try #require(try AtomicFile.read(path))
        #expect(after.count == template.segment.count + 4096, "the append went over the zeros; the size stayed")
        #expect(after[(template.segment.count + 25)...].allSatisfy { $0 == 0 })
        #expect(try TransferLog(directory: dir.path).pending().count == 101)
    }

    @Test("segments other than the last may end in zeros too (rolled while written out)")
    func zerosInEarlierSegments() throws {
        let dir = try TemporaryDirectory("zero-segments")
        let configuration = TransferLog.Configuration(segmentRolloverBytes: 200)
        do {
            let log = try TransferLog(directory: dir.path, configuration: configuration)
            for index in 1...10 { _ = try log.append(payload(index, length: 30), enqueuedAtMicros: 0) }
        }
        let first = try #require(try AtomicFile.read(dir.appending(Self.firstSegment)))
        #expect(first.count == 200 && first[162...].allSatisfy { $0 == 0 }, "three 54-byte records, then zeros")
        let reopened = try TransferLog(directory: dir.path, configuration: configuration)
        #expect(reopened.pending().map(\.sequence) == Array(1...10))
        #expect(reopened.recoveryNotes.isEmpty)
    }

    @Test("a random-garbage tail is treated as torn and cut off", arguments: [1, 2, 3, 0xC0FFEE] as [UInt64])
    func garbageTail(seed: UInt64) throws {
        let template = try Template(count: 100)
        let dir = try TemporaryDirectory("garbage")
        var random = SplitMix64(seed: seed)
        // Also cut the last record short so the garbage starts mid-record.
        let cut = template.segment.count - 3
        try template.install(Array(template.segment[..<cut]) + random.bytes(4096), into: dir.path)
        let log = try TransferLog(directory: dir.path)
        #expect(log.pending() == Array(template.records.dropLast()))
        #expect(try log.append([1], enqueuedAtMicros: 0) == 100)
        #expect(try TransferLog(directory: dir.path).pending().map(\.sequence) == Array(1...100))
    }

    @Test("resolved-sequences is rewritten in place; a write cut short offers again what it resolved, with a note")
    func resolvedRecordFile() throws {
        let dir = try TemporaryDirectory("resolved")
        let log = try TransferLog(directory: dir.path)
        for index in 1...4 { _ = try log.append([UInt8(index)], enqueuedAtMicros: 0) }
        try log.acknowledge(sequences: [1])
        let path = dir.appending("resolved-sequences")
        let inode = try RecordFileTests.inode(path)
        try log.acknowledge(sequences: [2, 3])
        #expect(try RecordFileTests.inode(path) == inode, "rewritten in place")
        #expect(try TransferLog(directory: dir.path).pending().map(\.sequence) == [4])

        var bytes = try RecordFileTests.bytes(path)
        bytes[4096 + 20] ^= 0xFF  // the write resolving 2 and 3, in half 1
        try AtomicFile.write(bytes, to: path)
        let reopened = try TransferLog(directory: dir.path)
        #expect(reopened.pending().map(\.sequence) == [2, 3, 4])
        #expect(reopened.recoveryNotes.contains { $0.contains("one half damaged") }, "\(reopened.recoveryNotes)")
    }

    @Test("a flipped bit in a middle record refuses to open, naming the file and that record's offset")
    func flippedBitInMiddle() throws {
        let template = try Template(count: 100)
        let dir = try TemporaryDirectory("bitflip")
        let offset = template.recordEnds[49]  // record 50 starts after 49 whole records
        var bytes = template.segment
        bytes[offset + 10] ^= 0x04  // inside the sequence field
        try template.install(bytes, into: dir.path)
        let error = try #require(throws: TransferLogError.self) { try TransferLog(directory: dir.path) }
        guard case .corruptRecord(let file, let reportedOffset, let reason) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(file == dir.appending(Self.firstSegment))
        #expect(reportedOffset == offset)
        #expect(reason.contains("checksum mismatch"))
        #expect(error.description.contains("byte offset \(offset)"))
        // Nothing was truncated: the evidence stays for a person to look at.
        #expect(try AtomicFile.read(dir.appending(Self.firstSegment)) == bytes)
    }

    @Test("a bad record in a segment other than the last refuses to open")
    func corruptionInEarlierSegment() throws {
        let dir = try TemporaryDirectory("segments")
        do {
            let log = try TransferLog(
                directory: dir.path, configuration: TransferLog.Configuration(segmentRolloverBytes: 200))
            for index in 1...10 { _ = try log.append(payload(index, length: 26), enqueuedAtMicros: 0) }
        }
        // The last record of the first segment, as if its tail were torn.
        let path = dir.appending(Self.firstSegment)
        let bytes = try #require(try AtomicFile.read(path))
        try AtomicFile.write(Array(bytes.dropLast()), to: path)
        #expect(
            throws: TransferLogError.corruptRecord(
                file: path, offset: 150, reason: "payload length 26 exceeds the 25 bytes left")
        ) {
            try TransferLog(directory: dir.path)
        }
    }
}
