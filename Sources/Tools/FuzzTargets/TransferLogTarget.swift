import DurableFiles
import LinkProtocol
import LinkRuntime

/// `TransferLog` recovery over any directory contents: queue ID, resolved marks and segments made of
/// valid records, raw bytes and torn tails, as a crash or a disk could leave them.
///
/// Properties: every recovered record is byte for byte a CRC-valid record present in a segment, with
/// sequences ascending, and never more records than valid ones were written; a refused open names
/// the problem and changes no file; a successful open only cuts a torn tail; opening again recovers
/// the same records; an append after recovery gets the next sequence and survives the next open.
enum TransferLogTarget {
    static func check(_ input: inout FuzzInput) throws {
        try ScratchDirectory.with { directory in
            try writeFiles(&input, into: directory)
            let before = ScratchDirectory.snapshot(directory)
            let segments = before.filter { $0.key.hasPrefix("segment-") }
            let log: TransferLog
            do {
                log = try TransferLog(directory: directory)
            } catch let error as TransferLogError {
                return try requireUnchanged(directory, before, after: "\(error)")
            } catch let error as StateFileError {
                return try requireUnchanged(directory, before, after: "\(error)")
            }
            let pending = log.pending()
            let next = log.nextSequence
            try require(
                zip(pending, pending.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "records out of order")
            try require(pending.allSatisfy { $0.sequence < next }, "next sequence \(next) not above the records")
            let valid = segments.values.reduce(0) { $0 + validRecordCount(in: $1) }
            try require(pending.count <= valid, "\(pending.count) records recovered, \(valid) valid ones written")
            for record in pending {
                let bytes = encoded(record)
                try require(
                    segments.values.contains { $0.contains(bytes) }, "record \(record.sequence) was never written")
            }
            for (name, current) in ScratchDirectory.snapshot(directory) {
                guard let written = before[name] else { continue }
                try require(written.starts(with: current), "open changed \(name) beyond cutting its tail")
            }
            let payload = input.chunk()
            let appended = try log.append(payload, enqueuedAtMicros: 42)
            try require(appended == next, "append got sequence \(appended), recovery said \(next)")
            // One log per directory at a time: the reopen below must not share it with this one.
            _ = consume log
            let again = try TransferLog(directory: directory)
            try require(
                again.pending() == pending + [
                    TransferRecord(sequence: appended, payload: payload, enqueuedAtMicros: 42)
                ],
                "the reopened log does not hold the recovered records and the append")
        }
    }

    /// Lays out queue ID, resolved marks and up to three segments as the input says.
    private static func writeFiles(_ input: inout FuzzInput, into directory: String) throws {
        let flags = input.byte()
        if flags & 1 != 0 {
            try ScratchDirectory.write(flags & 2 != 0 ? input.chunk() : input.fixed(16), to: "\(directory)/queue-id")
        }
        if flags & 4 != 0 {
            var marks: [UInt8] = []
            if flags & 8 != 0 {
                marks = input.chunk()
            } else {
                Bytes.append(UInt64(input.byte()), to: &marks)
                let holes = (0..<(input.byte() % 4)).map { _ in UInt64(input.byte()) }
                Bytes.append(UInt32(holes.count), to: &marks)
                for hole in holes { Bytes.append(hole, to: &marks) }
            }
            if flags & 16 == 0 { Bytes.append(CRC32C.checksum(marks), to: &marks) }
            try ScratchDirectory.write(marks, to: "\(directory)/resolved-sequences")
        }
        for _ in 0..<(input.byte() % 4) {
            let first = UInt64(input.byte())
            var sequence = first
            var bytes: [UInt8] = []
            for _ in 0..<(input.byte() % 8) {
                let op = input.byte()
                switch op % 4 {
                case 0, 1:
                    bytes += encoded(
                        TransferRecord(
                            sequence: sequence, payload: input.chunk(), enqueuedAtMicros: Int64(input.byte())))
                    sequence += op < 0x80 ? 1 : UInt64(op >> 4)
                case 2:
                    bytes += input.chunk()
                default:
                    bytes.removeLast(min(bytes.count, Int(input.byte() % 32)))
                }
            }
            let digits = String(first)
            let name = "segment-" + String(repeating: "0", count: 20 - digits.count) + digits + ".log"
            try ScratchDirectory.write(bytes, to: "\(directory)/\(name)")
        }
    }

    private static func requireUnchanged(_ directory: String, _ before: [String: [UInt8]], after error: String) throws {
        try require(!error.isEmpty, "an empty error")
        try require(ScratchDirectory.snapshot(directory) == before, "a refused open changed files: \(error)")
    }

    /// The record format of docs/PROTOCOL.md and `TransferRecord`, written independently as the oracle:
    /// u32 length, u64 sequence, u64 enqueue time, u32 CRC32C over sequence, time and payload, payload.
    static func encoded(_ record: TransferRecord) -> [UInt8] {
        var checked: [UInt8] = []
        Bytes.append(record.sequence, to: &checked)
        Bytes.append(UInt64(bitPattern: record.enqueuedAtMicros), to: &checked)
        var bytes: [UInt8] = []
        Bytes.append(UInt32(record.payload.count), to: &bytes)
        bytes += checked
        Bytes.append(CRC32C.update(CRC32C.checksum(checked), with: record.payload), to: &bytes)
        return bytes + record.payload
    }

    /// How many offsets of `bytes` start a record whose checksum verifies.
    private static func validRecordCount(in bytes: [UInt8]) -> Int {
        var count = 0
        var offset = 0
        while offset + 24 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if length <= bytes.count - offset - 24 {
                let stored = bytes[(offset + 20)..<(offset + 24)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let payload = bytes[(offset + 24)..<(offset + 24 + length)]
                if CRC32C.update(CRC32C.checksum(bytes[(offset + 4)..<(offset + 20)]), with: payload) == stored {
                    count += 1
                }
            }
            offset += 1
        }
        return count
    }
}

extension [UInt8] {
    /// Whether `needle` occurs in this array as a contiguous run.
    func contains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
