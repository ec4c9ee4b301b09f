import COpenSSL
import DurableFiles
import Foundation
import LinkProtocol
import POSIX

/// The link's files on disk (`transferFile`): the outbox of files to send, and the files arriving.
///
/// ```
/// <state>/link/files/out/queue-id                 16 random bytes: the file queue's ID (a wiped outbox gets a new one)
/// <state>/link/files/out/<sequence, 20 digits>.data    the file's bytes, copied when it was queued
/// <state>/link/files/out/<sequence, 20 digits>.record  u64 size, SHA-256 32, metadata UTF-8, u32 CRC32C
/// <state>/link/files/in/<queue>-<sequence>.part   a file arriving: the bytes durably received so far
/// <inbox>/<queue>-<sequence>                      a whole, verified file the app has not taken yet
/// ```
/// A file is queued by copying it with `fdatasync` and hashing it on the way, then writing its
/// record atomically: a file without a record is a copy cut short and is deleted at start-up. A
/// partial grows by `pwrite` + `fdatasync` per chunk, so its size is what was acknowledged; a
/// verified file is renamed into the inbox (the directory fsynced). Every call runs on the loop
/// (a few MiB at most per file).
package final class FileTransferStore: Sendable {
    package let queue: InstanceID
    package let inbox: String
    private let outgoing: String
    private let incoming: String

    package init(linkDirectory: String, inbox: String) throws {
        outgoing = "\(linkDirectory)/files/out"
        incoming = "\(linkDirectory)/files/in"
        self.inbox = inbox
        for directory in [outgoing, incoming, inbox] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            _ = try AtomicFile.sweepTemporaryFiles(in: directory)
        }
        let queuePath = "\(outgoing)/queue-id"
        if let bytes = try AtomicFile.read(queuePath), let id = InstanceID(bytes: bytes) {
            queue = id
        } else {
            let fresh = try SecureRandom.bytes(count: InstanceID.byteCount)
            try AtomicFile.write(fresh, to: queuePath)
            queue = InstanceID(bytes: fresh)!
        }
        // A copy without its record was cut short by a crash before the caller heard of it.
        for name in try Self.names(in: outgoing) where name.hasSuffix(".data") {
            let record = "\(outgoing)/\(name.dropLast(5)).record"
            if !FileManager.default.fileExists(atPath: record) {
                try FileManager.default.removeItem(atPath: "\(outgoing)/\(name)")
            }
        }
    }

    // MARK: Sending

    /// Queues a copy of the file at `path` (or of `bytes`) under `sequence`, the link engine's
    /// number for it (by default the next one: tools and tests); returns it as the engine tracks
    /// it. Throws `LinkError.fileAccessDenied` when the source cannot be read, and
    /// `FileTransferStoreError.sequenceReused` for a number at or below one given before.
    package func enqueue(_ source: FileSource, metadata: String, sequence: UInt64? = nil) throws -> OutboundFile {
        let next = try nextSequence()
        let sequence = sequence ?? next
        guard sequence >= next else { throw FileTransferStoreError.sequenceReused(sequence, next: next) }
        let dataPath = path(sequence, "data")
        let copy = try FileDescriptor(opening: dataPath, [.writeOnly, .create, .truncate])
        var hash = SHA256()
        var size = 0
        do {
            switch source {
            case .bytes(let bytes):
                try copy.write(bytes, at: 0)
                hash.update(bytes)
                size = bytes.count
            case .file(let sourcePath):
                // The file as it was when sent: a source that grows meanwhile is cut at that size.
                let (input, length) = try Self.openSource(sourcePath)
                while size < length {
                    let chunk: [UInt8]
                    do {
                        chunk = try input.read(count: min(1 << 20, length - size), at: size)
                    } catch {
                        throw LinkError.fileAccessDenied(reason: "\(error)")
                    }
                    if chunk.isEmpty { break }
                    try copy.write(chunk, at: size)
                    hash.update(chunk)
                    size += chunk.count
                }
            }
            try copy.dataSync()
        } catch {
            try? FileManager.default.removeItem(atPath: dataPath)
            throw error
        }
        let file = OutboundFile(sequence: sequence, size: UInt64(size), digest: hash.finish(), metadata: metadata)
        var record: [UInt8] = []
        BigEndian.append(file.size, to: &record)
        record += file.digest + Array(metadata.utf8)
        BigEndian.append(CRC32C.checksum(record), to: &record)
        try AtomicFile.write(record, to: path(sequence, "record"))
        try writeLastSequence(sequence)
        return file
    }

    /// Opens a file to send: only a regular file, and without blocking (a FIFO would wait for a
    /// writer forever, holding the outbox thread; a device such as `/dev/zero` never ends).
    private static func openSource(_ path: String) throws -> (FileDescriptor, size: Int) {
        let input: FileDescriptor
        let status: FileStatus
        do {
            input = try FileDescriptor(opening: path, .nonBlocking)
            status = try input.status()
        } catch {
            throw LinkError.fileAccessDenied(reason: "\(error)")
        }
        guard status.kind == .regularFile else {
            throw LinkError.fileAccessDenied(reason: "\(path) is not a regular file")
        }
        return (input, status.size)
    }

    /// The files not yet done, oldest first.
    package func pending() throws -> [OutboundFile] {
        try pendingSequences().map { sequence in
            let recordPath = path(sequence, "record")
            guard let sealed = try AtomicFile.read(recordPath), sealed.count >= 44 else {
                throw StateFileError.malformed(file: recordPath, reason: "shorter than its 44-byte frame")
            }
            let body = Array(sealed.dropLast(4))
            guard CRC32C.checksum(body) == BigEndian.read(UInt32.self, from: sealed, at: sealed.count - 4),
                let metadata = String(validating: body[40...], as: UTF8.self)
            else { throw StateFileError.malformed(file: recordPath, reason: "checksum mismatch") }
            return OutboundFile(
                sequence: sequence, size: BigEndian.read(UInt64.self, from: body, at: 0), digest: Array(body[8..<40]),
                metadata: metadata)
        }
    }

    /// `length` bytes at `offset` of queued file `sequence`.
    package func read(sequence: UInt64, offset: UInt64, length: Int) throws -> [UInt8] {
        try FileDescriptor(opening: path(sequence, "data")).read(count: length, at: Int(offset))
    }

    /// Deletes a queued file (done or cancelled): its record first, so a crash leaves no half.
    package func remove(sequence: UInt64) throws {
        try? FileManager.default.removeItem(atPath: path(sequence, "record"))
        try? FileManager.default.removeItem(atPath: path(sequence, "data"))
        try AtomicFile.fsyncDirectory(outgoing)
    }

    // MARK: Receiving

    /// The partial files and how many bytes each holds.
    package func partials() throws -> [TransferKey: UInt64] {
        var found: [TransferKey: UInt64] = [:]
        for name in try Self.names(in: incoming) where name.hasSuffix(".part") {
            guard let key = Self.key(String(name.dropLast(5))) else { continue }
            let size = try FileManager.default.attributesOfItem(atPath: "\(incoming)/\(name)")[.size] as? UInt64
            found[key] = size ?? 0
        }
        return found
    }

    /// The verified files waiting in the inbox for the app.
    package func inboxFiles() throws -> Set<TransferKey> {
        Set(try Self.names(in: inbox).compactMap(Self.key))
    }

    /// Where a verified file waits for the app.
    package func inboxPath(_ key: TransferKey) -> String { "\(inbox)/\(Self.name(key))" }

    /// Creates the partial, or cuts it back to `keeping` bytes.
    package func prepare(_ key: TransferKey, keeping: UInt64) throws {
        let partial = try FileDescriptor(opening: partialPath(key), [.writeOnly, .create])
        try partial.truncate(to: Int(keeping))
        try partial.dataSync()
        try AtomicFile.fsyncDirectory(incoming)
    }

    /// Writes a chunk of a partial (not yet durable: `sync`).
    package func write(_ key: TransferKey, offset: UInt64, data: [UInt8]) throws {
        try FileDescriptor(opening: partialPath(key), [.writeOnly]).write(data, at: Int(offset))
    }

    /// Makes what was written to a partial durable; false when the partial is gone (cancelled).
    package func sync(_ key: TransferKey) throws -> Bool {
        let partial: FileDescriptor
        do {
            partial = try FileDescriptor(opening: partialPath(key), [.writeOnly])
        } catch {
            if error.errno == Errno.noSuchFile { return false }
            throw error
        }
        try LatencyRecorder.fsync.time { try partial.dataSync() }
        return true
    }

    /// The SHA-256 of the whole partial.
    package func digest(_ key: TransferKey) throws -> [UInt8] {
        let partial = try FileDescriptor(opening: partialPath(key))
        var hash = SHA256()
        var offset = 0
        while true {
            let chunk = try partial.read(count: 1 << 20, at: offset)
            if chunk.isEmpty { return hash.finish() }
            hash.update(chunk)
            offset += chunk.count
        }
    }

    /// Moves a verified partial into the inbox, durably.
    package func deliver(_ key: TransferKey) throws {
        try AtomicFile.moveDurably(partialPath(key), to: inboxPath(key))
    }

    /// Deletes what exists of the file: partial and inbox copy.
    package func discard(_ key: TransferKey) throws {
        try? FileManager.default.removeItem(atPath: partialPath(key))
        try? FileManager.default.removeItem(atPath: inboxPath(key))
        try AtomicFile.fsyncDirectory(incoming)
        try AtomicFile.fsyncDirectory(inbox)
    }

    // MARK: Names

    private func path(_ sequence: UInt64, _ suffix: String) -> String {
        let digits = String(sequence)
        return "\(outgoing)/\(String(repeating: "0", count: max(0, 20 - digits.count)))\(digits).\(suffix)"
    }

    private func partialPath(_ key: TransferKey) -> String { "\(incoming)/\(Self.name(key)).part" }

    private static func name(_ key: TransferKey) -> String { "\(key.queue)-\(key.sequence)" }

    private static func key(_ name: String) -> TransferKey? {
        let parts = name.split(separator: "-")
        guard parts.count == 2, let queue = InstanceID(hex: String(parts[0])), let sequence = UInt64(parts[1]) else {
            return nil
        }
        return TransferKey(queue: queue, sequence: sequence)
    }

    private func pendingSequences() throws -> [UInt64] {
        try Self.names(in: outgoing).filter { $0.hasSuffix(".record") }.compactMap { UInt64($0.dropLast(7)) }.sorted()
    }

    /// The sequence the next file gets: past every pending one and the last ever given.
    package func nextSequence() throws -> UInt64 {
        max(try pendingSequences().last ?? 0, try lastSequence()) + 1
    }

    /// The last sequence ever given (`last-sequence`), so a sequence is never reused after its file is done.
    private func lastSequence() throws -> UInt64 {
        try AtomicFile.read("\(outgoing)/last-sequence").flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
    }

    private func writeLastSequence(_ sequence: UInt64) throws {
        try AtomicFile.write(Array(String(sequence).utf8), to: "\(outgoing)/last-sequence")
    }

    private static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
    }
}

/// SHA-256 through libcrypto's EVP interface, fed in pieces.
package struct SHA256 {
    private let context: OpaquePointer

    package init() {
        // EVP_MD_CTX_new fails only when memory is exhausted; nothing sensible can go on then.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        self.context = context
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// The digest; the hasher is spent.
    package func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        EVP_MD_CTX_free(context)
        return output
    }
}

/// Why the file outbox refused a file.
package enum FileTransferStoreError: Error, Equatable, CustomStringConvertible {
    /// The number is at or below one the outbox gave before (sequences are never reused).
    case sequenceReused(UInt64, next: UInt64)

    package var description: String {
        switch self {
        case .sequenceReused(let sequence, let next):
            "file sequence \(sequence) was given before: the file outbox holds \(next) next"
        }
    }
}
