import LinkProtocol
import PhoneStore
import WorkoutModel

/// `RunIndexFile.read` of any payload under a correct checksum (so the fuzzer gets past it, as a
/// buggy writer would), then the mapped table driven as phoned drives it.
///
/// Properties: the file is refused with a reason or read; a read table's folders count exactly its
/// entries; a `RunIndex` over it (some folders retired, as the input says) lists, looks up and
/// orders exactly the runs of its live folders, whatever the bytes said; the snapshot re-encodes to
/// a payload that reads back equal.
enum RunIndexTarget {
    static func check(_ input: inout FuzzInput) throws {
        let retired = input.integer(UInt32.self)
        let payload = input.rest()
        try ScratchDirectory.with { directory in
            let path = "\(directory)/run-index"
            try ScratchDirectory.write(file(payload), to: path)
            let snapshot: RunIndexSnapshot
            do {
                guard let read = try RunIndexFile.read(at: path, root: "/Documents") else {
                    throw PropertyViolation(description: "a run index that exists read as none")
                }
                snapshot = read
            } catch let error as RunIndexFileError {
                return try require(!error.reason.isEmpty, "a refusal without a reason")
            }
            var table = snapshot.table
            try require(
                table.folders.reduce(0) { $0 + $1.runCount } == table.entryCount,
                "the folders count \(table.folders.reduce(0) { $0 + $1.runCount }) runs, the table \(table.entryCount)")
            for folder in table.folders.indices where retired >> (folder % 32) & 1 == 1 { table.retire(folder: folder) }
            var live: [DocumentID: RunIndex.RunSummary] = [:]
            for entry in 0..<table.entryCount where table.isLive(entry: entry) {
                live[table.id(at: entry)] = table.summary(at: entry)
            }
            var index = RunIndex()
            index.install(table)
            try require(
                index.count == live.count, "the index counts \(index.count) runs, its live folders \(live.count)")
            var listed = 0
            try index.forEachSummary { summary in
                listed += 1
                try require(live[summary.id] == summary, "run \(summary.id) listed as it is not recorded")
                try require(index[summary.id] == summary, "run \(summary.id) looked up otherwise than listed")
            }
            try require(listed == live.count, "\(listed) runs listed, \(live.count) live")
            let completed = live.values.filter(RunIndex.isCompleted).sorted {
                ($0.endedAt!, $0.id) < ($1.endedAt!, $1.id)
            }
            try require(index.completedIDs == completed.map(\.id), "the completed order is not the runs' ends")
            _ = index.pushSelection(now: Timestamp(microsecondsSinceEpoch: 0), policy: .standard)
            let again = try RunIndexSnapshot(decoding: snapshot.encoded(), root: "/Documents")
            try require(again == snapshot, "the snapshot does not survive its own encoding")
        }
    }

    /// A run index file around `payload`: magic, payload, length and CRC-32C.
    static func file(_ payload: [UInt8]) -> [UInt8] {
        var bytes = Array("WSRUNIDX".utf8) + payload
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: CRC32C.checksum(payload).littleEndian) { bytes += $0 }
        return bytes
    }
}
