import DurableFiles
import Foundation

/// A fresh directory for one fuzz input's files, removed afterwards: the file-reading targets use
/// real files, as the daemons do.
struct ScratchDirectory {
    let path: String

    init() throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/watchsync-fuzz-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw PropertyViolation(description: "cannot create a scratch directory under \(base)")
        }
        path = String(cString: created)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` with a fresh directory and removes it whatever happens.
    static func with<T>(_ body: (String) throws -> T) throws -> T {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        return try body(scratch.path)
    }

    /// Writes `bytes` to `path` (creating parent folders), plainly: this is the input, not our own state.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    /// Every regular file under `path` and its bytes, by relative path, to see what an open changed.
    static func snapshot(_ path: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        guard let names = FileManager.default.enumerator(atPath: path) else { return files }
        for case let name as String in names {
            // AtomicFile.read: FileManager.contents(atPath:) leaks its read buffer under LeakSanitizer
            // (FoundationEssentials in Swift 6.3.1), which would stop every run of a file target.
            if let bytes = try? AtomicFile.read("\(path)/\(name)") { files[name] = bytes }
        }
        return files
    }
}

/// Big-endian integers, for the targets that lay out state files themselves.
enum Bytes {
    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}
