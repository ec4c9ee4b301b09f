import LinkRuntime
import WorkoutModel

/// A daemon's persisted hybrid-logical-clock high-water mark, `<stateDirectory>/clock`: one stamp in
/// its text form. Restoring it means a restarted daemon never stamps an edit below one it made (or
/// saw) before, even when its wall clock went back.
package struct ClockFile: Sendable {
    package let path: String
    /// The mark last written (or read), so an unchanged clock costs no write.
    private var written: Stamp?

    package init(stateDirectory: String) {
        path = "\(stateDirectory)/clock"
    }

    /// The persisted mark, nil when there is none yet; a file that does not hold a stamp is an error
    /// naming the file.
    package mutating func read() throws -> Stamp? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace
        guard let stamp = Stamp(text: text) else {
            throw ClockFileError(path: path, found: String(text.prefix(80)))
        }
        written = stamp
        return stamp
    }

    /// Writes `mark` atomically when it moved since the last write.
    package mutating func persist(_ mark: Stamp?) throws {
        try write(mark)?()
    }

    /// The write of `mark` when it moved since the last one (nil: nothing to write), to run now or
    /// on another thread; counted as written from here on (a failed write stops the daemon).
    package mutating func write(_ mark: Stamp?) -> (@Sendable () throws -> Void)? {
        guard let mark, mark != written else { return nil }
        written = mark
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
