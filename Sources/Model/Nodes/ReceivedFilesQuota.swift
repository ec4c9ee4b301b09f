/// What `<state>/received-files` keeps: the newest received files that fit `maximumBytes`
/// (`receivedFilesQuotaBytes`). Each time the app keeps a file, the oldest others are removed until
/// the rest fit, so the folder is bounded by the quota however many files arrive
/// (docs/OPERATIONS.md, "Disk"). The file just kept is never removed, even alone over the quota:
/// the inbox quota already let it in, and the app has it until a newer one arrives.
///
/// The shell lists the folder (`Kept` per file), asks `removals`, and removes what it names.
package struct ReceivedFilesQuota: Sendable, Equatable {
    /// One file in the folder, as listed.
    package struct Kept: Sendable, Equatable {
        package var name: String
        package var bytes: Int
        /// When it arrived (its modification time, ns since the epoch): older files go first.
        package var arrivedNanoseconds: Int64

        package init(name: String, bytes: Int, arrivedNanoseconds: Int64) {
            self.name = name
            self.bytes = bytes
            self.arrivedNanoseconds = arrivedNanoseconds
        }
    }

    package var maximumBytes: Int

    package init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    /// The files to remove, oldest first (ties by name), so that what is left takes at most
    /// `maximumBytes`; never `newest`, the file just kept.
    package func removals(_ files: [Kept], newest: String) -> [String] {
        var total = files.reduce(0) { $0 + $1.bytes }
        var removed: [String] = []
        let oldestFirst = files.filter { $0.name != newest }.sorted {
            ($0.arrivedNanoseconds, $0.name) < ($1.arrivedNanoseconds, $1.name)
        }
        for file in oldestFirst where total > maximumBytes {
            removed.append(file.name)
            total -= file.bytes
        }
        return removed
    }
}
