import Dispatch
import POSIX
import Synchronization
import WorkoutModel

extension DocumentDirectory {
    /// The fingerprint of a layout folder from its listing and one `lstat` per entry, without
    /// reading a file (`FolderFingerprint`): every entry counts, documents, strays and subfolders.
    /// Also the newest modification or change time of an entry (nanoseconds since the epoch), which
    /// says whether the folder has settled (`scan(reusing:…)`).
    package func fingerprint(
        of folder: DocumentFolder
    ) throws(DocumentStoreError) -> (fingerprint: FolderFingerprint, newestChangeNanoseconds: Int64) {
        let path = path(of: folder)
        // The names first, then their `lstat`s on every core: at a million runs the `lstat`s are most
        // of a restart, and each costs a lookup in a folder of thousands of entries.
        let stream: DirectoryStream
        let names: [CChar]
        let starts: [Int]
        do {
            stream = try DirectoryStream(path)
            (names, starts) = try stream.packedNames()
        } catch {
            throw .listFailed(path: path, error)
        }
        let descriptor = stream.descriptor
        let chunkCount = min(starts.count, CurrentProcess.onlineProcessorCount * 4)
        let parts = FingerprintParts(count: chunkCount)
        // The stream holds the directory open for the `lstat`s relative to it.
        withExtendedLifetime(stream) {
            DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
                var part = FingerprintParts.Part()
                names.withUnsafeBufferPointer { buffer in
                    for index in stride(from: chunk, to: starts.count, by: chunkCount) {
                        part.add(Self.entryFingerprint(descriptor, buffer.baseAddress! + starts[index]))
                    }
                }
                parts.store(part, at: chunk)
            }
        }
        let whole = parts.combined
        let fingerprint = FolderFingerprint(
            entryCount: whole.count, newestModificationNanoseconds: whole.count == 0 ? 0 : whole.newest,
            digest: whole.digest)
        return (fingerprint, whole.newestChange)
    }

    /// One entry's part of its folder's fingerprint: its hash (name, size, inode, times, mode), its
    /// modification time and the newer of its modification and change times; nil when it is gone
    /// since it was listed (the folder changed, and the next fingerprint will say so).
    private static func entryFingerprint(
        _ descriptor: Int32, _ name: UnsafePointer<CChar>
    ) -> (hash: UInt64, modified: Int64, changed: Int64)? {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var byte = name
        while byte.pointee != 0 {
            hash = (hash ^ UInt64(UInt8(bitPattern: byte.pointee))) &* 0x100_0000_01B3
            byte += 1
        }
        guard let status = FileStatus(ofEntry: name, inDirectory: descriptor) else { return nil }
        let modified = status.modificationNanoseconds
        let changed = status.changeNanoseconds
        for value in [
            UInt64(truncatingIfNeeded: status.size), status.inode,
            UInt64(bitPattern: modified), UInt64(bitPattern: changed), UInt64(status.mode),
        ] {
            hash = mixed(hash ^ value)
        }
        return (hash, modified, max(modified, changed))
    }

    /// SplitMix64's finaliser: every input bit moves about half the output bits.
    private static func mixed(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The partial fingerprints of a folder's entries, one per concurrent chunk, each in its own slot.
private final class FingerprintParts: Sendable {
    /// What a chunk of entries adds to the fingerprint; parts combine in any order.
    struct Part {
        var count = 0
        var newest = Int64.min
        var newestChange = Int64.min
        // A sum of per-entry hashes does not depend on the listing's order.
        var digest: UInt64 = 0

        mutating func add(_ entry: (hash: UInt64, modified: Int64, changed: Int64)?) {
            guard let entry else { return }
            count += 1
            newest = max(newest, entry.modified)
            newestChange = max(newestChange, entry.changed)
            digest &+= entry.hash
        }
    }

    private let slots: Mutex<[Part]>

    init(count: Int) { slots = Mutex(Array(repeating: Part(), count: count)) }

    func store(_ part: Part, at index: Int) { slots.withLock { $0[index] = part } }

    /// Every part added together (read after the chunks are done).
    var combined: Part {
        slots.withLock { parts in
            parts.reduce(into: Part()) { whole, part in
                whole.count += part.count
                whole.newest = max(whole.newest, part.newest)
                whole.newestChange = max(whole.newestChange, part.newestChange)
                whole.digest &+= part.digest
            }
        }
    }
}
