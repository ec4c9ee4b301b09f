import Foundation
import Glibc
import LinkProtocol
import PhoneStore
import WorkoutModel

/// LinkProtocol's seeded SplitMix64, so every run generates the same history shape.
extension SplitMix64 {
    mutating func documentID() -> DocumentID {
        DocumentID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &self) })
    }
}

/// A phone's history: a few active runs, some completed in the last day, the rest completed over
/// the past eight years — the shape a push selects from (active + up to 25 recent).
enum History {
    static let activeRuns = 3
    static let recentRuns = 30

    /// The split every generated run snapshots: 4 exercises × 3 sets (a run file is about 2.5 KB).
    static func split(now: Timestamp) -> SplitDocument {
        var generator = SplitMix64(seed: 7)
        return SplitDocument(
            id: generator.documentID(), name: "Bench day",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 100),
                ExerciseTemplate(
                    name: "Bench press", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 80),
                ExerciseTemplate(name: "Row", equipment: "dumbbell", targetSets: 3, targetReps: 8, targetWeight: 30),
                ExerciseTemplate(name: "Plank", equipment: "none", targetSets: 3, targetReps: 1, targetWeight: 0),
            ], updatedAt: now.advanced(by: .seconds(-9 * 365 * 86_400)))
    }

    /// How many runs a push carries for a history of `count` runs.
    static func pushedRuns(count: Int) -> Int {
        min(count, activeRuns) + min(max(0, count - activeRuns), min(recentRuns, 25))
    }

    /// Calls `body` with each of `count` runs, oldest first.
    static func forEachRun(count: Int, now: Timestamp, _ body: (WorkoutDocument) throws -> Void) throws {
        let split = split(now: now)
        var generator = SplitMix64(seed: 42)
        let active = min(count, activeRuns)
        let recent = min(count - active, recentRuns)
        let old = count - active - recent
        let eightYears: Int64 = 8 * 365 * 86_400 * 1_000_000
        let day: Int64 = 86_400 * 1_000_000
        // Old runs: start times spread evenly over eight years ending two days ago, in order.
        for index in 0..<old {
            let offset = eightYears - Int64(index) * (eightYears / Int64(max(old, 1)))
            let start = Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch - 2 * day - offset)
            try body(try completedRun(split: split, id: generator.documentID(), start: start, sets: 12))
        }
        // Recent runs: completed within the last 24 hours.
        for index in 0..<recent {
            let start = Timestamp(
                microsecondsSinceEpoch: now.microsecondsSinceEpoch - 23 * 3_600_000_000 + Int64(index) * 60_000_000)
            try body(try completedRun(split: split, id: generator.documentID(), start: start, sets: 12))
        }
        // Active runs: started in the last hour, five sets done.
        for index in 0..<active {
            let start = Timestamp(
                microsecondsSinceEpoch: now.microsecondsSinceEpoch - 3_600_000_000 + Int64(index) * 60_000_000)
            try body(try completedRun(split: split, id: generator.documentID(), start: start, sets: 5))
        }
    }

    /// A run of `split` with its first `sets` sets completed 90 s apart (all 12: the run is completed).
    static func completedRun(split: SplitDocument, id: DocumentID, start: Timestamp, sets: Int) throws
        -> WorkoutDocument
    {
        var run = try WorkoutDocument.start(from: split, id: id, at: start)
        var done = 0
        for log in run.logs {
            for setIndex in log.sets.indices where done < sets {
                done += 1
                try run.completeSet(
                    logID: log.id, setIndex: setIndex, reps: log.targetReps, weight: log.targetWeight,
                    at: start.advanced(by: .seconds(90 * done)))
            }
        }
        return run
    }

    /// Writes the split and `count` runs into a document directory at `root` in its layout
    /// (`Workouts/YYYY/MM/<id>.json`, encoded as phoned writes them), without an fsync per file; one
    /// `sync()` at the end so later fsync-bound figures do not pay for this write-back.
    static func write(count: Int, to root: String, now: Timestamp) throws {
        let directory = try DocumentDirectory(root: root)
        let split = split(now: now)
        try writeFile(DocumentCoder.encodeForDisk(split), to: directory.path(ofSplit: split.id))
        var folders: Set<String> = []
        try forEachRun(count: count, now: now) { run in
            let path = directory.path(ofWorkout: run.id, startedAt: run.startedAt)
            let folder = String(path[..<path.lastIndex(of: "/")!])
            if folders.insert(folder).inserted {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try writeFile(DocumentCoder.encodeForDisk(run), to: path)
        }
        sync()
    }

    static func writeFile(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try check(fd, "open \(path)")
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw BenchError("short write on \(path)") }
    }

    /// The plain peer of phoned's start-up scan: list every month folder, read every run file and
    /// decode it with `DocumentCoder` — nothing else (no rules, no engine, no index). Returns the count.
    static func readAndDecode(root: String) throws -> Int {
        var count = 0
        let workouts = "\(root)/Workouts"
        for year in try entries(workouts).sorted() {
            for month in try entries("\(workouts)/\(year)").sorted() {
                let folder = "\(workouts)/\(year)/\(month)"
                for name in try entries(folder) where name.hasSuffix(".json") {
                    let bytes = try readFile("\(folder)/\(name)")
                    _ = try DocumentCoder.decode(WorkoutDocument.self, from: bytes)
                    count += 1
                }
            }
        }
        return count
    }

    static func entries(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            throw BenchError("opendir \(path): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try check(fd, "open \(path)")
        defer { close(fd) }
        var info = stat()
        try check(fstat(fd, &info), "fstat \(path)")
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            try check(Int32(got), "read \(path)")
            if got == 0 { break }
            done += got
        }
        return Array(bytes[0..<done])
    }
}
