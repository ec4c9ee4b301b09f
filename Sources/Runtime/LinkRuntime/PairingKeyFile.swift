import Foundation
import POSIX

/// Loads the pairing key both daemons share from a file only its owner may read.
///
/// The key is the file's contents with trailing whitespace removed (`scripts/pairing-key` writes 64
/// hex digits from the CSPRNG). A missing or group/world-accessible file, or anything but a regular
/// file, is refused with an error naming it: a key others can read authenticates anyone. So is a
/// key shorter than 16 bytes (one guessed offline from a captured handshake) or longer than 4,096
/// (the wrong file named).
package enum PairingKeyFile {
    /// The shortest and longest key taken, in bytes.
    package static let lengths = 16...4096

    /// Why a key file was refused.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        case missing(path: String)
        case unreadable(path: String, errno: Int32)
        case tooOpen(path: String, mode: UInt32)
        case empty(path: String)
        case notAFile(path: String)
        case badLength(path: String, bytes: Int)

        package var description: String {
            switch self {
            case .missing(let path):
                return "pairing key file \(path) does not exist (create one with scripts/pairing-key \(path))"
            case .unreadable(let path, let code):
                return "pairing key file \(path) cannot be read: \(Errno.text(code))"
            case .tooOpen(let path, let mode):
                return
                    "pairing key file \(path) has mode \(String(mode, radix: 8)); it must not be readable by group or others (chmod 600)"
            case .empty(let path):
                return "pairing key file \(path) is empty"
            case .notAFile(let path):
                return "pairing key file \(path) is not a regular file"
            case .badLength(let path, let bytes):
                return
                    "pairing key file \(path) holds a \(bytes)-byte key; a key is \(lengths.lowerBound) to \(lengths.upperBound) bytes "
                    + "(scripts/pairing-key writes a good one)"
            }
        }
    }

    /// Reads and checks the key at `path`.
    package static func load(_ path: String) throws(Failure) -> [UInt8] {
        let status: FileStatus
        do {
            status = try FileStatus(of: path)
        } catch {
            throw error.errno == Errno.noSuchFile ? .missing(path: path) : .unreadable(path: path, errno: error.errno)
        }
        guard status.kind == .regularFile else { throw .notAFile(path: path) }
        let mode = status.permissions
        guard mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: mode) }
        guard status.size <= lengths.upperBound + 2 else { throw .badLength(path: path, bytes: status.size) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, errno: Errno.accessDenied)
        }
        var bytes = Array(data)
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .empty(path: path) }
        guard lengths.contains(bytes.count) else { throw .badLength(path: path, bytes: bytes.count) }
        return bytes
    }
}
