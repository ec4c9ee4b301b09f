import Foundation
import POSIX

/// One daemon per state directory: `<state>/lock`, held with `flock` for the life of the process,
/// names the process that holds it. A second daemon given the same directory (a copied config, a
/// unit started twice) would share the instance ID, the outbox and the clock with the first, and
/// the peer would flip between the two; it is refused at start-up instead.
package enum StateDirectoryLock {
    /// The descriptors holding the locks taken, kept open until the process ends.
    nonisolated(unsafe) private static var held: [FileDescriptor] = []

    /// Takes the lock on `directory` (created if missing) for `daemon`, or throws naming the holder.
    /// Called once, on the main thread, before anything in the directory is read or written.
    package static func acquire(_ directory: String, daemon: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/lock"
        let file = try FileDescriptor(opening: path, [.readWrite, .create], mode: 0o600)
        guard try file.tryLockExclusively() else {
            let holder = (try? file.readAll()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let pid = holder.split(separator: "\n").first.map { " (pid \($0))" } ?? ""
            throw StateDirectoryInUse(
                description: "state directory \(directory) is held by another process\(pid): one \(daemon) per "
                    + "state directory; stop that one, or give this one its own stateDirectory")
        }
        try file.truncate(to: 0)
        try file.write(Array("\(CurrentProcess.id)\n".utf8), at: 0)
        held.append(file)
    }
}

/// Another process holds the state directory's lock.
package struct StateDirectoryInUse: Error, CustomStringConvertible {
    package let description: String
}
