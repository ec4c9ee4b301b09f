import Foundation
import POSIX

/// A strict JSON configuration file: one object whose keys must all be known, read through the
/// keys' declarations (`ConfigKey`, `ConfigRecord.load`), which name the key, the file and the
/// expected form in every error.
///
/// Unknown keys are refused when the file is loaded — before any value is checked — because a
/// misspelt key would otherwise silently leave its default in force. A key declared with a default
/// takes it when absent; without one the key is required. `null` counts as present and wrong,
/// never as "use the default".
///
/// Relative paths (`ConfigKey.path`) are resolved against the working directory given to
/// `load`, which defaults to the process's current directory. Under systemd that is `/` unless the
/// unit sets `WorkingDirectory=`, so shipped configs should use absolute paths.
package struct ConfigFile: Sendable {
    /// The file as given to `load`, as every error names it.
    package let path: String
    /// The directory relative paths are resolved against.
    package let workingDirectory: String
    /// The keys `load` accepted; getters for any other key are a programming error.
    package let knownKeys: Set<String>
    private let values: [String: JSONValue]

    /// Reads the JSON object at `path`, refusing a missing file, invalid JSON, a non-object and any
    /// key outside `knownKeys` (with a suggestion when one known key is close). Relative paths in it
    /// will resolve against `workingDirectory`, by default the process's current directory.
    package static func load(
        path: String, knownKeys: Set<String>, workingDirectory: String? = nil
    ) throws(ConfigError) -> ConfigFile {
        let bytes = try readWholeFile(path)
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw .notJSON(path: path, detail: describe(error))
        }
        guard case .object(let values) = value else { throw .notAnObject(path: path) }
        if let key = firstRepeatedTopLevelKey(bytes) { throw .duplicateKey(key: key, path: path) }
        for key in values.keys.sorted() where !knownKeys.contains(key) {
            throw .unknownKey(key: key, path: path, suggestion: closestKey(to: key, among: knownKeys))
        }
        return ConfigFile(
            path: path, workingDirectory: workingDirectory ?? FileManager.default.currentDirectoryPath,
            knownKeys: knownKeys, values: values)
    }

    /// The raw value of `key`, or nil when absent. Traps for a key not declared to `load`, which is
    /// a bug in the daemon's configuration type, not in the file.
    func value(_ key: String) -> JSONValue? {
        precondition(knownKeys.contains(key), "configuration key \(key) was read but not declared to ConfigFile.load")
        return values[key]
    }

    /// How an address key describes what it wants.
    static let addressForm =
        "an address \"HOST:PORT\" with a numeric IPv4 host, localhost or a bracketed IPv6 host"
        + " (\"127.0.0.1:7420\", \"localhost:0\", \"[::1]:7420\") and a port from 0 to 65535"

    /// `path` if absolute, else `directory/path`, without `.` or empty components.
    static func absolute(_ path: String, relativeTo directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : directory + "/" + path
        // ".." is left alone: resolving it lexically is wrong when a component is a symlink.
        let components = joined.split(separator: "/").filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }

    /// The first key the top-level object of `json` (valid JSON) names a second time, if any.
    package static func firstRepeatedTopLevelKey(_ json: [UInt8]) -> String? {
        var depth = 0
        var seen: Set<String> = []
        var index = 0
        var expectingKey = false
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: "{"):
                depth += 1
                expectingKey = depth == 1
            case UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                expectingKey = depth == 1
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < json.count, json[index] != UInt8(ascii: "\"") {
                    index += json[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                if expectingKey {
                    expectingKey = false
                    // The key as the parser reads it (escapes resolved).
                    let literal = Data(json[start...min(index, json.count - 1)])
                    let key = (try? JSONDecoder().decode(String.self, from: literal)) ?? ""
                    if !seen.insert(key).inserted { return key }
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The bytes of the file, with errors naming it.
    private static func readWholeFile(_ path: String) throws(ConfigError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            // A configuration file is a few hundred bytes; refusing huge ones keeps a mistaken path
            // (a log file, a device) from being slurped.
            bytes = try FileDescriptor(opening: path).readToEnd(limit: 1024 * 1024, chunkBytes: 16 * 1024)
        } catch {
            throw error.errno == Errno.noSuchFile
                ? .missingFile(path: path) : .unreadable(path: path, errno: error.errno)
        }
        guard bytes.count <= 1024 * 1024 else { throw .notJSON(path: path, detail: "the file is larger than 1 MiB") }
        return bytes
    }

    /// The decoder's own explanation, without Swift's type names where it offers one.
    private static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = context.underlyingError.map { " (\($0))" } ?? ""
            return context.debugDescription + underlying
        }
        return "\(error)"
    }

    /// The known key within two edits of `key` (ignoring case), if exactly one is closest.
    static func closestKey(to key: String, among knownKeys: Set<String>) -> String? {
        let scored = knownKeys.map { ($0, editDistance(key.lowercased(), $0.lowercased())) }
        guard let best = scored.map(\.1).min(), best <= max(2, key.count / 4) else { return nil }
        let winners = scored.filter { $0.1 == best }.map(\.0)
        return winners.count == 1 ? winners[0] : nil
    }

    /// Levenshtein distance between `a` and `b`.
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count]
    }
}

/// A JSON value as written, keeping integers apart from fractions and booleans apart from numbers
/// so an error can say exactly what it found.
package enum JSONValue: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value as JSON text, exactly (scalars only: no key is declared with an array or object).
    var json: String {
        guard case .string(let text) = self else { return written }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        // Encoding a String cannot fail.
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The value as it would appear in the file, for "found …" in errors (long strings shortened).
    var written: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .string(let value):
            let shown = value.count > 60 ? value.prefix(57) + "..." : Substring(value)
            return "\"\(shown)\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
