/// A small state file (queue ID, acknowledgement marks, received-transfer marks) that exists but
/// cannot be understood; the daemon refuses to start rather than guess.
package enum StateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `file` is not in the expected format; `reason` says what was wrong.
    case malformed(file: String, reason: String)

    package var description: String {
        switch self {
        case .malformed(let file, let reason): "malformed state file \(file): \(reason)"
        }
    }
}
