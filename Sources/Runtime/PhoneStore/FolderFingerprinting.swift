import Dispatch
import POSIX
import Synchronization
import WorkoutModel

extension DocumentDirectory {
    /// One folder's fingerprint (`fingerprints(of:)`).
    package struct FolderListing: Sendable {
        package var fingerprint: FolderFingerprint
        /// The newest modification or change time of an entry (nanoseconds since the epoch), which
        /// says whether the folder has settled (`scan(reusing:…)`).
        package var newestChangeNanoseconds: Int64
        /// Whether an entry's name starts with a dot, as the temporary files of an interrupted
        /// `AtomicFile.write` do: only then is the folder listed again to sweep them.
        package var mayHoldTemporaryFiles: Bool
    }

    /// The fingerprints of layout folders from their listings and one `lstat` per entry, without
    /// reading a file (`FolderFingerprint`): every entry counts, documents, strays and subfolders.
    /// Folders are fingerprinted on every core at once, each by one thread: at a million runs the
    /// listings and `lstat`s are most of a restart, and the kernel's work for them is what bounds it.
    package func fingerprints(of folders: [DocumentFolder]) throws(DocumentStoreError) -> [FolderListing] {
        let results = Mutex([Result<FolderListing, DocumentStoreError>?](repeating: nil, count: folders.count))
        DispatchQueue.concurrentPerform(iterations: folders.count) { index in
            let result = Result { () throws(DocumentStoreError) in try self.serialFingerprint(of: folders[index]) }
            results.withLock { $0[index] = result }
        }
        return try results.withLock { slots throws(DocumentStoreError) in
            var listings: [FolderListing] = []
            for slot in slots { listings.append(try slot!.get()) }
            return listings
        }
    }

    /// One folder's fingerprint, on this thread.
    private func serialFingerprint(of folder: DocumentFolder) throws(DocumentStoreError) -> FolderListing {
        let path = path(of: folder)
        let stream: DirectoryStream
        let names: [CChar]
        let starts: [Int]
        do {
            stream = try DirectoryStream(path)
            (names, starts) = try stream.packedNames()
        } catch {
            throw .listFailed(path: path, error)
        }
        var part = FingerprintPart()
        var dotted = false
        // The stream holds the directory open for the `lstat`s relative to it.
        withExtendedLifetime(stream) {
            names.withUnsafeBufferPointer { buffer in
                for start in starts {
                    if buffer[start] == CChar(UInt8(ascii: ".")) { dotted = true }
                    part.add(Self.entryFingerprint(stream.descriptor, buffer.baseAddress! + start))
                }
            }
        }
        let fingerprint = FolderFingerprint(
            entryCount: part.count, newestModificationNanoseconds: part.count == 0 ? 0 : part.newest,
            digest: part.digest)
        return FolderListing(
            fingerprint: fingerprint, newestChangeNanoseconds: part.newestChange, mayHoldTemporaryFiles: dotted)
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
        // Unrolled: an array literal here was an allocation per entry, a million at a restart.
        hash = mixed(hash ^ UInt64(truncatingIfNeeded: status.size))
        hash = mixed(hash ^ status.inode)
        hash = mixed(hash ^ UInt64(bitPattern: modified))
        hash = mixed(hash ^ UInt64(bitPattern: changed))
        hash = mixed(hash ^ UInt64(status.mode))
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

/// What a folder's entries add up to; a sum of per-entry hashes does not depend on the listing's order.
private struct FingerprintPart {
    var count = 0
    var newest = Int64.min
    var newestChange = Int64.min
    var digest: UInt64 = 0

    mutating func add(_ entry: (hash: UInt64, modified: Int64, changed: Int64)?) {
        guard let entry else { return }
        count += 1
        newest = max(newest, entry.modified)
        newestChange = max(newestChange, entry.changed)
        digest &+= entry.hash
    }
}
