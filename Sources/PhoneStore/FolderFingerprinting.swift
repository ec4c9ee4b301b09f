import Glibc
import POSIX
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
        guard let stream = opendir(path) else {
            throw .listFailed(path: path, SystemCallError(call: "opendir", errno: errno, path: path))
        }
        defer { closedir(stream) }
        let descriptor = dirfd(stream)
        var count = 0
        var newest = Int64.min
        var newestChange = Int64.min
        var digest: UInt64 = 0
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    throw .listFailed(path: path, SystemCallError(call: "readdir", errno: errno, path: path))
                }
                break
            }
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            let isDotEntry = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Bool in
                let name = raw.prefix { $0 != 0 }
                if name.elementsEqual([UInt8(ascii: ".")])
                    || name.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
                {
                    return true
                }
                for byte in name { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
                return false
            }
            if isDotEntry { continue }
            var status = stat()
            let found = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) {
                    fstatat(descriptor, $0, &status, AT_SYMLINK_NOFOLLOW)
                }
            }
            // Gone since it was listed: the folder changed, and the next fingerprint will say so.
            guard found == 0 else { continue }
            let modified = Int64(status.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_mtim.tv_nsec)
            let changed = Int64(status.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_ctim.tv_nsec)
            for value in [
                UInt64(truncatingIfNeeded: status.st_size), UInt64(status.st_ino),
                UInt64(bitPattern: modified), UInt64(bitPattern: changed), UInt64(status.st_mode),
            ] {
                hash = Self.mixed(hash ^ value)
            }
            // A sum of per-entry hashes does not depend on the listing's order.
            digest &+= hash
            count += 1
            newest = max(newest, modified)
            newestChange = max(newestChange, modified, changed)
        }
        let fingerprint = FolderFingerprint(
            entryCount: count, newestModificationNanoseconds: count == 0 ? 0 : newest, digest: digest)
        return (fingerprint, newestChange)
    }

    /// SplitMix64's finaliser: every input bit moves about half the output bits.
    private static func mixed(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
