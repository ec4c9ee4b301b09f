import LinkProtocol
import POSIX
import Synchronization

/// Files made durable by one in-place write of a record, and replaced without a sync later.
///
/// `write` puts a file's bytes in a `RecordFile` (one in-place write and `fdatasync`: one device
/// flush, where an atomic replace costs two journal commits), with what `stat` said of the file then.
/// `publish` replaces the file (temp file, rename, no sync; with a folder of `spares`, the file it
/// replaced is kept there and reused by the next publish: `AtomicFile.writeUnsynced`). At most
/// `limit` files stay pending: the write that would add one more first makes the others durable
/// where they are (`settle`) and drops them. When their folder cannot take them (a read-only or
/// full file system under `root`, the record's own still writable) they stay pending, durable in
/// the record, which outgrows the limit until a later write's settle succeeds. Opening the record puts back each pending file whose publish never took effect (the
/// file is still what `stat` said at the write: a kill came between the two, or a machine crash lost
/// the rename), syncs them all and empties the record. A file changed since by anyone else is left
/// as it is. `remove` drops a file from the record before the caller removes it, so it never comes back.
///
/// ```
/// record   = entry*, ordered by path
/// entry    = u32 path length | path (UTF-8, relative to the root) | identity | u32 length | bytes
/// identity = u8 0 (no file at the write) | u8 1, u64 inode, i64 mtime (ns), u64 size
/// ```
package final class PendingFiles: Sendable {
    /// Replaces the file at a path with bytes, without a sync, reusing the spare when there is one.
    package typealias Replace = @Sendable (_ path: String, _ spare: String?, _ bytes: [UInt8]) throws -> Void

    package static let limit = 8

    package let root: String
    /// Where each published file's spare is kept (one per path, named by `spareName`); nil when
    /// files are not kept.
    package let spares: String?
    /// How many spares are kept: those of the files published last (the runs being edited). The
    /// spare of the file published longest ago goes when one more is made, so spares take the room
    /// of a few files, not of every file replaced since the start.
    package let sparesKept: Int
    /// The files published with a spare since the open, the one published longest ago first.
    private let spareUse = Mutex<[String]>([])
    private let record: RecordFile
    private let replace: Replace
    private let state = Mutex<[String: Entry]>([:])
    /// Why the last settle failed, while the pending files are not settled (every write tries
    /// again until one succeeds); nil once they are.
    package var settleFailure: String? { failure.withLock { $0 } }
    private let failure = Mutex<String?>(nil)
    /// Why the record found at start-up was not used (it is replaced by the next write); nil when it was.
    package let damage: String?

    /// What the file was when its bytes were written: its publish has not taken effect while it still is.
    package struct Identity: Equatable, Sendable {
        package var inode: UInt64
        package var modified: Int64
        package var size: UInt64

        package init(inode: UInt64, modified: Int64, size: UInt64) {
            (self.inode, self.modified, self.size) = (inode, modified, size)
        }

        package init?(of path: String) {
            guard let status = try? FileStatus(of: path) else { return nil }
            self.init(inode: status.inode, modified: status.modificationNanoseconds, size: UInt64(status.size))
        }
    }

    /// A pending file: its bytes, what the file was at the write, and whether its publish took effect.
    package struct Entry: Equatable, Sendable {
        package var bytes: [UInt8]
        package var before: Identity?
        package var published = false

        package init(bytes: [UInt8], before: Identity?) { (self.bytes, self.before) = (bytes, before) }
    }

    /// Opens the record at `recordPath` for files under `root`, putting back what a crash left
    /// pending. `spares` (made when missing, emptied at the open) is passed over when it is not on
    /// the file system of `root`.
    package init(
        record recordPath: String, root: String, spares: String? = nil, sparesKept: Int = 64,
        replace: @escaping Replace = { try AtomicFile.writeUnsynced($2, to: $0, reusing: $1) }
    ) throws {
        self.root = root
        self.sparesKept = sparesKept
        self.spares = spares.flatMap { spares in
            _ = try? FileSystem.createDirectory(spares)
            guard let folder = try? FileStatus(of: spares), folder.kind == .directory,
                folder.device == (try? FileStatus(of: root))?.device
            else { return nil }
            return spares
        }
        record = RecordFile(path: recordPath)
        self.replace = replace
        let found: [String: Entry]
        do {
            let contents = try record.read()
            found = try contents.map { try Self.entries($0.record) } ?? [:]
            damage = nil
        } catch {
            damage = "\(error)"
            return
        }
        for (relative, entry) in found where Identity(of: path(relative)) == entry.before {
            try replace(path(relative), spare(relative), entry.bytes)
        }
        // Spares of files no longer written (a removed run's, say) do not outlive a start.
        if let spares = self.spares {
            for name in (try? FileSystem.entryNames(in: spares)) ?? [] {
                _ = try? FileSystem.removeFileIfPresent("\(spares)/\(name)")
            }
        }
        guard !found.isEmpty else { return }
        try sync(found.keys)
        try record.write([])
    }

    private func path(_ relative: String) -> String { "\(root)/\(relative)" }

    private func spare(_ relative: String) -> String? { spares.map { "\($0)/\(Self.spareName(relative))" } }

    /// `replace`, then the spare of the file published longest ago goes when more than
    /// `sparesKept` are kept. Called under `state`'s lock, so no publish of that file runs meanwhile.
    private func replaceKeepingSpares(_ relative: String, _ bytes: [UInt8]) throws {
        try replace(path(relative), spare(relative), bytes)
        guard spares != nil else { return }
        let dropped: String? = spareUse.withLock { order in
            order.removeAll { $0 == relative }
            order.append(relative)
            return order.count > sparesKept ? order.removeFirst() : nil
        }
        if let dropped, let file = spare(dropped) { _ = try? FileSystem.removeFileIfPresent(file) }
    }

    /// A relative path as one file name: `%` and `/` escaped as `%25` and `%2F`, so no two paths
    /// share one and none is `AtomicFile`'s `%previous`.
    package static func spareName(_ relative: String) -> String {
        var name = ""
        for character in relative {
            switch character {
            case "%": name += "%25"
            case "/": name += "%2F"
            default: name.append(character)
            }
        }
        return name
    }

    /// Makes `bytes` the file at `relative` durably; the file itself changes at `publish`.
    package func write(_ bytes: [UInt8], at relative: String) throws {
        try state.withLock { entries in
            var next = entries
            if settleFailure != nil || (next[relative] == nil && next.count >= Self.limit) {
                do {
                    try settle(next)
                    next = [:]
                    failure.withLock { $0 = nil }
                } catch {
                    // The files' folder refuses them for now; the record still holds them.
                    failure.withLock { $0 = "\(error)" }
                }
            }
            // Until a publish takes effect, the file is still what it was at the first write.
            let before = next[relative].flatMap { $0.published ? nil : $0.before } ?? Identity(of: path(relative))
            next[relative] = Entry(bytes: bytes, before: before)
            try record.write(Self.record(next))
            entries = next
        }
    }

    /// Replaces the file at `relative` with the bytes written since its last publish; nothing when
    /// there are none. A replace that fails leaves the file to the next start (or `settle`).
    package func publish(_ relative: String) {
        state.withLock { entries in
            guard let entry = entries[relative], !entry.published else { return }
            if (try? replaceKeepingSpares(relative, entry.bytes)) != nil {
                entries[relative]?.published = true
            }
        }
    }

    /// Drops `relative` from the record, durably, before its file is removed (its spare goes too).
    package func remove(_ relative: String) throws {
        try state.withLock { entries in
            if let spare = spare(relative) {
                _ = try? FileSystem.removeFileIfPresent(spare)
                spareUse.withLock { $0.removeAll { $0 == relative } }
            }
            guard entries[relative] != nil else { return }
            var next = entries
            next[relative] = nil
            try record.write(Self.record(next))
            entries = next
        }
    }

    /// The bytes last written at `relative` while their publish has not taken effect (the file
    /// does not hold them yet).
    package func unpublished(at relative: String) -> [UInt8]? {
        state.withLock { entries in entries[relative].flatMap { $0.published ? nil : $0.bytes } }
    }

    /// Publishes what is not yet, then syncs each file and each folder holding one.
    private func settle(_ entries: [String: Entry]) throws {
        for (relative, entry) in entries where !entry.published {
            try replaceKeepingSpares(relative, entry.bytes)
        }
        try sync(entries.keys)
    }

    private func sync(_ relatives: some Collection<String>) throws {
        var folders: Set<String> = []
        for relative in relatives.sorted() {
            let path = path(relative)
            guard Identity(of: path) != nil else { continue }
            try AtomicFile.sync(path)
            folders.insert(String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]))
        }
        for folder in folders.sorted() { try AtomicFile.fsyncDirectory(folder) }
    }

    /// The record of `entries` (the format above).
    package static func record(_ entries: [String: Entry]) -> [UInt8] {
        var bytes: [UInt8] = []
        for relative in entries.keys.sorted() {
            let entry = entries[relative]!
            let name = Array(relative.utf8)
            BigEndian.append(UInt32(name.count), to: &bytes)
            bytes += name
            if let before = entry.before {
                bytes.append(1)
                BigEndian.append(before.inode, to: &bytes)
                BigEndian.append(before.modified, to: &bytes)
                BigEndian.append(before.size, to: &bytes)
            } else {
                bytes.append(0)
            }
            BigEndian.append(UInt32(entry.bytes.count), to: &bytes)
            bytes += entry.bytes
        }
        return bytes
    }

    /// The entries of a record; throws when it is not a list of them, or a path leaves the root.
    package static func entries(_ record: [UInt8]) throws(PendingRecordError) -> [String: Entry] {
        var offset = 0
        func take(_ count: Int) throws(PendingRecordError) -> [UInt8] {
            guard count >= 0, record.count - offset >= count else {
                throw PendingRecordError(description: "not a list of pending files (cut short at byte \(offset))")
            }
            defer { offset += count }
            return Array(record[offset..<(offset + count)])
        }
        func number<T: FixedWidthInteger>(_: T.Type) throws(PendingRecordError) -> T {
            BigEndian.read(T.self, from: try take(MemoryLayout<T>.size), at: 0)
        }
        var entries: [String: Entry] = [:]
        while offset < record.count {
            let name = try take(Int(try number(UInt32.self)))
            // A path the system would read otherwise (cut at a NUL, or bytes that are not UTF-8) is not ours.
            guard !name.contains(0), let relative = String(validating: name, as: UTF8.self) else {
                throw PendingRecordError(description: "a pending path that is not a file name")
            }
            let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
            guard !relative.isEmpty, !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
                throw PendingRecordError(description: "a pending path that leaves the folder: \(relative)")
            }
            var before: Identity?
            switch try number(UInt8.self) {
            case 0: break
            case 1:
                before = Identity(
                    inode: try number(UInt64.self), modified: try number(Int64.self), size: try number(UInt64.self))
            case let other: throw PendingRecordError(description: "not a list of pending files (identity \(other))")
            }
            entries[relative] = Entry(bytes: try take(Int(try number(UInt32.self))), before: before)
        }
        return entries
    }
}

/// A pending record that cannot be used, and why.
package struct PendingRecordError: Error, CustomStringConvertible {
    package let description: String
    package init(description: String) { self.description = description }
}
