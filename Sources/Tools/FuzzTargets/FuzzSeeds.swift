import AdminCommands
import DaemonConfiguration
import DaemonRuntime
import DurableFiles
import Foundation
import LinkProtocol
import PhoneStore
import WorkoutModel

/// Valid starting inputs for each target, built with the project's own encoders so they track the
/// formats: `scripts/fuzz` starts an empty corpus from these, and the corpus replay checks them too.
package enum FuzzSeeds {
    package static func inputs(for target: FuzzTarget) -> [[UInt8]] {
        switch target {
        case .frameDecoder:
            return [[0x00, 0x10, 1, 7, 64, 3, 2, 5, 9, 1] + sampleFrames.flatMap { $0.encoded() }]
        case .handshakeDialer, .handshakeListener:
            // Three nonces, then: the honest exchange; an impostor first; a forged frame; a deadline.
            let nonces = (1...96).map { UInt8($0) }
            return [
                nonces + [0, 0, 0, 0], nonces + [1, 0, 1, 0],
                nonces + [2, 0x03, 32] + [UInt8](repeating: 9, count: 32), nonces + [3],
            ]
        case .linkEngine:
            var ops: [UInt8] = []
            // Every frame but the handshake's and the closing error, then the shell's part for the
            // file that arrived (its sync, its digest, the app processing it), then the error.
            for frame in sampleFrames.dropFirst(4).dropLast() {
                let bytes = frame.encoded()
                ops += [1, bytes[4]] + chunk(Array(bytes[5...]))
            }
            ops += [7, 1, 7, 2, 1, 7, 3]
            if let closing = sampleFrames.last?.encoded() { ops += [1, closing[4]] + chunk(Array(closing[5...])) }
            ops +=
                [3, 0x03, 0xE8, 4] + chunk(Array("ctx".utf8)) + [0, 5] + chunk([1]) + [1, 6] + chunk([2]) + [
                    7, 0, 7, 1,
                ]
            let nonces = (1...64).map { UInt8($0) }
            return [[0] + nonces + ops, [1] + nonces + ops]
        case .transferLog:
            let record: [UInt8] = [0] + chunk(Array("payload".utf8)) + [7]
            return [
                [1 | 4] + [UInt8](repeating: 0xAB, count: 16) + [0, 0] + [1, 1, 3] + record + record + [3, 5]
                    + chunk([9]),
                [1 | 4] + [UInt8](repeating: 0xAB, count: 16) + [1, 0] + [2, 1, 2] + record + record + [3, 2] + record,
            ]
        case .stateFiles:
            let flags: UInt16 = 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 | 0x100 | 0x200
            return [
                [UInt8(flags >> 8), UInt8(flags & 0xFF)] + [UInt8](repeating: 0x10, count: 16)
                    + [UInt8](repeating: 0x20, count: 16) + chunk([UInt8](repeating: 0, count: 15) + [1, 9, 9])
                    + chunk([UInt8](repeating: 0x30, count: 16) + [0, 0, 0, 0, 0, 0, 0, 2, 7]) + [1, 16]
                    + [UInt8](repeating: 0x40, count: 16) + [0, 0, 0, 0, 0, 0, 0, 3]
            ]
        case .documentCoder:
            return documents.enumerated().map { [UInt8($0.offset)] + $0.element }
        case .watchContext:
            return [[0] + context, [1] + DocumentCoder.encodeCompact(WorkoutLaunchRequest(runID: run.id))]
        case .config:
            var phoned = PhonedConfiguration.defaults
            (phoned.documentsDirectory, phoned.stateDirectory, phoned.pairingKeyFile) = ("d", "s", "k")
            (phoned.adminSocket, phoned.link.maximumFrameBytes, phoned.logLevel) = ("a", 4096, .debug)
            var watchd = WatchdConfiguration.defaults
            (watchd.cacheDirectory, watchd.stateDirectory, watchd.pairingKeyFile) = ("c", "s", "k")
            (watchd.adminSocket, watchd.phoneAddress) = ("a", NetworkAddress(host: "::1", port: 7420))
            watchd.link.heartbeatInterval = .milliseconds(250)
            return [[0] + Array(phoned.fileText.utf8), [1] + Array(watchd.fileText.utf8)]
        case .adminRequest:
            return [
                AdminWire.encode(PhoneCommand.status), AdminWire.encode(PhoneCommand.discard(run: run.id)),
                AdminWire.encode(WatchCommand.status),
                // What the hand reader takes (`AdminRequestReader`).
                AdminWire.encode(
                    WatchCommand.set(.complete(run: run.id, exercise: 1, set: 2, reps: 5, weight: 102.5))),
                AdminWire.encode(PhoneCommand.set(.undo(run: run.id, exercise: 2, set: 1))),
                AdminWire.encode(WatchCommand.waitSynced(milliseconds: 10_000)),
            ]
        case .phoneDirectory:
            let month = DocumentFolder.month(of: run.startedAt)
            guard case .month(let year, let number) = month else { return [] }
            let date: [UInt8] = [UInt8(year >> 8), UInt8(year & 0xFF), UInt8(number - 1)]
            func named(_ id: DocumentID) -> [UInt8] { chunk(Array("\(id.rawValue).json".utf8)) }
            return [
                [1] + date + named(split.id) + DocumentCoder.encodeForDisk(split),
                [5] + date + named(run.id) + DocumentCoder.encodeForDisk(run),
                [2] + date + named(stub.id) + DocumentCoder.encodeForDisk(stub),
            ]
        case .runIndex:
            // Two folders: the sample run active in one, completed copies of it in the other; then
            // the same with the second folder retired.
            var ended = run
            try? ended.endKeepingProgress(at: Stamp(time: run.startedAt.advanced(by: .seconds(3_600)), origin: .phone))
            let completed = (1...3).map { n in
                var summary = RunIndex.RunSummary(ended)
                summary.id = DocumentID(bytes: [UInt8](repeating: UInt8(n), count: 16))
                return summary
            }
            let fingerprint = FolderFingerprint(entryCount: 3, newestModificationNanoseconds: 1, digest: 2)
            let payload = RunIndexSnapshot(
                root: "/Documents",
                folders: [
                    "Workouts/2026/10": .init(fingerprint: fingerprint, runs: [RunIndex.RunSummary(run)], skipped: []),
                    "Workouts/2026/11": .init(
                        fingerprint: fingerprint, runs: completed,
                        skipped: [.init(path: "Workouts/2026/11/notes.txt", reason: "not a document")]),
                ]
            ).encoded()
            return [[0, 0, 0, 0] + payload, [0, 0, 0, 2] + payload]
        case .pendingFiles:
            // Files a and b; entries: a as its file is now (put back), c new; then damage, a hostile
            // path, and a file in a folder that is not there (refused).
            let text = { (text: String) in chunk(Array(text.utf8)) }
            let hostile = PendingFiles.record(["../escape.json": PendingFiles.Entry(bytes: [1], before: nil)])
            return [
                [1] + text("old a") + [1] + text("old b") + [0, 0, 2, 2] + [0, 1] + text("new a") + [2, 0]
                    + text("new c"),
                [0, 0, 0, 0, 0] + text("garbage"), [0, 0, 0, 0, 1] + chunk(hostile),
                [0, 0, 0, 0, 2, 1, 3, 0] + text("d"),
            ]
        }
    }

    /// The application context the watch-context target applies before the input's.
    static let context = DocumentCoder.encodeCompact(
        ApplicationContext(
            splits: [split], workouts: [run], settings: Settings(restSeconds: 60), editLocks: EditLocks()))

    static let split = SplitDocument(
        id: DocumentID(bytes: [UInt8](repeating: 0x51, count: 16)), name: "Legs",
        exercises: [
            ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 2, targetReps: 5, targetWeight: 100)
        ],
        updatedAt: Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000))
    static let run =
        (try? WorkoutDocument.start(
            from: split, id: DocumentID(bytes: [UInt8](repeating: 0x52, count: 16)),
            at: Stamp(time: Timestamp(microsecondsSinceEpoch: 1_795_000_100_000_000), origin: .phone)))!
    static let stub = Tombstone(
        id: DocumentID(bytes: [UInt8](repeating: 0x53, count: 16)), kind: .workout,
        deletedAt: Timestamp(microsecondsSinceEpoch: 1_795_000_200_000_000))

    /// One encoded document per `DocumentCoderTarget` selector, in selector order.
    static var documents: [[UInt8]] {
        [
            DocumentCoder.encodeForDisk(split), DocumentCoder.encodeForDisk(run), DocumentCoder.encodeForDisk(stub),
            DocumentCoder.encodeForDisk(Settings()), context, WatchToPhoneMessage.workoutUpdate(run).encoded(),
            WorkoutLaunchRequest(runID: run.id).encoded(),
        ]
    }

    /// One frame of every kind.
    static let sampleFrames: [LinkFrame] = {
        let id = InstanceID(bytes: [UInt8](repeating: 0x61, count: 16))!
        let bytes32 = [UInt8](repeating: 0x62, count: 32)
        return [
            .hello(version: 1, role: .watch, instance: id, nonce: bytes32),
            .challenge(version: 1, role: .phone, instance: id, nonce: bytes32, proof: bytes32),
            .proof(bytes32), .welcome, .ping(token: 1), .pong(token: 1),
            .context(generation: 1, sender: id, payload: context), .contextAck(generation: 1, sender: id),
            .message(id: 1, wantsReply: true, payload: WatchToPhoneMessage.requestSync.encoded()),
            .messageReply(id: 1, payload: [1]), .messageDelivered(id: 1),
            .messageFailed(id: 1, code: .deliveryFailed, reason: "none"),
            .userInfo(queue: id, sequence: 1, payload: [2]), .userInfoAck(queue: id, sequence: 1),
            .launch(payload: [3]), .appState(.foreground),
            .messageData(id: 2, wantsReply: true, payload: [4]),
            .fileOffer(TransferKey(queue: id, sequence: 1), size: 3, digest: bytes32, metadata: "{}"),
            .fileChunk(TransferKey(queue: id, sequence: 1), offset: 0, data: [1, 2, 3]),
            .fileResume(TransferKey(queue: id, sequence: 1), offset: 0),
            .fileDone(TransferKey(queue: id, sequence: 1), code: .delivered, reason: ""),
            .error(code: .protocolViolation, reason: "bye"),
        ]
    }()

    /// A chunk as `FuzzInput.chunk()` reads it.
    static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        bytes.count < 0xFF
            ? [UInt8(bytes.count)] + bytes
            : [0xFF, UInt8((bytes.count - 0xFF) >> 8), UInt8((bytes.count - 0xFF) & 0xFF)] + bytes
    }
}
