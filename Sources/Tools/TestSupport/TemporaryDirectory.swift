import Foundation

/// A directory under the system temporary directory that exists for one test and is removed with it.
///
/// Each instance is unique (name carries a random suffix), so tests that run alongside each other never share one.
package final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    package let path: String

    /// Creates a fresh, empty directory whose name starts with `prefix`.
    package init(_ prefix: String = "watchsync") throws {
        let base = FileManager.default.temporaryDirectory.path
        let path = "\(base)/\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        self.path = path
    }

    /// The absolute path of `relative` inside this directory.
    package func appending(_ relative: String) -> String {
        "\(path)/\(relative)"
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
