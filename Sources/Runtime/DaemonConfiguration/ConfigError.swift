import POSIX

/// Why a daemon's configuration file was refused. Every case names the file, and the key where
/// there is one, so the message alone tells an operator what to fix.
package enum ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file at `path`.
    case missingFile(path: String)
    /// The file exists but could not be read (`errno` from `open`/`read`).
    case unreadable(path: String, errno: Int32)
    /// The file is not valid JSON; `detail` is the parser's explanation.
    case notJSON(path: String, detail: String)
    /// The file is valid JSON but its top level is not an object.
    case notAnObject(path: String)
    /// The object has a key the daemon does not know; `suggestion` is a known key it resembles.
    case unknownKey(key: String, path: String, suggestion: String?)
    /// A key without a default is absent; `expected` describes what it should hold.
    case missingKey(key: String, path: String, expected: String)
    /// A key holds a value of the wrong type or outside its range; `found` is the value as written.
    case invalidValue(key: String, path: String, expected: String, found: String)
    /// The object names a key twice (a JSON parser keeps one of the two without a word).
    case duplicateKey(key: String, path: String)

    package var description: String {
        switch self {
        case .missingFile(let path):
            return "config file \(path) does not exist"
        case .unreadable(let path, let code):
            return "config file \(path) cannot be read: \(Errno.describe(code))"
        case .notJSON(let path, let detail):
            return "config file \(path) is not valid JSON: \(detail)"
        case .notAnObject(let path):
            return "config file \(path) must hold a JSON object ({ \"key\": value, … }) at the top level"
        case .unknownKey(let key, let path, let suggestion):
            let hint = suggestion.map { " (did you mean \"\($0)\"?)" } ?? ""
            return "config file \(path): unknown key \"\(key)\"\(hint)"
        case .missingKey(let key, let path, let expected):
            return "config file \(path): required key \"\(key)\" is missing; it must be \(expected)"
        case .invalidValue(let key, let path, let expected, let found):
            return "config file \(path): key \"\(key)\" must be \(expected); found \(found)"
        case .duplicateKey(let key, let path):
            return "config file \(path): key \"\(key)\" is given twice; keep one"
        }
    }
}
