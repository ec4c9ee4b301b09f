/// How a file transfer ended at the receiver: the code of a `fileDone` frame (kind 0x63), two
/// bytes big-endian. An unknown code makes the frame malformed.
package enum FileOutcomeCode: UInt16, Sendable, CustomStringConvertible {
    /// The file arrived whole, its digest matched, and the receiving app has processed it.
    case delivered = 0
    /// The file does not fit the receiver's inbox quota (`LinkError.insufficientSpace`, a name of this
    /// project's: `WCError` has no file-quota code).
    case insufficientSpace = 1
    /// The bytes that arrived do not match the offered digest (WCError `deliveryFailed`).
    case deliveryFailed = 2

    package var description: String {
        switch self {
        case .delivered: "delivered"
        case .insufficientSpace: "insufficientSpace"
        case .deliveryFailed: "deliveryFailed"
        }
    }
}

/// One file in the sender's durable file outbox (`transferFile`), as the engine tracks it.
package struct OutboundFile: Equatable, Sendable {
    package var sequence: UInt64
    package var size: UInt64
    /// SHA-256 of the whole file, computed when it entered the outbox.
    package var digest: [UInt8]
    /// The app's metadata (a JSON object, checked by the app before it queued the file).
    package var metadata: String
    /// Bytes the receiver reported holding durably (`progress` = acknowledged / size).
    package var acknowledged: UInt64 = 0
    /// Offered on the current link.
    var offered = false
    /// The next byte to put on the wire on the current link (only past a `fileResume`).
    var nextOffset: UInt64?

    package init(sequence: UInt64, size: UInt64, digest: [UInt8], metadata: String, acknowledged: UInt64 = 0) {
        self.sequence = sequence
        self.size = size
        self.digest = digest
        self.metadata = metadata
        self.acknowledged = acknowledged
    }
}

/// A file the receiver verified and put in its inbox; the app takes it, then reports it processed.
package struct ReceivedFile: Equatable, Sendable {
    package var key: TransferKey
    package var size: UInt64
    package var metadata: String

    package init(key: TransferKey, size: UInt64, metadata: String) {
        self.key = key
        self.size = size
        self.metadata = metadata
    }
}

/// A file arriving: what was offered and how much of it is durably on disk.
struct InboundFile: Equatable, Sendable {
    enum Stage: Equatable, Sendable {
        /// Chunks are arriving; `received` bytes are on disk.
        case receiving
        /// Whole; the shell is checking the digest.
        case verifying
        /// In the inbox, handed to the app, waiting for it to report the file processed.
        case delivered
    }

    var size: UInt64
    var digest: [UInt8]
    var metadata: String
    /// Bytes written to the partial (in order); `durable` of them are synced and acknowledged.
    var received: UInt64
    var durable: UInt64
    var stage: Stage
}

/// What `transferFile` sends: a file on disk (copied into the outbox), or bytes the app made.
package enum FileSource: Equatable, Sendable {
    case file(path: String)
    case bytes([UInt8])
}
