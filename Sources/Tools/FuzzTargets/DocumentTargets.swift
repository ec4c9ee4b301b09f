import Foundation
import WatchEngine
import WorkoutModel

/// `DocumentCoder.decode` of any bytes as each document type the daemons read from disk or the wire.
///
/// Properties: a document that decodes re-encodes (disk and wire forms) to bytes that decode to an
/// equal value, and encoding that value again gives the same bytes; a refusal explains itself. What
/// the hand reader (`JSONReader`) reads of a run or a workout update, or of a message's `kind`
/// (`MessageKind`), `JSONDecoder` reads to the same value.
enum DocumentCoderTarget {
    static func check(_ input: inout FuzzInput) throws {
        let selector = input.byte()
        let bytes = input.rest()
        switch selector % 7 {
        case 0: try roundTrip(SplitDocument.self, bytes)
        case 1:
            try sameAsJSONDecoder(WorkoutDocument.self, bytes)
            try roundTrip(WorkoutDocument.self, bytes)
        case 2: try roundTrip(Tombstone.self, bytes)
        case 3: try roundTrip(Settings.self, bytes)
        case 4: try roundTrip(ApplicationContext.self, bytes)
        case 5:
            try sameKindAsJSONDecoder(bytes)
            try sameAsJSONDecoder(WatchToPhoneMessage.self, bytes)
            try roundTrip(WatchToPhoneMessage.self, bytes)
        default: try roundTrip(WorkoutLaunchRequest.self, bytes)
        }
    }

    /// `DocumentCoder.decode` reads these types by hand first; `JSONDecoder` is the reference.
    static func sameAsJSONDecoder<T: VersionedDocument & ReadByHand>(_ type: T.Type, _ bytes: [UInt8]) throws {
        guard let read = T.read(bytes) else { return }
        let reference = try? JSONDecoder().decode(T.self, from: Data(bytes))
        try require(reference == read, "the hand reader read \(T.self) bytes JSONDecoder reads otherwise")
    }

    /// `MessageKind` reads a message's `kind` by hand where it can; `JSONDecoder` is the reference.
    static func sameKindAsJSONDecoder(_ bytes: [UInt8]) throws {
        guard let read = MessageKind.readByHand(bytes) else { return }
        struct Probe: Decodable { var kind: String? }
        let reference = try? JSONDecoder().decode(Probe.self, from: Data(bytes)).kind
        try require(reference == read, "the kind read by hand is not the one JSONDecoder reads")
    }

    /// Decodes `bytes` as `T` and checks the round trips; `nil` when it was refused.
    @discardableResult
    static func roundTrip<T: VersionedDocument>(_ type: T.Type, _ bytes: [UInt8]) throws -> T? {
        let value: T
        do throws(DocumentError) {
            value = try DocumentCoder.decode(T.self, from: bytes)
        } catch {
            try require(!error.description.isEmpty, "a refusal without a reason")
            return nil
        }
        for encoded in [DocumentCoder.encodeForDisk(value), DocumentCoder.encodeCompact(value)] {
            let again: T
            do throws(DocumentError) {
                again = try DocumentCoder.decode(T.self, from: encoded)
            } catch {
                throw PropertyViolation(description: "a decoded \(T.self) re-encodes to bytes it refuses: \(error)")
            }
            try require(again == value, "a decoded \(T.self) changes on a round trip")
            try require(DocumentCoder.encodeCompact(again) == DocumentCoder.encodeCompact(value), "unstable encoding")
        }
        return value
    }
}

/// The watch's handling of a pushed application context or launch request: any bytes, applied to a
/// cache that already holds a pushed state.
///
/// Properties: bytes that do not decode leave the cache exactly as it was and write nothing; a context
/// that decodes makes the pushed splits, settings and locks authoritative, and applying it a second
/// time changes nothing and writes nothing.
enum WatchContextTarget {
    static func check(_ input: inout FuzzInput) throws {
        let now = Timestamp(microsecondsSinceEpoch: 1_796_000_000_000_000)
        var engine = WatchEngine()
        _ = engine.handle(.contextReceived(FuzzSeeds.context, now: now))
        let launch = input.bool()
        let bytes = input.rest()
        let before = engine.cache
        if launch {
            let actions = engine.handle(.launchReceived(payload: bytes, now: now))
            if (try? DocumentCoder.decode(WorkoutLaunchRequest.self, from: bytes)) == nil {
                try require(
                    engine.cache == before && !actions.contains(where: \.writesCache), "a bad launch changed the cache")
            }
            return
        }
        let first = engine.handle(.contextReceived(bytes, now: now))
        guard let context = try DocumentCoderTarget.roundTrip(ApplicationContext.self, bytes) else {
            try require(engine.cache == before, "an undecodable context changed the cache")
            try require(!first.contains(where: \.writesCache), "an undecodable context wrote cache files")
            return
        }
        try require(
            Set(engine.cache.splits.keys) == Set(context.splits.map(\.id)), "pushed splits are not authoritative")
        try require(engine.cache.settings == context.settings, "pushed settings were not applied")
        try require(engine.cache.editLocks == context.editLocks, "pushed locks were not applied")
        let applied = engine.cache
        let second = engine.handle(.contextReceived(bytes, now: now))
        try require(engine.cache == applied, "applying the same context twice changed the cache")
        try require(!second.contains(where: \.writesCache), "applying the same context twice wrote cache files")
    }
}

extension WatchEngine.Action {
    /// Whether the action writes or deletes a cache file of a run or split.
    var writesCache: Bool {
        switch self {
        case .persistWorkout, .deleteWorkout, .persistSplit, .deleteSplit: true
        default: false
        }
    }
}
