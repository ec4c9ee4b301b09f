import Foundation
import LinkRuntime
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `PairingKeyFile.load` takes as a key, and how it refuses the rest (the daemons exit 78 with it).
@Suite("Pairing key file: a private regular file holding 16 to 4,096 bytes")
struct PairingKeyFileTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("key") }

    func write(_ contents: [UInt8], mode: mode_t = 0o600, name: String = "pairing.key") throws -> String {
        let path = directory.appending(name)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        try #require(chmod(path, mode) == 0)
        return path
    }

    @Test("64 hex digits and a newline, as scripts/pairing-key writes them: the digits are the key")
    func goodKey() throws {
        let hex = Array(String(repeating: "0123456789abcdef", count: 4).utf8)
        #expect(try PairingKeyFile.load(try write(hex + [0x0A])) == hex)
        let shortest = [UInt8](repeating: 0x41, count: 16)
        #expect(try PairingKeyFile.load(try write(shortest)) == shortest)
    }

    @Test("too short, too long, empty, readable by others, a directory, missing: each refused, naming the file")
    func refused() throws {
        let short = try write(Array("abc\n".utf8), name: "short.key")
        #expect(throws: PairingKeyFile.Failure.badLength(path: short, bytes: 3)) { try PairingKeyFile.load(short) }
        #expect("\(PairingKeyFile.Failure.badLength(path: short, bytes: 3))".contains("16 to 4096 bytes"))
        let long = try write([UInt8](repeating: 0x61, count: 1 << 20), name: "long.key")
        #expect(throws: PairingKeyFile.Failure.badLength(path: long, bytes: 1 << 20)) { try PairingKeyFile.load(long) }
        let empty = try write(Array("\n".utf8), name: "empty.key")
        #expect(throws: PairingKeyFile.Failure.empty(path: empty)) { try PairingKeyFile.load(empty) }
        let open = try write([UInt8](repeating: 0x61, count: 32), mode: 0o644, name: "open.key")
        #expect(throws: PairingKeyFile.Failure.tooOpen(path: open, mode: 0o644)) { try PairingKeyFile.load(open) }
        let folder = directory.appending("folder.key")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(throws: PairingKeyFile.Failure.notAFile(path: folder)) { try PairingKeyFile.load(folder) }
        let missing = directory.appending("missing.key")
        #expect(throws: PairingKeyFile.Failure.missing(path: missing)) { try PairingKeyFile.load(missing) }
    }
}
