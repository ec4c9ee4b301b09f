import WorkoutModel

/// The live-mirror payload carried by the link's message channel (`sendMessage` only, both ways).
///
/// Encoded with `DocumentCoder.encodeCompact` (compact, sorted keys) and decoded with `decode(_:)`,
/// which refuses an unknown `schemaVersion` before reading anything else. Timestamps are `Timestamp`'s
/// ISO-8601 form with six fractional digits, so anchors keep their microseconds. Version 1:
///
/// ```
/// {"kind":"progress","progress":{"anchor":"2026-11-29T12:00:05.250000Z","countdownSeconds":5,
///  "exerciseName":"Squat","logID":"…","phase":"rest","restSeconds":90,"runID":"…","setCount":3,
///  "setIndex":0,"version":8},"schemaVersion":1}
/// {"ended":{"anchor":"2026-11-29T12:09:00.000000Z","runID":"…","version":9},"kind":"ended","schemaVersion":1}
/// ```
///
/// `phase` is one of `ready`, `work`, `rest`, `finish`. A frame that cannot describe a flow (set index
/// out of range, a rest after the last set, a version below 1, timings out of the settings' ranges) is
/// refused as malformed.
package enum LiveMessage: VersionedDocument {
    package static let currentSchemaVersion = 1

    /// A human action on the driving device: the flow's new phase.
    case progress(LiveProgress)
    /// The driving device closed the flow.
    case ended(LiveEnded)

    /// The run the message is about.
    package var runID: DocumentID {
        switch self {
        case .progress(let frame): frame.runID
        case .ended(let marker): marker.runID
        }
    }

    /// The ordering key.
    package var order: LiveOrder {
        switch self {
        case .progress(let frame): frame.order
        case .ended(let marker): marker.order
        }
    }

    package var version: Int { order.version }

    /// Whether `self` outranks `other` (`LiveOrder.isNewer`).
    package func isNewer(than other: LiveMessage) -> Bool { order.isNewer(than: other.order) }

    /// The wire bytes: compact JSON with sorted keys.
    package func encoded() -> [UInt8] { DocumentCoder.encodeCompact(self) }

    /// Decodes and validates wire bytes.
    package static func decode(_ bytes: [UInt8]) throws(DocumentError) -> LiveMessage {
        try DocumentCoder.decode(LiveMessage.self, from: bytes)
    }

    package func validate() throws(DocumentError) {
        switch self {
        case .progress(let frame):
            if let problem = frame.problem {
                throw .malformed(type: "LiveMessage", field: "progress.\(problem.field)", reason: problem.reason)
            }
        case .ended(let marker):
            if marker.version < 1 {
                throw .malformed(type: "LiveMessage", field: "ended.version", reason: "must be at least 1")
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion
        case kind
        case progress
        case ended
    }

    private enum Kind: String, Codable {
        case progress
        case ended
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.decode(Int.self, forKey: .schemaVersion)
        switch try container.decode(Kind.self, forKey: .kind) {
        case .progress: self = .progress(try container.decode(LiveProgress.self, forKey: .progress))
        case .ended: self = .ended(try container.decode(LiveEnded.self, forKey: .ended))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.currentSchemaVersion, forKey: .schemaVersion)
        switch self {
        case .progress(let frame):
            try container.encode(Kind.progress, forKey: .kind)
            try container.encode(frame, forKey: .progress)
        case .ended(let marker):
            try container.encode(Kind.ended, forKey: .kind)
            try container.encode(marker, forKey: .ended)
        }
    }
}
