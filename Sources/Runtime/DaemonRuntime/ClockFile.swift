import DurableFiles
import WorkoutModel

/// A daemon's persisted hybrid-logical-clock mark (`ClockLease`), `<stateDirectory>/clock`: one stamp
/// in its text form. Restoring it means a restarted daemon never stamps an edit below one it made (or
/// saw) before, even when its wall clock went back.
package struct ClockFile: Sendable {
    package let path: String

    package init(stateDirectory: String) {
        path = "\(stateDirectory)/clock"
    }

    /// The persisted mark, nil when there is none yet; a file that does not hold a stamp is an error
    /// naming the file.
    package func read() throws -> Stamp? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        guard let stamp = Stamp(text: text) else {
            throw ClockFileError(path: path, found: String(text.prefix(80)))
        }
        return stamp
    }

    /// Writes `mark` atomically.
    package func persist(_ mark: Stamp) throws {
        try write(mark)()
    }

    /// The write of `mark`, to run now or on another thread (the node hands out a mark only when it
    /// moved: `ClockLease`).
    package func write(_ mark: Stamp) -> @Sendable () throws -> Void {
        let path = path
        return { try AtomicFile.write(Array("\(mark)\n".utf8), to: path) }
    }
}

/// The clock file holds something other than a stamp.
package struct ClockFileError: Error, CustomStringConvertible {
    package var path: String
    package var found: String

    package var description: String {
        "clock file \(path) does not hold a stamp (<ISO-8601 time>/<counter>/<phone|watch>): \(found.debugDescription)"
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
