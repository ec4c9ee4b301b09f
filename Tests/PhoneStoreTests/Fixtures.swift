import Foundation
import Glibc
import PhoneStore
import SyncEngine
import Synchronization
import TestSupport
import Testing
import WorkoutModel

/// A fixed instant tests count from: 2026-11-29T12:00:00Z.
let t0 = Timestamp(iso8601: "2026-11-29T12:00:00Z")!

/// A deterministic document ID with `n` in its last bytes.
func id(_ n: Int) -> DocumentID {
    var bytes = [UInt8](repeating: 0xAB, count: 16)
    bytes[12] = UInt8((n >> 24) & 0xFF)
    bytes[13] = UInt8((n >> 16) & 0xFF)
    bytes[14] = UInt8((n >> 8) & 0xFF)
    bytes[15] = UInt8(n & 0xFF)
    return DocumentID(bytes: bytes)
}

func split(_ n: Int, name: String = "Legs") -> SplitDocument {
    SplitDocument(
        id: id(n), name: name,
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 100)
        ],
        updatedAt: t0)
}

/// A run of split 1 with one log of three sets, started at `startedAt`.
func run(_ n: Int, startedAt: Timestamp = t0, updatedAt: Timestamp? = nil) -> WorkoutDocument {
    let stamp = Stamp(time: updatedAt ?? startedAt, origin: .phone)
    let log = ExerciseLog(
        id: id(0x10000 + n), exerciseName: "Squat", equipment: "barbell", targetReps: 5, targetWeight: 100, setCount: 3,
        stamp: stamp)
    return WorkoutDocument(
        id: id(n), splitID: id(1), splitName: "Legs", startedAt: startedAt, logs: [log], stamp: stamp)
}

func stub(_ n: Int, kind: Tombstone.Kind = .workout) -> Tombstone {
    Tombstone(id: id(n), kind: kind, deletedAt: t0)
}

/// A document directory in a fresh temporary folder; keep `temporary` alive as long as `documents`.
struct Fixture {
    let temporary: TemporaryDirectory
    let documents: DocumentDirectory

    init() throws {
        temporary = try TemporaryDirectory("phonestore")
        documents = try DocumentDirectory(root: temporary.appending("Documents"))
    }

    /// The absolute path of `relative` inside the document root.
    func path(_ relative: String) -> String { "\(documents.root)/\(relative)" }

    /// Writes `bytes` at `relative` as a plain file (no temporary, no fsync), as a person or another
    /// sync would.
    func plantFile(_ relative: String, _ bytes: [UInt8]) throws {
        try writePlainFile(path(relative), bytes)
    }

    func plantFile(_ relative: String, _ text: String) throws {
        try plantFile(relative, Array(text.utf8))
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path(relative)) }

    /// Every file and folder under the root, relative to it, sorted.
    func tree() throws -> [String] {
        let enumerator = try #require(FileManager.default.enumerator(atPath: documents.root))
        return enumerator.compactMap { $0 as? String }.sorted()
    }

    /// Scans and returns the documents visited with the report.
    func scan() throws -> (documents: [SyncEngine.ScannedDocument], report: ScanReport) {
        var visited: [SyncEngine.ScannedDocument] = []
        let report = try documents.scan { visited.append($0) }
        return (visited, report)
    }
}

/// Creates or truncates the file at `path` and writes `bytes`, without a temporary file or fsync.
func writePlainFile(_ path: String, _ bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw PlainWriteFailed(path: path, errno: errno) }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw PlainWriteFailed(path: path, errno: errno) }
}

struct PlainWriteFailed: Error {
    let path: String
    let errno: Int32
}
