import POSIX

/// Whole-file replacement that a crash can never leave half-written.
///
/// `write` puts the bytes in a temporary sibling named `.<name>.tmp-<random hex>`, fsyncs it,
/// renames it over the target and fsyncs the directory, so after a crash the target holds either
/// the old or the new contents. A crash before the rename leaves the temporary file behind;
/// `sweepTemporaryFiles(in:)` removes those at start-up. Both fsyncs count in `LatencyRecorder.fsync`.
package enum AtomicFile {
    /// Marks a temporary file; a name is temporary when it starts with `.` and contains this.
    static let temporaryMarker = ".tmp-"

    /// Replaces the contents of `path` with `bytes` durably: when this returns, the new contents
    /// survive a crash or power loss.
    package static func write(_ bytes: [UInt8], to path: String) throws {
        try replace(path) { file in try file.write(bytes, at: 0) }
    }

    /// Replaces the contents of `path` with `bytes` atomically but not durably: a reader that opens
    /// the file sees the old or the new contents, never a part, and a crash of the process changes
    /// nothing, but a crash of the machine may leave either (the caller keeps the bytes durable
    /// elsewhere until `sync`).
    ///
    /// With `spare` (a path on the same file system, used for `path` alone) the file replaced is not
    /// freed: it is kept at `spare`, and the next call writes into it in place before renaming it
    /// over `path`. Freeing a file and making a new one cost more than the rest of a replace on the
    /// development machine (an inode written back at once, its blocks discarded), and both sat beside
    /// the other daemon's work on an edit's round trip. A spare's pages are on the device before the
    /// rename, so a machine crash cannot leave `path` naming it with its older contents; a reader
    /// that holds `path` open across two later calls sees its contents change. A spare that is not
    /// a plain file of one name, or cannot be made, is passed over for a new temporary file.
    package static func writeUnsynced(_ bytes: [UInt8], to path: String, reusing spare: String? = nil) throws {
        guard let spare, try fillSpare(spare, with: bytes) else {
            return try replace(path, durable: false) { file in try file.write(bytes, at: 0) }
        }
        let previous = spare.previousName
        let kept = keep(path, as: previous)
        do {
            try FileSystem.rename(spare, to: path)
        } catch {
            if kept { _ = try? FileSystem.removeFileIfPresent(previous) }
            throw error
        }
        if kept { try? FileSystem.rename(previous, to: spare) }
    }

    /// Writes `bytes` into the spare at `path` (made when missing), written out to the device and
    /// closed on return (before the rename, as `create` does); false when it is not a plain file
    /// with one name (a link, or a second name another could read) and cannot be made afresh.
    private static func fillSpare(_ path: String, with bytes: [UInt8]) throws -> Bool {
        let file: FileDescriptor
        if let reused = try? FileDescriptor(opening: path, [.writeOnly, .noFollow]),
            let status = try? reused.status(), status.kind == .regularFile, status.linkCount == 1
        {
            file = reused
        } else {
            _ = try? FileSystem.removeFileIfPresent(path)
            guard let made = try? FileDescriptor(opening: path, [.writeOnly, .create, .exclusive]) else { return false }
            file = made
        }
        try file.write(bytes, at: 0)
        try file.truncate(to: bytes.count)
        try file.writeOutPages()
        return true
    }

    /// Gives the file at `path` a second name, so the rename over it frees nothing; false when
    /// there is no file yet, or the file system has no hard links (the rename then frees it).
    private static func keep(_ path: String, as previous: String) -> Bool {
        if (try? FileSystem.link(path, to: previous)) != nil { return true }
        // A crash between the link and the last rename left it.
        guard (try? FileSystem.removeFileIfPresent(previous)) == true else { return false }
        return (try? FileSystem.link(path, to: previous)) != nil
    }

    /// Makes the contents of the file at `path` durable (an `fsync` of the file; its directory
    /// entry needs `fsyncDirectory`).
    package static func sync(_ path: String) throws {
        let file = try FileDescriptor(opening: path)
        try LatencyRecorder.fsync.time { try file.sync() }
    }

    /// `write(_:to:)` for contents made in pieces, so they are never in memory whole: `produce` is
    /// handed a function that appends a piece to the temporary file.
    package static func write(
        to path: String, producing produce: (_ append: (ArraySlice<UInt8>) throws -> Void) throws -> Void
    ) throws {
        try replace(path) { file in
            var offset = 0
            try produce { piece in
                try file.write(Array(piece), at: offset)
                offset += piece.count
            }
        }
    }

    /// Fills a temporary sibling of `path` with `fill`, fsyncs it, renames it over `path` and fsyncs
    /// the directory; without the two fsyncs when not `durable`.
    private static func replace(
        _ path: String, durable: Bool = true, _ fill: (FileDescriptor) throws -> Void
    ) throws {
        let (directory, name) = split(path)
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() as UInt64, radix: 16)
        let temporary = "\(directory)/.\(name)\(temporaryMarker)\(suffix)"
        do {
            try create(temporary, fill, sync: durable)
            try FileSystem.rename(temporary, to: path)
        } catch {
            try? FileSystem.removeFile(temporary)
            throw error
        }
        if durable { try fsyncDirectory(directory) }
    }

    /// Creates `temporary`, fills it and fsyncs it (when `sync`); closed on return, before the
    /// rename, so a directory watcher hears the close under the temporary name, not a second event
    /// for the target after its rename.
    private static func create(
        _ temporary: String, _ fill: (FileDescriptor) throws -> Void, sync: Bool
    ) throws {
        let file = try FileDescriptor(opening: temporary, [.writeOnly, .create, .exclusive])
        try fill(file)
        if sync { try LatencyRecorder.fsync.time { try file.sync() } }
    }

    /// Renames `source` to `target` (same file system) and fsyncs both directories, so the move
    /// survives a crash; a missing source is an error.
    package static func moveDurably(_ source: String, to target: String) throws {
        try FileSystem.rename(source, to: target)
        let (targetDirectory, _) = split(target)
        let (sourceDirectory, _) = split(source)
        try fsyncDirectory(targetDirectory)
        if sourceDirectory != targetDirectory { try fsyncDirectory(sourceDirectory) }
    }

    /// The contents of `path`, or nil when there is no such file.
    package static func read(_ path: String) throws -> [UInt8]? {
        let file: FileDescriptor
        do {
            file = try FileDescriptor(opening: path)
        } catch {
            if error.errno == Errno.noSuchFile { return nil }
            throw error
        }
        return try file.readAll()
    }

    /// Removes temporary files that an interrupted `write` left in `directory`; returns how many.
    ///
    /// Call it at start-up, before anything writes in the directory: a `write` running
    /// concurrently in another thread would lose its temporary file.
    @discardableResult
    package static func sweepTemporaryFiles(in directory: String) throws -> Int {
        var removed = 0
        for name in try FileSystem.entryNames(in: directory) where isTemporary(name) {
            try FileSystem.removeFile("\(directory)/\(name)")
            removed += 1
        }
        if removed > 0 { try fsyncDirectory(directory) }
        return removed
    }

    /// Makes the entries of `path` (creations, renames, removals) durable; timed in `LatencyRecorder.fsync`.
    package static func fsyncDirectory(_ path: String) throws {
        let directory = try FileDescriptor(opening: path, [.directory])
        try LatencyRecorder.fsync.time { try directory.sync() }
    }

    /// The name a spare's file goes by between the link and the last rename of `writeUnsynced`: one
    /// per folder of spares (a `%` followed by a letter is no escaped name: `PendingFiles`).
    static let previousSpareName = "%previous"

    /// Whether `name` is one of `write`'s temporary files.
    static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(".") && name.contains(temporaryMarker)
    }

    /// Splits a path into its directory (`.` when there is none) and last component.
    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}

extension String {
    /// The name `writeUnsynced` gives the file it replaces while the spare at this path moves.
    fileprivate var previousName: String {
        guard let slash = lastIndex(of: "/") else { return AtomicFile.previousSpareName }
        return "\(self[...slash])\(AtomicFile.previousSpareName)"
    }
}
