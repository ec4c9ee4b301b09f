import Foundation
import LinkRuntime
import WorkoutModel

/// The small files a daemon keeps in its state directory.
package enum StateFiles {
    /// A value kept in the state directory, nil when there is none yet.
    package static func readState<T: VersionedDocument>(_ type: T.Type, _ path: String) throws -> T? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        return try DocumentCoder.decode(type, from: bytes)
    }

    /// The live mirror's last version (`<state>/live-version`), nil when there is none yet.
    package static func liveVersion(stateDirectory: String) throws -> Int? {
        try AtomicFile.read("\(stateDirectory)/live-version").flatMap { Int(String(decoding: $0, as: UTF8.self)) }
    }
}

extension Timestamp {
    /// The wall clock now, to the microsecond (shells only: pure code receives time in events).
    package static var current: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
}
