import FoundationEssentials

/// The phone's encoder of pushes: the same bytes as `DocumentCoder.encodeCompact(context)`, assembled
/// from each run's own compact encoding (kept per run while the run is unchanged) and the encoding of
/// the rest (the frame: the context with no runs, kept for the last few frames).
///
/// A push is mostly runs that did not change since the last one, and encoding every run of every push
/// was most of the phone's work per edit. Sorted keys put `workouts` last, so a context's encoding is
/// its frame's with the runs' encodings, comma-separated, between the frame's `"workouts":[` and its
/// closing `]}`; a frame that does not end that way is encoded whole instead.
///
/// A run is reused when it is `==` to the copy it was encoded from: values Swift calls equal (a string
/// in another Unicode normalization, a zero of the other sign) encode alike here, as a push equal to
/// the last one is already not sent at all.
package struct ContextEncoder: Sendable {
    private var runs: [DocumentID: (run: WorkoutDocument, bytes: [UInt8])] = [:]
    /// The frames encoded last, the newest last (a push encodes one or two).
    private var frames: [(frame: ApplicationContext, bytes: [UInt8])] = []
    private static let keptFrames = 4

    package init() {}

    /// The run's compact encoding (`DocumentCoder.encodeCompact(run)`), from the cache when the run is
    /// unchanged since it was encoded.
    package mutating func bytes(of run: WorkoutDocument) -> [UInt8] {
        if let cached = runs[run.id], cached.run == run { return cached.bytes }
        let bytes = DocumentCoder.encodeCompact(run)
        runs[run.id] = (run, bytes)
        return bytes
    }

    /// The compact encoding of `frame` (a context whose runs are left out, as `ApplicationContext.build`
    /// sizes them).
    package mutating func bytes(ofFrame frame: ApplicationContext) -> [UInt8] {
        if let index = frames.lastIndex(where: { $0.frame == frame }) { return frames[index].bytes }
        let bytes = DocumentCoder.encodeCompact(frame)
        frames.append((frame, bytes))
        if frames.count > Self.keptFrames { frames.removeFirst() }
        return bytes
    }

    /// The size of the run's compact encoding, from the cache when the run is unchanged since it was
    /// encoded (the cache is left as it is).
    package func size(of run: WorkoutDocument) -> Int {
        if let cached = runs[run.id], cached.run == run { return cached.bytes.count }
        return DocumentCoder.encodeCompact(run).count
    }

    /// The size of the frame's compact encoding, from the cache when it was encoded lately.
    package func size(ofFrame frame: ApplicationContext) -> Int {
        if let index = frames.lastIndex(where: { $0.frame == frame }) { return frames[index].bytes.count }
        return DocumentCoder.encodeCompact(frame).count
    }

    /// `DocumentCoder.encodeCompact(context)`, byte for byte.
    package mutating func encode(_ context: ApplicationContext) -> [UInt8] {
        var frame = context
        frame.workouts = []
        let frameBytes = bytes(ofFrame: frame)
        let tail = Array(#""workouts":[]}"#.utf8)
        guard frameBytes.count > tail.count, frameBytes.suffix(tail.count).elementsEqual(tail) else {
            return DocumentCoder.encodeCompact(context)
        }
        var encoded = Array(frameBytes.dropLast(2))
        for (position, run) in context.workouts.enumerated() {
            if position > 0 { encoded.append(UInt8(ascii: ",")) }
            encoded += bytes(of: run)
        }
        encoded += frameBytes.suffix(2)
        return encoded
    }

    /// Forgets the runs `keep` refuses (those no push can carry any more).
    package mutating func keepRuns(where keep: (DocumentID) -> Bool) {
        runs = runs.filter { keep($0.key) }
    }
}

/// The watch's decoder of pushes: the same value, or the same error, as
/// `DocumentCoder.decode(ApplicationContext.self, from:)`, decoding only what changed since the last
/// context it decoded.
///
/// The bytes are split at the top level (the `workouts` array's elements, and the rest as a frame with
/// an empty array); a run whose bytes are those of a run of the last context, or those `expect` was
/// given, is taken from there, any other is decoded on its own, as is a frame unlike the last one.
/// Decoding is a function of the bytes, so a piece decoded before decodes the same again. Anything out
/// of the ordinary — bytes that are not a compact object with one plainly spelled `workouts` key
/// holding an array, or a piece that does not decode — is decoded whole, so its error is exactly the
/// one `DocumentCoder` gives.
package struct ContextDecoder: Sendable {
    private var frame: (bytes: [UInt8], context: ApplicationContext)?
    /// The last context's runs with their bytes, in its order.
    private var runs: [(bytes: ArraySlice<UInt8>, run: WorkoutDocument)] = []
    /// Runs known by their compact encoding without a decode (`expect`), the newest last.
    private var expected: [(bytes: ArraySlice<UInt8>, run: WorkoutDocument)] = []
    /// How many expected runs are kept: a push normally brings an edit back before the next one.
    package static let keptExpected = 4
    /// How many contexts were decoded by their parts (the others were decoded whole).
    package private(set) var decodedByParts = 0
    /// How many runs those contexts held that had to be decoded (the rest were known by their bytes).
    package private(set) var runsDecoded = 0

    package init() {}

    /// Notes that `bytes` are `DocumentCoder.encodeCompact(run)`: a context carrying them takes `run`
    /// as it is. The watch sends each edited run as those bytes, and the phone's next push brings them
    /// back unchanged when the phone had nothing to add (`ContextEncoder` makes the same bytes); the
    /// compact encoding round-trips, so `run` is the value decoding them would give. The last
    /// `keptExpected` are kept.
    package mutating func expect(_ run: WorkoutDocument, encodedAs bytes: [UInt8]) {
        expected.append((bytes[...], run))
        if expected.count > Self.keptExpected { expected.removeFirst() }
    }

    package mutating func decode(_ bytes: [UInt8]) throws(DocumentError) -> ApplicationContext {
        if let context = decodeByParts(bytes) { return context }
        return try DocumentCoder.decode(ApplicationContext.self, from: bytes)
    }

    private mutating func decodeByParts(_ bytes: [UInt8]) -> ApplicationContext? {
        guard let layout = ContextLayout(bytes) else { return nil }
        let frameBytes = Array(bytes[..<layout.arrayStart]) + Array(bytes[layout.arrayEnd...])
        var context: ApplicationContext
        if let frame, frame.bytes == frameBytes {
            context = frame.context
        } else {
            guard let decoded = try? DocumentCoder.decode(ApplicationContext.self, from: frameBytes),
                decoded.workouts.isEmpty
            else { return nil }
            context = decoded
        }
        var decodedRuns: [(bytes: ArraySlice<UInt8>, run: WorkoutDocument)] = []
        decodedRuns.reserveCapacity(layout.elements.count)
        for (position, element) in layout.elements.enumerated() {
            let piece = bytes[element]
            // Runs mostly keep their place from one push to the next: that one is compared first.
            let known =
                position < runs.count && runs[position].bytes == piece
                ? runs[position].run
                : (runs.first { $0.bytes == piece } ?? decodedRuns.first { $0.bytes == piece }
                    ?? expected.last { $0.bytes == piece })?.run
            let run: WorkoutDocument
            if let known {
                run = known
            } else {
                guard
                    let decoded = WorkoutDocument.read(piece)
                        ?? (try? JSONDecoder().decode(WorkoutDocument.self, from: Data(piece)))
                else { return nil }
                run = decoded
                runsDecoded += 1
            }
            context.workouts.append(run)
            decodedRuns.append((piece, run))
        }
        do throws(DocumentError) {
            try context.validate()
        } catch {
            return nil
        }
        var bare = context
        bare.workouts = []
        frame = (frameBytes, bare)
        runs = decodedRuns
        decodedByParts += 1
        return context
    }
}

/// Where a compact context's `workouts` array is: `arrayStart..<arrayEnd` is its content (between the
/// brackets), `elements` each run's bytes. Nil unless the bytes are an object with no whitespace
/// between its keys and values, whose keys have no escapes, with one `workouts` key holding an array
/// with nothing but single commas between its elements.
///
/// It reads only the structure (strings with their escapes, brackets); whether the pieces are JSON,
/// and what they say, is left to the decoder they are then given to.
struct ContextLayout {
    var arrayStart: Int
    var arrayEnd: Int
    var elements: [Range<Int>] = []

    init?(_ bytes: [UInt8]) {
        var position = 0
        func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }
        guard take(UInt8(ascii: "{")) else { return nil }
        var found: (start: Int, end: Int, elements: [Range<Int>])?
        if take(UInt8(ascii: "}")) { return nil }
        while true {
            let keyStart = position
            guard take(UInt8(ascii: "\"")), let keyEnd = Self.stringEnd(bytes, from: position) else { return nil }
            let key = bytes[keyStart + 1..<keyEnd - 1]
            guard !key.contains(UInt8(ascii: "\\")) else { return nil }
            position = keyEnd
            guard take(UInt8(ascii: ":")) else { return nil }
            if key.elementsEqual("workouts".utf8) {
                guard found == nil, take(UInt8(ascii: "[")) else { return nil }
                let start = position
                var elements: [Range<Int>] = []
                if !take(UInt8(ascii: "]")) {
                    while true {
                        guard let end = Self.valueEnd(bytes, from: position) else { return nil }
                        elements.append(position..<end)
                        position = end
                        if take(UInt8(ascii: "]")) { break }
                        guard take(UInt8(ascii: ",")) else { return nil }
                    }
                }
                found = (start, position - 1, elements)
            } else {
                guard let end = Self.valueEnd(bytes, from: position) else { return nil }
                position = end
            }
            if take(UInt8(ascii: "}")) { break }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
        guard position == bytes.count, let found else { return nil }
        arrayStart = found.start
        arrayEnd = found.end
        elements = found.elements
    }

    /// The index just past the string whose opening quote is just before `start`.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""): return position + 1
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`: a string, an object or array (to its
    /// matching bracket, brackets inside strings aside), or anything else up to the next `,`, `]` or `}`.
    private static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, from: start + 1)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(bytes, from: position + 1) else { return nil }
                    position = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return position + 1 }
                default:
                    break
                }
                position += 1
            }
            return nil
        default:
            var position = start
            while position < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(bytes[position])
            {
                position += 1
            }
            return position > start ? position : nil
        }
    }
}
