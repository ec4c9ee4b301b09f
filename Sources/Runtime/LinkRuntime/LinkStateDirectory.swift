import DurableFiles
import Foundation
import LinkProtocol
import POSIX

/// The link's durable state under a daemon's state directory, and how it is read back at start-up.
///
/// ```
/// <state>/instance-id              this daemon's instance ID, 32 hex digits (kept for life; wiped = new)
/// <state>/starts                   how many times the directory was opened (daemon starts), decimal
/// <state>/link/peer                the paired peer's instance ID, 32 hex digits (activation survives restart)
/// <state>/link/context-slot        phone: u64 generation, u64 acknowledged generation, payload (a RecordFile)
/// <state>/link/received-context    watch: 16-byte sender, u64 generation, payload (a RecordFile)
/// <state>/link/transfer-marks      receiver's dedup marks (ReceivedTransfers)
/// <state>/link/outbox/             sender's durable transferUserInfo queue (TransferLog)
/// ```
/// The two contexts, rewritten on every push, are `RecordFile`s: two halves written in turn in place.
/// Every other file is replaced atomically (AtomicFile); integers are big-endian. A file that exists
/// but does not parse stops start-up with an error naming it: never a silent reset. Two exceptions,
/// which `recoveryNotes` reports:
/// - a damaged `received-context` (either half) is renamed `received-context.damaged` and the watch
///   carries on (its cache holds what it applied; with no context since start it asks the phone for
///   a fresh push);
/// - a context slot whose other half is damaged (a write a crash cut short, or damage) is read with
///   its generation one higher: the lost write could have been sent, so the next push must not
///   reuse its generation.
package final class LinkStateDirectory: Sendable {
    package let root: String
    package let instance: InstanceID
    package let outbox: TransferLog
    /// The complication outbox (`transferCurrentComplicationUserInfo`; only the phone appends to it).
    package let complicationOutbox: TransferLog
    /// The files sent and arriving (`transferFile`); the inbox is `<state>/inbox`.
    package let files: FileTransferStore
    package let receivedTransfers: ReceivedTransfers
    /// What opening had to repair or set aside, one line each, for the daemon's log.
    package let recoveryNotes: [String]
    /// How many times this state directory has been opened, this time included: the daemon's
    /// restarts over the directory's life (`metrics` reports it as `watchsync_starts_total`).
    /// Counted in `<state>/starts`, which a wiped directory loses along with its instance ID.
    package let starts: Int
    /// The daemon before this one stopped cleanly: the context slot on disk is the last one it made.
    package let slotCurrent: Bool

    private var linkDirectory: String { "\(root)/link" }
    private var peerPath: String { "\(linkDirectory)/peer" }
    private let slotFile: RecordFile
    private let receivedFile: RecordFile
    private var watchStatePath: String { "\(linkDirectory)/watch-state" }
    private var stoppedPath: String { "\(linkDirectory)/\(Self.stoppedName)" }
    private static let stoppedName = "context-slot.stopped"

    /// Opens (creating when absent) the state under `root`. `newInstanceBytes` supplies 16 random
    /// bytes when the directory has no instance ID yet.
    package init(
        root: String, outboxConfiguration: TransferLog.Configuration = .init(),
        newInstanceBytes: () throws -> [UInt8]
    ) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: "\(root)/link/outbox", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: "\(root)/link/complication-outbox", withIntermediateDirectories: true)
        try AtomicFile.sweepTemporaryFiles(in: root)
        try AtomicFile.sweepTemporaryFiles(in: "\(root)/link")
        let instancePath = "\(root)/instance-id"
        if let bytes = try AtomicFile.read(instancePath) {
            instance = try Self.parseInstance(bytes, file: instancePath)
        } else {
            guard let fresh = InstanceID(bytes: try newInstanceBytes()) else {
                preconditionFailure("newInstanceBytes must return \(InstanceID.byteCount) bytes")
            }
            try AtomicFile.write(Array("\(fresh)\n".utf8), to: instancePath)
            instance = fresh
        }
        outbox = try TransferLog(directory: "\(root)/link/outbox", configuration: outboxConfiguration)
        complicationOutbox = try TransferLog(
            directory: "\(root)/link/complication-outbox", configuration: outboxConfiguration)
        receivedTransfers = try ReceivedTransfers(path: "\(root)/link/transfer-marks")
        files = try FileTransferStore(linkDirectory: "\(root)/link", inbox: "\(root)/inbox")
        slotFile = RecordFile(path: "\(root)/link/context-slot")
        receivedFile = RecordFile(path: "\(root)/link/received-context")
        var notes = outbox.recoveryNotes + complicationOutbox.recoveryNotes
        if let damage = try Self.setAsideIfDamaged(receivedFile) { notes.append(damage) }
        if try slotFile.read()?.otherHalfDamaged == true {
            notes.append(
                "the context slot's other half was damaged (a write cut short); its generation is taken one higher")
        }
        recoveryNotes = notes
        // Gone before anything this start writes: a crash later leaves no mark that it stopped cleanly.
        slotCurrent = try FileSystem.removeFileIfPresent("\(root)/link/\(Self.stoppedName)")
        if slotCurrent { try AtomicFile.fsyncDirectory("\(root)/link") }
        // Last, so a start-up refused above does not count.
        starts = try Self.countStart(path: "\(root)/starts")
    }

    /// Adds this start to the count in `path` (absent: none before) and returns the new count. The
    /// count is replaced atomically, so a crash leaves the old or the new one, never a torn file.
    private static func countStart(path: String) throws -> Int {
        var previous = 0
        if let bytes = try AtomicFile.read(path) {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let count = Int(text), count >= 0 else {
                throw StateFileError.malformed(
                    file: path, reason: "expected a decimal count, found \(text.prefix(40).debugDescription)")
            }
            previous = count
        }
        let starts = previous == Int.max ? previous : previous + 1
        try AtomicFile.write(Array("\(starts)\n".utf8), to: path)
        return starts
    }

    /// Renames a received context that does not parse, or has a damaged half, to `<name>.damaged`
    /// (kept for a post-mortem); returns what was done, or nil when the file is absent or whole.
    private static func setAsideIfDamaged(_ file: RecordFile) throws -> String? {
        let path = file.path
        do {
            guard let contents = try file.read() else { return nil }
            _ = try parseReceivedContext(contents.record, file: path)
            if contents.otherHalfDamaged {
                throw StateFileError.malformed(file: path, reason: "one half damaged (a write cut short)")
            }
            return nil
        } catch {
            do {
                try FileSystem.rename(path, to: "\(path).damaged")
            } catch {
                throw SystemCallError(call: "rename", errno: error.errno, path: path)
            }
            try AtomicFile.fsyncDirectory((path as NSString).deletingLastPathComponent)
            return "set aside a damaged received context (\(error)) as \(path).damaged; "
                + "the cache keeps what was applied and a fresh push is requested once the phone is reachable"
        }
    }

    /// Everything the link engine needs from disk.
    package func restore() throws -> RestoredLinkState {
        var marks: [InstanceID: QueueMark] = [:]
        for (queue, mark) in receivedTransfers.allMarks {
            if let id = InstanceID(bytes: queue) { marks[id] = mark }
        }
        guard let queue = InstanceID(bytes: outbox.queueID) else {
            throw StateFileError.malformed(file: "\(root)/link/outbox/queue-id", reason: "not 16 bytes")
        }
        return RestoredLinkState(
            knownPeer: try AtomicFile.read(peerPath).map { try Self.parseInstance($0, file: peerPath) },
            contextSlot: try readSlot(), receivedContext: try readReceivedContext(), transferMarks: marks,
            outboxQueue: queue,
            pendingTransfers: outbox.pending().map { (sequence: $0.sequence, payload: $0.payload) },
            nextOutboxSequence: outbox.nextSequence, watchState: try readWatchState(),
            complicationQueue: InstanceID(bytes: complicationOutbox.queueID),
            pendingComplications: complicationOutbox.pending().map { (sequence: $0.sequence, payload: $0.payload) },
            nextComplicationSequence: complicationOutbox.nextSequence, fileQueue: files.queue,
            pendingFiles: try files.pending(), nextFileSequence: try files.nextSequence(),
            inboundPartials: try files.partials(), inboxFiles: try files.inboxFiles(), contextSlotCurrent: slotCurrent
        )
    }

    /// The watch state (`<state>/link/watch-state`: the flags byte, CRC32C).
    package func persist(_ state: WatchState) throws {
        try AtomicFile.write(RecordFile.sealed([state.flags]), to: watchStatePath)
    }

    private func readWatchState() throws -> WatchState? {
        guard let sealed = try AtomicFile.read(watchStatePath) else { return nil }
        let bytes = try RecordFile.unsealed(sealed, file: watchStatePath)
        guard bytes.count == 1, let state = WatchState(flags: bytes[0]) else {
            throw StateFileError.malformed(file: watchStatePath, reason: "expected one flags byte with bits 0-2 only")
        }
        return state
    }

    package func persistPeer(_ peer: InstanceID) throws {
        try AtomicFile.write(Array("\(peer)\n".utf8), to: peerPath)
    }

    /// Marks a clean stop, once every write has landed: the context slot is flushed, then a mark left
    /// beside it, which the next start takes away (`slotCurrent`); nothing when there is no slot.
    package func markStoppedCleanly() throws {
        guard (try? FileStatus(of: slotFile.path)) != nil else { return }
        try AtomicFile.sync(slotFile.path)
        try AtomicFile.write([], to: stoppedPath)
    }

    /// Writes the context slot; without `flushed`, leaves it to the page cache (`RecordFile`).
    package func persist(_ slot: ContextSlot, flushed: Bool = true) throws {
        var bytes: [UInt8] = []
        BigEndian.append(slot.generation, to: &bytes)
        BigEndian.append(slot.acknowledgedGeneration, to: &bytes)
        bytes += slot.payload
        try slotFile.write(bytes, flushed: flushed)
    }

    package func persist(_ received: ReceivedContext) throws {
        var bytes = received.sender.bytes
        BigEndian.append(received.generation, to: &bytes)
        bytes += received.payload
        try receivedFile.write(bytes)
    }

    /// The last received context, as `receivedApplicationContext` (also readable with the daemon down).
    package func readReceivedContext() throws -> ReceivedContext? {
        try receivedFile.read().map { try Self.parseReceivedContext($0.record, file: receivedFile.path) }
    }

    private static func parseReceivedContext(_ bytes: [UInt8], file: String) throws -> ReceivedContext {
        guard bytes.count >= 24, let sender = InstanceID(bytes: bytes[0..<16]) else {
            throw StateFileError.malformed(file: file, reason: "shorter than its 24-byte header")
        }
        return ReceivedContext(
            sender: sender, generation: BigEndian.read(UInt64.self, from: bytes, at: 16), payload: Array(bytes[24...]))
    }

    private func readSlot() throws -> ContextSlot? {
        guard let contents = try slotFile.read() else { return nil }
        let bytes = contents.record
        guard bytes.count >= 16 else {
            throw StateFileError.malformed(file: slotFile.path, reason: "shorter than its 16-byte header")
        }
        let generation = BigEndian.read(UInt64.self, from: bytes, at: 0)
        return ContextSlot(
            generation: contents.otherHalfDamaged && generation < .max ? generation + 1 : generation,
            payload: Array(bytes[16...]),
            acknowledgedGeneration: BigEndian.read(UInt64.self, from: bytes, at: 8))
    }

    private static func parseInstance(_ bytes: [UInt8], file: String) throws -> InstanceID {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let id = InstanceID(hex: text) else {
            throw StateFileError.malformed(
                file: file, reason: "expected 32 hex digits, found \(text.prefix(40).debugDescription)")
        }
        return id
    }
}
