import DurableFiles
import Foundation
import WorkoutModel

/// The small files a daemon keeps in its state directory.
package enum StateFiles {
    /// A value kept in the state directory, nil when there is none yet.
    package static func readState<T: VersionedDocument>(_ type: T.Type, _ path: String) throws -> T? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        return try DocumentCoder.decode(type, from: bytes)
    }

    /// The live mirror's last version (`<state>/live-version`), nil when there is none yet. Anything
    /// but a decimal version in it refuses the start (docs/OPERATIONS.md: a damaged state file is not
    /// guessed at), naming the file: deleting it lets the next version start from the clock.
    package static func liveVersion(stateDirectory: String) throws -> Int? {
        let path = "\(stateDirectory)/live-version"
        guard let bytes = try AtomicFile.read(path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let version = Int(text), version >= 0 else {
            throw StateFileError.malformed(
                file: path,
                reason: "\(bytes.count) bytes that are not a live version (a decimal number); delete it to "
                    + "start again from the clock")
        }
        return version
    }
}

extension Timestamp {
    /// The wall clock now, to the microsecond (shells only: pure code receives time in events).
    package static var current: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
}
